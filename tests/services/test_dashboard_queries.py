"""What the dashboard reads (storage/dashboard.py): bounded lists, a prefix search taking wildcards as
typed, each message's email as the outbox has it; the search and the counts by day on PostgreSQL too."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, timedelta

import sqlalchemy
from reflex_base import config as reflex_config

from publisher.content import admin_copy, books
from publisher.mail import notices
from publisher.storage import campaigns, dashboard, subscribers, tables
from publisher.storage.subscribers import SignUp
from publisher.storage.tables import Job, engine
from publisher.web.states import admin_state
from tests import release_book
from tests.databases import ON_BOTH_DATABASES
from tests.doc_commands import block_under
from tests.services.test_embedded_gateway import MESSAGE
from tests.smtp import LIST_SECRET, POSTAL_ADDRESS
from tests.support import DOCS, publisher_gateway


def join(db_url: str, email: str) -> None:
    subscribers.subscribe(SignUp(email=email, name="Jo Reader"), None, db_url)


def message(db_url: str, subject: str, job: Job | None) -> int:
    return tables.store_message(MESSAGE.model_copy(update={"subject": subject}), db_url, job)


@ON_BOTH_DATABASES
def test_the_latest_sign_ups_come_newest_first_and_a_search_by_beginning_takes_wildcards_as_typed(db_url):
    for email in ("ann@example.com", "Anna@example.com", "bob@example.com", "a_b@example.com", "a%c@example.com"):
        join(db_url, email)
    latest = dashboard.latest_signups(limit=2, db_url=db_url)
    assert [(line.email, line.status) for line in latest] == [
        ("a%c@example.com", "pending"),
        ("a_b@example.com", "pending"),
    ]

    def found(typed: str) -> list[str]:
        return [line.email for line in dashboard.find_readers(typed, db_url=db_url)]

    assert found("AN") == ["ann@example.com", "Anna@example.com"]
    assert found("a_") == ["a_b@example.com"] and found("a%") == ["a%c@example.com"]  # wildcards as typed
    assert found("%") == found("   ") == []
    assert len(dashboard.find_readers("a", limit=2, db_url=db_url)) == 2


def test_each_message_says_what_became_of_its_email_and_the_outbox_its_health(db_url):
    message(db_url, "waiting", Job(message_id="<m1@books.example.com>", retry_for=timedelta(hours=1)))
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
    assert weeks == [(0, 0)] * 7 + [(1, 0), (0, 0), (0, 0), (1, 0), (1, 0), (0, 1)]  # (joined, left) per week


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
    book = books.BOOKS[0]

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


@ON_BOTH_DATABASES
def test_the_dashboard_and_the_command_line_show_move_hold_and_resume_a_forthcoming_books_send_alike(
    db_url, monkeypatch
):
    monkeypatch.setattr(reflex_config.get_config(), "db_url", db_url)  # the dashboard's reads use the site's
    book = release_book.test_book()  # 2 June 2031 at 09:00 in London: 08:00 UTC
    catalogue = (*(known for known in books.BOOKS if known.slug != book.slug), book)
    monkeypatch.setattr(books, "BOOKS", catalogue)
    for email in ("jo@example.com", "kim@example.com"):
        subscribers.wait(SignUp(email=email, name="Jo Reader"), book.slug, False, None, db_url)
    subscribers.confirm(key_of(db_url, "jo@example.com"), None, None, db_url)
    line = (
        "Its email: 2 June 2031 at {} BST (Europe/London), 2031-06-02 {} UTC "
        "({}). Waiting for it: 1 confirmed, 1 pending."
    )
    [listing] = block_under(DOCS / "mailing-list.md", "A forthcoming book's send").commands
    listed = publisher_gateway(db_url, *shlex.split(listing)[1:]).stdout
    assert listed == f"{book.slug}: {line.format('09:00', '08:00', 'not scheduled yet')}\n"
    campaigns.ensure_scheduled(book.slug, book.title, book.release.utc, db_url)  # as a running site does
    [row] = admin_state._forthcoming()
    assert (row["line"], row["action"]) == (line.format("09:00", "08:00", "scheduled"), admin_state.HOLD)
    assert row["alt"] == f"Sign-ups to {book.title}'s waitlist per day, the last 30 days: 2 in all, 2 today."
    monday = notices.snapshot(datetime(2031, 6, 2, 6, 0, tzinfo=UTC), db_url)  # the summary's next release
    assert monday.next_release == f"{book.title}. {row['line']}"

    def steer(*args: str) -> tuple[int, str]:
        result = publisher_gateway(db_url, "schedule", book.slug, *args, check=False)
        campaign = campaigns.find_campaign(book.slug, db_url)
        assert campaign is not None and campaign.due_at is not None
        return result.returncode, f"{result.stderr} {campaign.status} {tables.as_utc(campaign.due_at):%H:%M}"

    move, hold, resume = (  # as the docs write them, with this book's slug
        shlex.split(command.replace("SLUG", book.slug))[3:]
        for command in block_under(DOCS / "mailing-list.md", "Moving or holding a send").commands
    )
    moved = f"The send of {book.title} is moved to 2 June 2031 at 10:30 BST (Europe/London), 2031-06-02 09:30 UTC."
    assert steer(*move) == (0, f"publisher-gateway: {moved}\n moved 09:30")
    for refused, why in (
        ("2031-03-30 01:30", "2031-03-30 01:30 does not exist in Europe/London (the clocks skip it)"),
        ("2031-10-26 01:30", "2031-10-26 01:30 happens twice in Europe/London (the clocks go back)"),
        ("2020-01-01 10:00", "2020-01-01 10:00 in Europe/London has passed"),
        ("soon", "'soon' is not a time as YYYY-MM-DD HH:MM (in Europe/London)"),
    ):
        status, said = steer("--at", refused)
        assert status == 2 and why in said and said.endswith("moved 09:30"), said
    assert steer(*hold) == (0, f"publisher-gateway: The send of {book.title} is held.\n held 09:30")
    assert publisher_gateway(db_url, "schedule").stdout == f"{book.slug}: {line.format('10:30', '09:30', 'held')}\n"
    # The dashboard's actions, as the audit log names them (a move with its time).
    said = admin_state._release_action(admin_state.MOVE, f"{book.slug} 2031-06-02 07:00 UTC", "Ada")
    assert said.endswith("2 June 2031 at 08:00 BST (Europe/London), 2031-06-02 07:00 UTC.")
    assert steer()[1].endswith("held 07:00")  # a held send stays held when moved
    unheld = admin_state._release_action(admin_state.UNHOLD, book.slug, "Ada")
    assert steer(*hold)[0] == 0 and steer(*resume) == (0, f"publisher-gateway: {unheld}\n moved 07:00")

    campaigns.start_due(
        datetime(2031, 6, 2, 7, tzinfo=UTC), lambda reader: f"<r{reader}@test>", timedelta(days=1), db_url
    )
    refused = admin_state._release_action(admin_state.HOLD, book.slug, "Ada")  # started: nothing moves or holds it
    assert refused.endswith("nothing changed.") and steer(*hold) == (1, f"publisher-gateway: {refused}\n sending 07:00")
    assert publisher_gateway(db_url, "schedule").stdout.startswith("No forthcoming book")
    assert publisher_gateway(db_url, "schedule", books.BOOKS[0].slug, "--hold", check=False).returncode == 2
    assert {"--at", "--hold", "--resume"} <= set(publisher_gateway(db_url, "schedule", "--help").stdout.split())
