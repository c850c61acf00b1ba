"""The site's emails to the publisher: queued once a day however often workers check, sent by the outbox."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta

import pytest

from publisher.config import settings
from publisher.content import books
from publisher.mail import notices, outbox
from publisher.storage import campaigns, notice_records, subscribers, tables, visit_counts
from publisher.storage.subscribers import SignUp
from tests.databases import ON_BOTH_DATABASES


@pytest.fixture
def mail(smtp_server, monkeypatch):
    for name, value in smtp_server.mail_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    return settings.current().mail


def paused_release(db_url: str) -> str:
    request = SignUp(email="jo@example.com", name="Jo Reader")
    subscribers.subscribe(request, None, db_url)
    subscribers.confirm(subscribers.list_subscribers(db_url=db_url)[0].link_key, None, None, db_url)
    slug = books.BOOKS[0].slug
    message_id = lambda reader: f"<r{reader}@test>"  # noqa: E731
    campaign = campaigns.create_campaign(slug, "New", message_id, tables.utc_now(), timedelta(days=1), db_url)
    assert campaign is not None and campaign.id is not None
    campaigns.set_campaign_status(campaign.id, tables.PAUSED, "hard bounces at 6.2 % (over 5 %)", db_url=db_url)
    return slug


@ON_BOTH_DATABASES
def test_a_paused_release_is_told_once_a_day_and_reaches_the_publishers_inbox(db_url, mail, smtp_server):
    slug = paused_release(db_url)
    now = tables.utc_now().replace(hour=12)
    while now.weekday() in (6, 0):  # neither it nor the next day a Monday: no summary in the way
        now += timedelta(days=1)
    assert notices.check_once(mail, db_url, now) == ["paused"]
    assert notices.check_once(mail, db_url, now + timedelta(hours=3)) == []  # the same day: nothing more
    assert notices.check_once(mail, db_url, now + timedelta(days=1)) == ["paused"]  # still paused the next day

    sender = outbox.Sender(mail, db_url, clock=lambda: now + timedelta(days=1, minutes=1))  # both due
    asyncio.run(sender.send_due())
    emails = [r for r in smtp_server.received if "A release is paused" in str(r.message["Subject"])]
    assert len(emails) == 2
    email = emails[0]
    assert email.rcpt_tos == list(mail.notify_to)
    assert "site@animals.example" in str(email.message["From"])
    body = email.message.get_content()
    assert "hard bounces at 6.2 % (over 5 %)" in body and f"publisher-gateway announce {slug}" in body


@ON_BOTH_DATABASES
def test_the_mailbox_failing_is_timed_from_its_first_failure_and_a_success_ends_it(db_url):
    start, mailbox = tables.utc_now(), notice_records.BOUNCE_MAILBOX
    notice_records.record_run(mailbox, "cannot connect: refused", start, db_url)
    notice_records.record_run(mailbox, "cannot connect: timed out", start + timedelta(minutes=30), db_url)
    status = notice_records.run_status(mailbox, db_url)
    assert status.failing_since is not None and abs(status.failing_since - start) < timedelta(seconds=1)
    assert (status.last_success_at, status.last_error) == (None, "cannot connect: timed out")
    notice_records.record_run(mailbox, None, start + timedelta(hours=2), db_url)
    status = notice_records.run_status(mailbox, db_url)
    assert (status.failing_since, status.last_error) == (None, None) and status.last_success_at is not None


def _count(day: date, kind: str, key: str, views: int, visitors: range) -> visit_counts.Batch:
    return visit_counts.Batch(
        views={(day, kind, key): views}, seen={(day, kind, key, n.to_bytes(16, "big")) for n in visitors}
    )


def test_the_monday_summary_tells_the_seven_days_visitors_sources_and_buy_presses(
    db_url, mail, smtp_server, monkeypatch
):
    book = books.BOOKS[1]
    monday = datetime(2026, 11, 30, 9, tzinfo=UTC)
    for day, kind, key, views, visitors in (
        (date(2026, 11, 22), "site", "", 50, range(40)),  # the Sunday before: not this week
        (date(2026, 11, 23), "site", "", 30, range(20)),
        (date(2026, 11, 29), "site", "", 12, range(5)),
        (date(2026, 11, 30), "site", "", 99, range(60)),  # today: not yet a whole day
        (date(2026, 11, 23), "source", "Instagram", 9, range(7)),
        (date(2026, 11, 29), "buy", f"{book.slug} www.amazon.com", 4, range(3)),
    ):
        visit_counts.flush(_count(day, kind, key, views, visitors), db_url=db_url)

    assert notices.check_once(mail, db_url, monday) == ["summary"]
    monkeypatch.setenv("PUBLISHER_VISITS", "off")
    off = notices.check_once(mail, db_url, monday + timedelta(days=7))
    asyncio.run(outbox.Sender(mail, db_url, clock=lambda: monday + timedelta(days=7, minutes=1)).send_due())

    bodies = [r.message.get_content() for r in smtp_server.received if r.message["Subject"] == "Your week on the list"]
    assert off == ["summary"] and len(bodies) == 2
    lines = bodies[0].splitlines()
    assert "  Visitors:                25" in lines
    assert "  Page views:              42" in lines
    assert "  Top sources (visitors):  Instagram 7" in lines
    assert f"    {book.title} at www.amazon.com: 4" in lines
    assert "Visits to the site: not counted (PUBLISHER_VISITS=off)." in bodies[1].splitlines()
    assert "Visitors:" not in bodies[1]
