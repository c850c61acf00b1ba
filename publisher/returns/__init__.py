"""What comes back from the list's emails (at sending, in the mailbox, by webhook) all ends in ``take``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime

import sqlalchemy

from publisher.config import settings
from publisher.config.settings import Settings
from publisher.rules import bounces
from publisher.storage import bounce_records, tables
from publisher.storage.bounce_records import Recorded, Report

logger = logging.getLogger(__name__)


class DeliveryFailed(Exception):
    """``permanent``: a 5xx, never retried. ``about_recipient``: refused at RCPT or DATA: a bounce."""

    def __init__(self, reason: str, *, permanent: bool, about_recipient: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.about_recipient = about_recipient


def at_sending(delivery_id: int, failure: DeliveryFailed) -> Report | None:
    """A failure of the session (connection, TLS, login, our sender refused) is no bounce of the reader's."""
    if not failure.about_recipient:
        return None
    kind = bounces.HARD if failure.permanent else bounces.SOFT
    return Report(kind, failure.reason, tables.AT_SENDING, delivery_id=delivery_id)


async def take_at_sending(reports: list[Report], db_url: str | None, label: str) -> list[Recorded]:
    """Never fails the sender: the emails' outcomes are recorded already, so lost bounces are only logged."""
    if not reports:
        return []
    try:
        return await asyncio.to_thread(take, reports, db_url)
    except Exception as exc:  # noqa: BLE001 - a lost bounce is the lesser loss; the sender goes on
        jobs = ", ".join(f"#{report.delivery_id}" for report in reports)
        logger.error("%s: the bounces of deliveries %s could not be recorded (%s)", label, jobs, type(exc).__name__)
        return []


_PAUSED = (
    "Campaign #%s (%s) paused: %s. Look at `publisher-gateway bounces`; `publisher-gateway announce %s` resumes it."
)


def take(
    reports: Iterable[Report],
    db_url: str | None = None,
    *,
    record: Callable[..., list[Recorded]] = bounce_records.record_all,
    limits: Settings | None = None,
    now: datetime | None = None,
) -> list[Recorded]:
    """Synchronous. ``record``: one transaction (the mailbox reader's keeps the message in it too)."""
    recorded = record(reports=list(reports), db_url=db_url, now=now)
    for item in recorded:  # the address, as the operator must act on it
        if item.outcome in (bounce_records.MADE_BOUNCED, bounce_records.MADE_UNSUBSCRIBED):
            logger.warning("List: %s is %s now", item.email, item.outcome)
    try:
        rates = limits or settings.current()
        for campaign_id in sorted({item.campaign_id for item in recorded if item.campaign_id is not None}):
            paused = bounce_records.pause_on_returns(
                campaign_id, rates.pause_bounce_rate, rates.pause_complaint_rate, db_url
            )
            if paused is not None:
                reason, slug = paused
                logger.error(_PAUSED, campaign_id, slug, reason, slug)
    except Exception as exc:  # noqa: BLE001 - recorded is recorded: a caller retrying would count it twice
        logger.error("Campaigns: the pause thresholds could not be checked (%s); the next report checks them", exc)
    return recorded


TROUBLE_BACKOFF_S = (5.0, 300.0)  # after an unexpected error: 5 s, doubling up to 5 min


def trouble_delay(failures_in_a_row: int) -> float:
    first, most = TROUBLE_BACKOFF_S
    return min(first * 2 ** max(failures_in_a_row - 1, 0), most)


async def keep_running(
    step: Callable[[], Awaitable[object]],
    label: str,
    interval_s: float,
    wake: asyncio.Event | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Only a cancel ends it: an error is logged and the loop goes on, after a growing pause."""
    task = asyncio.current_task()
    wake = wake or asyncio.Event()
    troubles = 0
    while True:
        wake.clear()
        try:
            await step()
            troubles = 0
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("%s: the database is unavailable (%s); trying again shortly", label, type(exc).__name__)
        except Exception as exc:
            troubles += 1
            delay = trouble_delay(troubles)
            logger.error(
                "%s: unexpected error (%s); going on in %.0f s", label, type(exc).__name__, delay, exc_info=exc
            )
            await sleep(delay)
        if task is not None and task.cancelling():
            # aiosmtplib (wait_for on Python 3.11) can swallow a cancel that came with an SMTP reply.
            raise asyncio.CancelledError
        try:
            async with asyncio.timeout(interval_s):  # not wait_for: on 3.11 it can swallow a cancel
                await wake.wait()
        except TimeoutError:
            pass
