"""When the site emails the publisher, and what it says (rules/notice_rules.py), without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from publisher.rules import notice_rules
from publisher.rules.notice_rules import PausedRelease, Snapshot, Week

MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
TUESDAY = MONDAY + timedelta(days=1)
SITE = "https://books.example.com"
WEEK = Week(new_readers=12, leavers=2, bounces=3, complaints=1, messages=4, releases_sent=1_234)


def kinds(snapshot: Snapshot) -> list[str]:
    return [notice.kind for notice in notice_rules.due(snapshot)]


def test_nothing_wrong_on_a_tuesday_says_nothing():
    assert notice_rules.due(Snapshot(now=TUESDAY, site_url=SITE, week=WEEK)) == []


def test_a_paused_release_says_why_and_how_to_resume_it_with_the_dashboards_link():
    paused = PausedRelease("Guinea Pig or Hamster?", "guinea-pig-or-hamster", "hard bounces at 6.2 % (over 5 %)")
    [notice] = notice_rules.due(Snapshot(now=TUESDAY, site_url=SITE, paused=(paused,)))
    assert (notice.kind, notice.period) == ("paused", "2026-12-01")
    assert notice.subject == "A release is paused: Guinea Pig or Hamster?"
    assert "hard bounces at 6.2 % (over 5 %)" in notice.body
    assert "publisher-gateway announce guinea-pig-or-hamster" in notice.body
    assert f"{SITE}/admin" in notice.body


def test_a_failing_email_or_an_unreadable_mailbox_is_told_only_after_an_hour():
    minutes = [59, 60]
    for after in minutes:
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
    assert "PUBLISHER_SUMMARY=off" in summary.body
