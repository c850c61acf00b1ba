"""When the site emails the publisher, and what it says (rules/notice_rules.py), without a server."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from publisher import returns
from publisher.config import settings
from publisher.content import books
from publisher.mail import notices
from publisher.returns import bounce_mailbox
from publisher.rules import notice_rules
from publisher.rules.notice_rules import PausedRelease, Snapshot, Week
from publisher.storage import visit_counts

MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
TUESDAY = MONDAY + timedelta(days=1)
SITE = "https://books.example.com"
WEEK = Week(new_readers=12, leavers=2, bounces=3, complaints=1, messages=4, releases_sent=1_234)


def kinds(snapshot: Snapshot) -> list[str]:
    return [notice.kind for notice in notice_rules.due(snapshot)]


def test_a_paused_release_says_why_and_how_to_resume_it_with_the_dashboards_link():
    paused = PausedRelease("Guinea Pig or Hamster?", "guinea-pig-or-hamster", "hard bounces at 6.2 % (over 5 %)")
    [notice] = notice_rules.due(Snapshot(now=TUESDAY, site_url=SITE, paused=(paused,)))
    assert (notice.kind, notice.period) == ("paused", "2026-12-01")
    assert notice.subject == "A release is paused: Guinea Pig or Hamster?"
    assert "hard bounces at 6.2 % (over 5 %)" in notice.body
    assert "publisher-gateway announce guinea-pig-or-hamster" in notice.body
    assert f"{SITE}/admin" in notice.body


def test_a_failing_email_or_an_unreadable_mailbox_is_told_only_after_an_hour():
    for after in (59, 60):
        since = TUESDAY - timedelta(minutes=after)
        snapshot = Snapshot(
            now=TUESDAY,
            site_url=SITE,
            failing_emails=2,
            failing_since=since,
            mailbox_failing_since=since,
            mailbox_error="cannot connect to imaps://bounces:***@mail.example.com/INBOX: Connection refused",
        )
        assert kinds(snapshot) == ([] if after < 60 else ["outbox", "mailbox"])
    [outbox, mailbox] = notice_rules.due(snapshot)
    assert outbox.subject == "2 email(s) of the site could not be sent for over an hour"
    assert "publisher-gateway outbox --retry" in outbox.body
    assert "Connection refused" in mailbox.body and "***" in mailbox.body


def test_the_summary_comes_on_mondays_with_the_weeks_figures_unless_it_is_off():
    assert kinds(Snapshot(now=MONDAY, site_url=SITE, week=WEEK)) == ["summary"]
    assert kinds(Snapshot(now=MONDAY, site_url=SITE, week=WEEK, summary_on=False)) == []
    assert kinds(Snapshot(now=TUESDAY, site_url=SITE, week=WEEK)) == []
    [summary] = notice_rules.due(Snapshot(now=MONDAY, site_url=SITE, week=WEEK))
    assert summary.period == "2026-11-30"
    for line in ("New readers (confirmed): 12", "Readers who left:        2", "Release emails sent:     1234"):
        assert line in summary.body
    assert "PUBLISHER_SUMMARY=off" in summary.body and "Next release" not in summary.body  # none forthcoming
    # The list alone: visits are not counted (PUBLISHER_VISITS=off).
    assert "Visits to the site: not counted (PUBLISHER_VISITS=off)." in summary.body.splitlines()
    assert "Visitors:" not in summary.body and "Buy button presses" not in summary.body
    [summary] = notice_rules.due(Snapshot(now=MONDAY, site_url=SITE, week=WEEK, next_release="Seal? Its email: …"))
    assert "Next release: Seal? Its email: …" in summary.body.splitlines()


def test_the_summary_tells_last_weeks_visitors_top_sources_and_buy_presses_per_book():
    week = dataclasses.replace(
        WEEK,
        visitors=1_480,
        views=5_210,
        top_sources=(("Instagram", 410), ("(direct)", 300), ("Google", 95)),
        buy_clicks=(("Guinea Pig or Hamster?", "www.amazon.com", 42), ("Word Search", "bookshop.example", 7)),
    )
    [summary] = notice_rules.due(Snapshot(now=MONDAY, site_url=SITE, week=week))

    for line in (
        "  New readers (confirmed): 12",  # the list's lines stay as they were
        "  Release emails sent:     1234",
        "  Visitors:                1480",
        "  Page views:              5210",
        "  Top sources (visitors):  Instagram 410, (direct) 300, Google 95",
        "  Buy button presses:      49",
        "    Guinea Pig or Hamster? at www.amazon.com: 42",
        "    Word Search at bookshop.example: 7",
    ):
        assert line in summary.body.splitlines(), line
    assert "not counted" not in summary.body
    assert summary.body.endswith(f"The dashboard: {SITE}/admin\n(PUBLISHER_SUMMARY=off stops this weekly email.)\n")
    [quiet] = notice_rules.due(Snapshot(now=MONDAY, site_url=SITE, week=dataclasses.replace(WEEK, visitors=0)))
    assert "  Top sources (visitors):  none" in quiet.body.splitlines()  # a quiet week says none
    assert "  Buy button presses:      0" in quiet.body.splitlines()


def test_buy_presses_read_from_the_counts_carry_the_books_title_and_the_store():
    book = books.BOOKS[0]
    visits = visit_counts.VisitWeek(
        visitors=30,
        views=90,
        bots=12,
        top_sources=(visit_counts.KeyCount("Instagram", 14, 9),),
        buys=(
            visit_counts.KeyCount("gone-book www.amazon.com", 1, 1),
            visit_counts.KeyCount(f"{book.slug} www.amazon.com", 5, 4),
        ),
    )
    week = notices.with_visits(WEEK, visits)

    assert (week.visitors, week.views, week.new_readers) == (30, 90, 12)
    assert week.top_sources == (("Instagram", 9),)  # visitors, not landings
    assert week.buy_clicks == ((book.title, "www.amazon.com", 5), ("gone-book", "www.amazon.com", 1))


@pytest.mark.parametrize("loop", ["notices", "bounce mailbox"])
def test_a_background_loop_goes_on_after_a_round_that_fails(monkeypatch, loop):
    rounds: list[int] = []

    def one_round(*args, **kwargs):
        rounds.append(1)
        if len(rounds) == 1:
            raise RuntimeError("a bug in one round")
        return [] if loop == "notices" else None

    mailbox = SimpleNamespace(describe=lambda: "imap://x", poll_s=0)
    values = SimpleNamespace(list_emails_on=True, mail=object(), bounce_mailbox=mailbox, bounce_poll_s=0)
    monkeypatch.setattr(settings, "current", lambda: values)
    monkeypatch.setattr(returns, "trouble_delay", lambda failures: 0)
    monkeypatch.setattr(notices, "check_once", one_round)
    monkeypatch.setattr(bounce_mailbox, "read_once", one_round)

    async def main() -> None:
        running = asyncio.create_task(
            notices.run_in_backend(interval_s=0) if loop == "notices" else bounce_mailbox.run_in_backend()
        )
        async with asyncio.timeout(30):
            while len(rounds) < 3:
                await asyncio.sleep(0.01)
        assert not running.done()
        running.cancel()

    asyncio.run(main())
