"""What the dashboard reads (storage/dashboard.py): bounded lists, a prefix search taking wildcards as
typed, each message's email as the outbox has it; the search and the counts by day on PostgreSQL too."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy
from reflex_base import config as reflex_config

from publisher import content
from publisher.content import admin_copy
from publisher.storage import campaigns, dashboard, subscribers, tables
from publisher.storage.subscribers import SignUp
from publisher.storage.tables import Job, engine
from publisher.web.states import admin_state
from tests.databases import ON_BOTH_DATABASES
from tests.smtp import LIST_SECRET, POSTAL_ADDRESS
from tests.support import publisher_gateway


def join(db_url: str, email: str) -> None:
    request = SignUp(email=email, name="Jo Reader")
    subscribers.subscribe(request, None, db_url)


def message(db_url: str, subject: str, job: Job | None) -> int:
    body = tables.ContactBody("Jo Reader", "jo@example.com", subject, "Hello there, books!")
    return tables.store_message(body, db_url, job)


def test_the_latest_sign_ups_are_newest_first_and_at_most_the_limit(db_url):
    for number in range(5):
        join(db_url, f"reader{number}@example.com")
    latest = dashboard.latest_signups(limit=3, db_url=db_url)
    assert [line.email for line in latest] == ["reader4@example.com", "reader3@example.com", "reader2@example.com"]
    assert {line.status for line in latest} == {"pending"}


@ON_BOTH_DATABASES
def test_a_search_finds_addresses_by_their_beginning_whatever_the_case_and_wildcards_match_only_themselves(db_url):
    for email in ("ann@example.com", "Anna@example.com", "bob@example.com", "a_b@example.com", "a%c@example.com"):
        join(db_url, email)
    assert [line.email for line in dashboard.find_readers("AN", db_url=db_url)] == [
        "ann@example.com",
        "Anna@example.com",
    ]
    assert [line.email for line in dashboard.find_readers("a_", db_url=db_url)] == ["a_b@example.com"]
    assert [line.email for line in dashboard.find_readers("a%", db_url=db_url)] == ["a%c@example.com"]
    assert dashboard.find_readers("%", db_url=db_url) == []
    assert dashboard.find_readers("   ", db_url=db_url) == []
    assert len(dashboard.find_readers("a", limit=2, db_url=db_url)) == 2


def test_each_message_says_what_became_of_its_email_and_the_outbox_its_health(db_url):
    job = Job(message_id="<m1@books.example.com>", retry_for=timedelta(hours=1))
    waiting = message(db_url, "waiting", job)
    message(db_url, "stored only", None)
    sent = message(db_url, "sent", Job(message_id="<m2@books.example.com>", retry_for=timedelta(hours=1)))
    with engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.update(tables.Delivery).where(tables.Delivery.source_id == sent).values(status=tables.SENT)
        )
    lines = dashboard.latest_messages(db_url=db_url)
    assert [(line.subject, line.delivery) for line in lines] == [
        ("sent", "delivered"),
        ("stored only", "stored"),
        ("waiting", "waiting"),
    ]
    health = dashboard.outbox_health(db_url)
    assert (health.waiting, health.failing) == (1, 0)
    assert health.oldest_waiting_since is not None
    assert waiting


def key_of(db_url: str, email: str) -> str:
    return next(row.link_key for row in subscribers.list_subscribers(db_url=db_url) if row.email == email)


@ON_BOTH_DATABASES
def test_the_charts_count_confirmed_readers_per_day_and_sign_ups_against_leavers_per_week(db_url):
    today = tables.utc_now().replace(hour=12)
    for number, days_ago in enumerate((40, 20, 10)):  # each signs up and confirms that day
        then = today - timedelta(days=days_ago)
        request = SignUp(email=f"reader{number}@example.com", name="Jo Reader")
        subscribers.subscribe(request, None, db_url, now=then)
        subscribers.confirm(key_of(db_url, f"reader{number}@example.com"), None, None, db_url, now=then)
    subscribers.unsubscribe(key_of(db_url, "reader1@example.com"), "test", db_url, now=today - timedelta(days=5))

    series = dashboard.confirmed_per_day(today.date(), days=90, db_url=db_url)
    assert len(series) == 90 and series[0] == 0
    assert (series[-42], series[-41], series[-21], series[-11], series[-6], series[-1]) == (0, 1, 2, 3, 2, 2)
    weeks = dashboard.joined_and_left_per_week(today.date(), weeks=13, db_url=db_url)
    assert len(weeks) == 13
    assert {index: pair for index, pair in enumerate(weeks) if pair != (0, 0)} == {
        7: (1, 0),
        10: (1, 0),
        11: (1, 0),
        12: (0, 1),
    }


@ON_BOTH_DATABASES
def test_what_the_visits_led_to_is_sign_ups_confirmations_and_messages_on_each_day_zeros_included(db_url):
    today = tables.utc_now().replace(hour=0, minute=0, second=0, microsecond=0)
    before = today - timedelta(days=90) + timedelta(hours=23, minutes=59)  # the day before the 90: not read
    subscribers.subscribe(SignUp(email="early@example.com", name="Jo Reader"), None, db_url, now=before)
    for number, moment in enumerate(
        (today - timedelta(days=89), today - timedelta(days=3), today + timedelta(hours=23))
    ):
        subscribers.subscribe(SignUp(email=f"reader{number}@example.com", name="Jo Reader"), None, db_url, now=moment)
    subscribers.confirm(key_of(db_url, "reader1@example.com"), None, None, db_url, now=today - timedelta(days=2))
    for moment in (today - timedelta(days=3), today - timedelta(days=3, hours=-1), today - timedelta(seconds=1)):
        sent = message(db_url, "hello", None)
        with engine(db_url).begin() as connection:
            connection.execute(
                sqlalchemy.update(tables.ContactMessage)
                .where(tables.ContactMessage.id == sent)
                .values(received_at=moment)
            )
    days = dashboard.list_days(today.date(), 90, db_url)
    assert [day.day for day in days] == [today.date() - timedelta(days=89 - n) for n in range(90)]
    assert {
        89 - index: (day.signups, day.confirmations, day.messages)
        for index, day in enumerate(days)
        if day.signups or day.confirmations or day.messages
    } == {89: (1, 0, 0), 3: (1, 0, 2), 2: (0, 1, 0), 1: (0, 0, 1), 0: (1, 0, 0)}


def test_the_dashboard_and_the_command_line_announce_pause_and_resume_a_release_alike(db_url, monkeypatch):
    monkeypatch.setattr(reflex_config.get_config(), "db_url", db_url)  # the dashboard's actions use the site's
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("PUBLISHER_SMTP_URL", "smtp://127.0.0.1:2525")  # nothing is sent here: the outbox's workers send
    monkeypatch.setenv("PUBLISHER_NOTIFY_TO", "books@animals.example")
    monkeypatch.setenv("PUBLISHER_MAIL_FROM", "Animals We Confuse <site@animals.example>")
    monkeypatch.setenv("PUBLISHER_POSTAL_ADDRESS", POSTAL_ADDRESS)
    monkeypatch.setenv("PUBLISHER_LIST_SECRET", LIST_SECRET)
    for email in ("jo@example.com", "kim@example.com"):
        join(db_url, email)
        subscribers.confirm(key_of(db_url, email), None, None, db_url)
    join(db_url, "pending@example.com")
    book = content.BOOKS[0]

    def act(action: str) -> tuple[str, str | None]:
        said = admin_state._release_action(action, book.slug, "Ada")
        return said, getattr(campaigns.find_campaign(book.slug, db_url), "status", None)

    assert act(admin_state.ANNOUNCE) == (admin_copy.ANNOUNCED.format(title=book.title, readers="2"), "sending")
    assert act(admin_state.PAUSE) == (admin_copy.PAUSED.format(title=book.title, slug=book.slug), "paused")
    assert act(admin_state.RESUME) == (admin_copy.RESUMED.format(title=book.title), "sending")
    assert act(admin_state.RESUME) == (admin_copy.NOT_RESUMED.format(title=book.title), "sending")
    assert act(admin_state.ANNOUNCE) == (admin_copy.ALREADY_ANNOUNCED.format(title=book.title), "sending")
    paused = publisher_gateway(db_url, "pause", book.slug)
    assert f"`publisher-gateway announce {book.slug}` resumes it" in paused.stderr
    campaign = campaigns.find_campaign(book.slug, db_url)
    assert campaign is not None
    assert (campaign.status, campaign.paused_reason) == ("paused", "paused from the command line")
    again = publisher_gateway(db_url, "pause", book.slug, check=False)
    assert again.returncode == 1 and "has no campaign sending" in again.stderr
