"""What comes back from the list's emails: refused at sending, in the bounce mailbox or from a webhook,
all end in ``take``, which records them and pauses a campaign past a threshold, whichever way the news
came. Synchronous: callers on the event loop run it in a thread. Also ``keep_running``, the one
background loop of the senders, the notices and the mailbox reader (here, so mail and returns both see it)."""

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
    """The SMTP server did not take the message. ``permanent``: a 5xx refusal, never retried.
    ``about_recipient``: refused at RCPT or DATA, not the session: for a list email, a bounce."""

    def __init__(self, reason: str, *, permanent: bool, about_recipient: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.about_recipient = about_recipient


def at_sending(delivery_id: int, failure: DeliveryFailed) -> Report | None:
    """The bounce a list email the sender gave up on is: hard when permanent, else one soft bounce; a
    failure of the session (connection, TLS, login, our sender refused) is no bounce of the reader's."""
    if not failure.about_recipient:
        return None
    kind = bounces.HARD if failure.permanent else bounces.SOFT
    return Report(kind, failure.reason, tables.AT_SENDING, delivery_id=delivery_id)


async def take_at_sending(reports: list[Report], db_url: str | None, label: str) -> list[Recorded]:
    """``take`` for a sender, off its event loop; never fails it: the emails' outcomes are
    recorded already, so bounces that could not be are logged (and none is returned)."""
    if not reports:
        return []
    try:
        return await asyncio.to_thread(take, reports, db_url)
    except Exception as exc:  # noqa: BLE001 - a lost bounce is the lesser loss; the sender goes on
        jobs = ", ".join(f"#{report.delivery_id}" for report in reports)
        logger.error("%s: the bounces of deliveries %s could not be recorded (%s)", label, jobs, type(exc).__name__)
        return []


def take(
    reports: Iterable[Report],
    db_url: str | None = None,
    *,
    record: Callable[..., list[Recorded]] = bounce_records.record_all,
    limits: Settings | None = None,
    now: datetime | None = None,
) -> list[Recorded]:
    """Record ``reports`` and pause the campaigns they push past a threshold. ``record``: one transaction
    (the mailbox reader's keeps the message that carried them in it too, so that it counts once)."""
    recorded = record(reports=list(reports), db_url=db_url, now=now)
    for item in recorded:  # the address, as the operator must act on it
        if item.outcome in (bounce_records.MADE_BOUNCED, bounce_records.MADE_UNSUBSCRIBED):
            logger.warning("List: %s is %s now", item.email, item.outcome)
    try:
        _pause_campaigns({item.campaign_id for item in recorded if item.campaign_id is not None}, db_url, limits)
    except Exception as exc:  # noqa: BLE001 - recorded is recorded: a caller retrying would count it twice
        logger.error("Campaigns: the pause thresholds could not be checked (%s); the next report checks them", exc)
    return recorded


def _pause_campaigns(campaign_ids: Iterable[int], db_url: str | None, limits: Settings | None) -> None:
    limits = limits or settings.current()
    for campaign_id in sorted(campaign_ids):
        paused = bounce_records.pause_on_returns(
            campaign_id, limits.pause_bounce_rate, limits.pause_complaint_rate, db_url
        )
        if paused is not None:
            reason, slug = paused
            logger.error(
                "Campaign #%s (%s) paused: %s. Look at `publisher-gateway bounces`; "
                "`publisher-gateway announce %s` resumes it.",
                campaign_id,
                slug,
                reason,
                slug,
            )


# After an unexpected error a background loop waits this long, doubling up to the most.
TROUBLE_BACKOFF_S = (5.0, 300.0)


def trouble_delay(failures_in_a_row: int) -> float:
    """The wait after the n-th round in a row that ended in an unexpected error: 5 s doubling to 5 min."""
    first, most = TROUBLE_BACKOFF_S
    return min(first * 2 ** max(failures_in_a_row - 1, 0), most)


async def keep_running(
    step: Callable[[], Awaitable[object]],
    label: str,
    interval_s: float,
    wake: asyncio.Event | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Until cancelled: ``step``, then sleep until woken or ``interval_s`` has passed. Nothing but a cancel
    ends it: an error is logged and the loop goes on, after a growing pause so a fault does not spin."""
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
            # A cancel that arrived just as an SMTP reply did can be swallowed inside
            # aiosmtplib (asyncio.wait_for on Python 3.11): stop here all the same.
            raise asyncio.CancelledError
        try:
            async with asyncio.timeout(interval_s):  # not wait_for: on 3.11 it can swallow a cancel
                await wake.wait()
        except TimeoutError:
            pass
