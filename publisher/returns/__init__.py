"""What comes back from the list's emails: refused at sending, in the bounce mailbox or from a webhook,
all end in ``take``, which records them and pauses a campaign past a threshold, whichever way the news
came. Synchronous: callers on the event loop run it in a thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Protocol

from publisher.config import settings
from publisher.config.settings import BounceSettings
from publisher.rules import bounces
from publisher.storage import bounce_records, tables
from publisher.storage.bounce_records import Recorded, Report

logger = logging.getLogger(__name__)


class SendingFailure(Protocol):
    """mail/mailer.DeliveryFailed, as this package below mail/ knows it."""

    reason: str
    permanent: bool
    about_recipient: bool


def at_sending(delivery_id: int, failure: SendingFailure) -> Report | None:
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
    limits: BounceSettings | None = None,
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


def _pause_campaigns(campaign_ids: Iterable[int], db_url: str | None, limits: BounceSettings | None) -> None:
    limits = limits or settings.bounce_settings()
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
