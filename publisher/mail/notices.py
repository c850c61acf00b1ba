"""The site's emails to the publisher, through the outbox: durable, retried, one of each kind a day."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime

from publisher import returns
from publisher.config import settings
from publisher.config.settings import Settings
from publisher.content.books import book_by_slug
from publisher.mail import outbox
from publisher.rules import notice_rules
from publisher.storage import dashboard, notice_records, tables, visit_counts

logger = logging.getLogger(__name__)

CHECK_INTERVAL_S = 300


def snapshot(now: datetime, db_url: str | None = None) -> notice_rules.Snapshot:
    values = settings.current()
    paused = []
    for slug, reason in notice_records.paused_campaigns(db_url):
        book = book_by_slug(slug)
        paused.append(notice_rules.PausedRelease(book.title if book is not None else slug, slug, reason))
    failing, since = notice_records.failing_emails(db_url)
    mailbox = (
        notice_records.run_status(notice_records.BOUNCE_MAILBOX, db_url)
        if values.bounce_mailbox is not None
        else notice_records.RunStatus(None, None, None)
    )
    week, next_release = None, ""
    if values.summary_on and notice_rules.is_summary_day(now):
        week = notice_records.week(now, db_url)
        if values.visits_on:
            week = with_visits(week, visit_counts.week(now.date(), db_url))
        for send in dashboard.scheduled_sends(now, db_url)[:1]:
            next_release = f"{send.book.title}. {send.words}"
    return notice_rules.Snapshot(
        now=now,
        site_url=settings.site_url(),
        paused=tuple(paused),
        failing_emails=failing,
        failing_since=since,
        mailbox_failing_since=mailbox.failing_since,
        mailbox_error=mailbox.last_error or "",
        summary_on=values.summary_on,
        week=week,
        next_release=next_release,
    )


def with_visits(week: notice_rules.Week, visits: visit_counts.VisitWeek) -> notice_rules.Week:
    buys = []
    for count in visits.buys:
        slug, _, store = count.key.partition(" ")
        book = book_by_slug(slug)
        buys.append((book.title if book is not None else slug, store, count.views))
    return dataclasses.replace(
        week,
        visitors=visits.visitors,
        views=visits.views,
        top_sources=tuple((source.key, source.visitors) for source in visits.top_sources),
        buy_clicks=tuple(sorted(buys, key=lambda buy: -buy[2])),
    )


def check_once(mail: Settings, db_url: str | None = None, now: datetime | None = None) -> list[str]:
    """The kinds queued now."""
    now = now or tables.utc_now()
    queued = []
    for notice in notice_rules.due(snapshot(now, db_url)):
        if notice_records.queue_notice(
            notice.kind, notice.period, notice.subject, notice.body, outbox.job_for(mail), now, db_url
        ):
            queued.append(notice.kind)
    if queued:
        logger.info("Emailing the publisher: %s", ", ".join(queued))
    return queued


async def run_in_backend(
    db_url: str | None = None, clock: Callable[[], datetime] = tables.utc_now, interval_s: float = CHECK_INTERVAL_S
) -> None:
    mail = settings.current().mail
    if not settings.current().list_emails_on or mail is None:
        return

    async def check() -> None:
        if await asyncio.to_thread(check_once, mail, db_url, clock()):
            outbox.wake()

    await returns.keep_running(check, "Emails to the publisher", interval_s)
