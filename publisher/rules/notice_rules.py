"""When the site writes to the publisher, and what it says. Nobody watches the dashboard all day: a trouble
is emailed at most once a day per kind while it lasts, and a summary on Mondays."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from publisher.content import notice_copy

PAUSED, OUTBOX, MAILBOX, SUMMARY = "paused", "outbox", "mailbox", "summary"
TROUBLE_FOR = timedelta(hours=1)  # how long a failure lasts before the publisher is told


@dataclass(frozen=True)
class PausedRelease:
    title: str
    slug: str
    reason: str


@dataclass(frozen=True)
class Week:
    new_readers: int
    leavers: int
    bounces: int
    complaints: int
    messages: int
    releases_sent: int
    visitors: int | None = None  # None: the site does not count visits (PUBLISHER_VISITS=off)
    views: int = 0
    top_sources: tuple[tuple[str, int], ...] = ()  # (source, visitors), most first
    buy_clicks: tuple[tuple[str, str, int], ...] = ()  # (book title, store host, presses), most first


@dataclass(frozen=True)
class Snapshot:
    now: datetime
    site_url: str
    paused: tuple[PausedRelease, ...] = ()
    failing_emails: int = 0
    failing_since: datetime | None = None  # the oldest unsent email that has failed
    mailbox_failing_since: datetime | None = None
    mailbox_error: str = ""
    summary_on: bool = True
    week: Week | None = None  # read only on Mondays
    next_release: str = ""  # the soonest forthcoming book, its send and waitlist in words (read with the week)


@dataclass(frozen=True)
class Notice:
    kind: str
    period: str  # the day (YYYY-MM-DD) it belongs to: one of each kind per period
    subject: str
    body: str = field(repr=False)


def is_summary_day(moment: datetime) -> bool:
    return moment.weekday() == 0  # Monday


def due(snapshot: Snapshot) -> list[Notice]:
    """The caller sends each once per its period."""
    now, today = snapshot.now, date.isoformat(snapshot.now.date())
    dashboard = notice_copy.DASHBOARD_LINE.format(dashboard=f"{snapshot.site_url.rstrip('/')}/admin")
    notices = []
    if snapshot.paused:
        releases = "\n\n".join(
            notice_copy.PAUSED_RELEASE.format(title=release.title, reason=release.reason, slug=release.slug)
            for release in snapshot.paused
        )
        subject = notice_copy.PAUSED_SUBJECT.format(titles=", ".join(release.title for release in snapshot.paused))
        notices.append(Notice(PAUSED, today, subject, notice_copy.PAUSED_INTRO + releases + dashboard))
    failing, count = snapshot.failing_since, snapshot.failing_emails
    if count and failing is not None and now - failing >= TROUBLE_FOR:
        body = notice_copy.OUTBOX_BODY.format(count=count, since=f"{failing:%Y-%m-%d %H:%M}")
        notices.append(Notice(OUTBOX, today, notice_copy.OUTBOX_SUBJECT.format(count=count), body + dashboard))
    unread = snapshot.mailbox_failing_since
    if unread is not None and now - unread >= TROUBLE_FOR:
        body = notice_copy.MAILBOX_BODY.format(
            since=f"{unread:%Y-%m-%d %H:%M}", error=snapshot.mailbox_error or notice_copy.NO_REASON
        )
        notices.append(Notice(MAILBOX, today, notice_copy.MAILBOX_SUBJECT, body + dashboard))
    if snapshot.summary_on and snapshot.week is not None and is_summary_day(now):
        week = snapshot.week
        body = notice_copy.SUMMARY_BODY.format(**dataclasses.asdict(week), visits=_visits_lines(week))
        if snapshot.next_release:
            body += notice_copy.SUMMARY_NEXT_RELEASE.format(release=snapshot.next_release)
        notices.append(Notice(SUMMARY, today, notice_copy.SUMMARY_SUBJECT, body + dashboard + notice_copy.SUMMARY_OFF))
    return notices


def _visits_lines(week: Week) -> str:
    if week.visitors is None:
        return notice_copy.SUMMARY_VISITS_OFF
    sources = ", ".join(
        notice_copy.SUMMARY_SOURCE.format(source=source, visitors=visitors) for source, visitors in week.top_sources
    )
    buys = "".join(
        notice_copy.SUMMARY_BUY_LINE.format(title=title, store=store, presses=presses)
        for title, store, presses in week.buy_clicks
    )
    return notice_copy.SUMMARY_VISITS.format(
        visitors=week.visitors,
        views=week.views,
        sources=sources or notice_copy.SUMMARY_NONE,
        presses=sum(presses for _, _, presses in week.buy_clicks),
        buy_lines=buys,
    ).rstrip("\n")
