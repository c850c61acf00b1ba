"""What comes back from the list's emails: bounces and complaints, taken in one place.

They arrive three ways, and all three end in ``take``:

- **at sending**: the SMTP server refuses a reader (``at_sending``, ``take_at_sending``,
  called by mail/outbox.py and mail/campaign.py);
- **the bounce mailbox**: ``bounce_mailbox.py`` reads ``PUBLISHER_BOUNCE_MAILBOX`` over IMAP
  (``imap_client.py``, its own IMAP session) and classifies each message (rules/reports.py);
- **a provider's webhook**: server/bounce_hook.py is the HTTP door; ``webhook.py`` reads
  the provider's body.

``take`` records the reports with their readers in one transaction (storage/bounce_records.py),
logs each reader whose place on the list changed, then checks every campaign they touched
against the pause thresholds (``PUBLISHER_PAUSE_BOUNCE_RATE``, ``PUBLISHER_PAUSE_COMPLAINT_RATE``),
so a release that turns out to reach dead addresses or annoyed readers stops itself, whichever
way the news came. Synchronous: callers on the event loop run it in a thread.

The package sits below mail/ (whose senders call it) and above storage/; the rules (what
is hard, when soft bounces add up, when a campaign pauses) stay in rules/bounces.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from publisher import storage
from publisher.config import settings
from publisher.config.settings import BounceSettings
from publisher.rules import bounces
from publisher.storage import bounce_records
from publisher.storage.bounce_records import Fetched, MailboxPlace, Recorded, Report

logger = logging.getLogger(__name__)


class SendingFailure(Protocol):
    """What the sender says of an email the SMTP server did not take (mail/mailer.DeliveryFailed)."""

    reason: str
    permanent: bool  # a 5xx refusal: never retried
    about_recipient: bool  # refused the reader (at RCPT or DATA), not the session


def at_sending(delivery_id: int, failure: SendingFailure) -> Report | None:
    """The bounce a list email the sender gave up on is: a permanent refusal of the reader
    is hard, a temporary one the retries gave up on one soft bounce. A failure of the session
    (connection, TLS, login, our sender refused) is no bounce of the reader's."""
    if not failure.about_recipient:
        return None
    kind = bounces.HARD if failure.permanent else bounces.SOFT
    return Report(kind, failure.reason, storage.AT_SENDING, delivery_id=delivery_id)


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


@dataclass(frozen=True)
class InMailbox:
    """The bounce mailbox message reports came in: recorded in their transaction, so that a
    message read twice (two workers, a reader that died before moving it) counts once."""

    place: MailboxPlace
    uid: int
    fetched: Fetched
    note: str = ""


def take(
    reports: Iterable[Report],
    db_url: str | None = None,
    *,
    message: InMailbox | None = None,
    limits: BounceSettings | None = None,
    now: datetime | None = None,
) -> list[Recorded]:
    """Record ``reports`` (one transaction) and pause the campaigns they push past a threshold.

    With ``message``, the mailbox message is recorded with them; none is returned when it was
    recorded before (storage/bounce_records.record_message).
    """
    if message is None:
        recorded = bounce_records.record_all(list(reports), db_url, now=now)
    else:
        recorded = bounce_records.record_message(
            message.place,
            message.uid,
            bounce_records.PROCESSED,
            fetched=message.fetched,
            note=message.note,
            reports=reports,
            db_url=db_url,
            now=now,
        )
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
        reason = bounce_records.pause_on_returns(
            campaign_id, limits.pause_bounce_rate, limits.pause_complaint_rate, db_url
        )
        if reason is not None:
            campaign = storage.get_campaign(campaign_id, db_url)
            slug = campaign.book_slug if campaign else "SLUG"
            logger.error(
                "Campaign #%s (%s) paused: %s. Look at `publisher-gateway bounces`; "
                "`publisher-gateway announce %s` resumes it.",
                campaign_id,
                slug,
                reason,
                slug,
            )
