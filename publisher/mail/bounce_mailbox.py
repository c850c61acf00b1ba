"""The bounce mailbox, read: what came back to ``PUBLISHER_BOUNCE_ADDRESS`` becomes bounces and
complaints (docs/mailing-list.md#bounces-and-complaints).

Every ``PUBLISHER_BOUNCE_POLL_S`` one worker of the whole site (a lease in the database,
storage/bounce_records.take_lease) reads ``PUBLISHER_BOUNCE_MAILBOX`` over IMAP:

- each message is classified (rules/reports.py): a delivery status notification, a
  feedback report (a complaint), an auto-reply, or none of these;
- a report is matched to its email by the VERP token it was sent to (signed: a forged
  one matches nothing), else by the Message-ID of the original it quotes, else by the
  failed recipient's address;
- a report is recorded with the message's digest in one transaction, then moved to
  ``PUBLISHER_BOUNCE_DONE_FOLDER``: a reader that dies between the two finds the digest
  next time and only moves it, so nothing is counted twice;
- an auto-reply, or a message it cannot classify, is left where it is, its unread state
  unchanged (it is read with BODY.PEEK), never deleted; ``publisher-gateway bounces``
  lists what was left.

One message that cannot be handled (a bug, a row that will not store) is logged and
left where it is; the mailbox or the database going away ends this read (every other
message would fail the same way), and the next one tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.parser
import email.policy
import email.utils
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import sqlalchemy

from publisher import storage
from publisher.config import settings
from publisher.config.settings import BounceSettings, MailSettings
from publisher.mail import outbox, returns
from publisher.mail.bounce_mailbox_client import MailboxClient, MailboxTrouble
from publisher.rules import bounces, reports
from publisher.storage import bounce_records
from publisher.storage.bounce_records import Recorded, Report

logger = logging.getLogger(__name__)
# flufl.bounce logs each detector that cannot read a message at ERROR, with a traceback; for
# a bounce mailbox that only means "not this format", and the message is then left unclassified.
logging.getLogger("flufl.bounce").setLevel(logging.CRITICAL)

LEASE_NAME = "bounce-mailbox"
# Longer than one read takes (IMAP_TIMEOUT_S per command at worst); renewed while it reads.
LEASE = timedelta(minutes=10)
IMAP_TIMEOUT_S = 30.0

__all__ = ["LEASE_NAME", "MailboxTrouble", "Reading", "read_once", "run_in_backend"]


@dataclass
class Reading:
    """What one read of the mailbox did."""

    messages: int = 0
    bounces: int = 0
    complaints: int = 0
    auto_replies: int = 0
    unclassified: int = 0
    moved: int = 0
    troubles: int = 0
    recorded: list[Recorded] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{self.messages} messages: {self.bounces} bounce reports and {self.complaints} complaints "
            f"recorded and moved ({self.moved} moved in all), {self.auto_replies} auto-replies and "
            f"{self.unclassified} unclassified left where they are"
            + (f", {self.troubles} could not be handled (see the log)" if self.troubles else "")
        )


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _sender(raw: bytes) -> str:
    head = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
    return email.utils.parseaddr(str(head.get("From", "")))[1] or str(head.get("From", ""))[:254]


def reports_in(report: reports.Report, mail: MailSettings, db_url: str | None = None) -> list[Report]:
    """The bounces or complaint a classified message reports, each tied to the email it is about
    when the report says which: the VERP token (trusted only when its signature holds), else the
    Message-ID of the quoted original; else by the address reported."""
    delivery_id, forged = _verp_delivery(report, mail)
    if forged:  # addressed to a token we never signed: it names no email of ours, nor anyone
        return []
    if delivery_id is None and report.original_message_id:
        delivery_id = bounce_records.delivery_by_message_id(report.original_message_id, db_url)
    if report.kind == reports.BOUNCE:
        if not report.failures:
            return []
        if delivery_id is not None:
            failure = max(report.failures, key=lambda item: item.kind == bounces.HARD)
            return [Report(failure.kind, failure.reason, storage.FROM_MAILBOX, delivery_id=delivery_id)]
        return [
            Report(failure.kind, failure.reason, storage.FROM_MAILBOX, email=failure.address)
            for failure in report.failures
        ]
    reason = "complaint: the reader reported the email as spam"
    if delivery_id is not None:
        return [Report(bounces.COMPLAINT, reason, storage.FROM_MAILBOX, delivery_id=delivery_id)]
    addresses = [failure.address for failure in report.failures] or list(report.original_to)
    return [Report(bounces.COMPLAINT, reason, storage.FROM_MAILBOX, email=address) for address in addresses]


def _verp_delivery(report: reports.Report, mail: MailSettings) -> tuple[int | None, bool]:
    """The email a report's VERP address names, and whether it bore a token that was not ours."""
    if mail.bounce_address is None:
        return None, False
    candidates = [*report.envelope_to, *([report.original_return_path] if report.original_return_path else [])]
    tokened = [address for address in candidates if bounces.has_verp_token(address, mail.bounce_address)]
    for address in tokened:
        delivery_id = bounces.read_verp(mail.list_secrets, address, mail.bounce_address)
        if delivery_id is not None:
            return delivery_id, False
    return None, bool(tokened)


def read_once(
    bounce: BounceSettings,
    mail: MailSettings,
    db_url: str | None = None,
    *,
    worker: str | None = None,
    clock: Callable[[], datetime] = storage.utc_now,
) -> Reading | None:
    """Read the mailbox once, now; None when another worker is reading it. Raises MailboxTrouble."""
    assert bounce.mailbox is not None  # callers read only a configured mailbox
    holder = worker or outbox.worker_name()
    if not bounce_records.take_lease(LEASE_NAME, holder, clock(), clock() + LEASE, db_url):
        return None
    reading = Reading()
    try:
        with MailboxClient(bounce.mailbox, ca_file=bounce.ca_file, timeout=IMAP_TIMEOUT_S) as box:
            renewed_at = clock()
            for uid in box.uids():
                if clock() - renewed_at > LEASE / 4:
                    if not bounce_records.take_lease(LEASE_NAME, holder, clock(), clock() + LEASE, db_url):
                        logger.warning("Bounce mailbox: another worker took over the reading")
                        break
                    renewed_at = clock()
                try:
                    _handle(box, uid, bounce, mail, db_url, reading, clock)
                except (MailboxTrouble, sqlalchemy.exc.SQLAlchemyError):
                    raise  # the mailbox or the database is away: no other message would fare better
                except Exception as exc:  # one message never stops the others
                    reading.troubles += 1
                    logger.error(
                        "Bounce mailbox: message UID %s could not be handled (%s: %s); it stays where it is",
                        uid,
                        type(exc).__name__,
                        exc,
                        exc_info=exc,
                    )
    finally:
        with contextlib.suppress(Exception):
            bounce_records.give_back_lease(LEASE_NAME, holder, db_url)
    returns.log(reading.recorded)
    campaigns = {item.campaign_id for item in reading.recorded if item.campaign_id is not None}
    returns.pause_campaigns(campaigns, db_url, limits=bounce)
    return reading


def _handle(
    box: MailboxClient,
    uid: int,
    bounce: BounceSettings,
    mail: MailSettings,
    db_url: str | None,
    reading: Reading,
    clock: Callable[[], datetime],
) -> None:
    raw = box.fetch(uid)
    if raw is None:  # gone meanwhile (someone else moved it)
        return
    reading.messages += 1
    key = digest(raw)
    before = bounce_records.message_outcome(key, db_url)
    if before in (bounce_records.AUTO_REPLY, bounce_records.UNCLASSIFIED):
        _left(reading, before)
        return
    if before == bounce_records.PROCESSED:  # recorded, then the reader stopped before moving it
        box.move(uid, bounce.done_folder)
        reading.moved += 1
        return
    report = reports.classify(raw)
    if report.kind in (reports.BOUNCE, reports.COMPLAINT_REPORT):
        items = reports_in(report, mail, db_url)
        recorded = bounce_records.record_message(
            key, bounce_records.PROCESSED, report.subject, _sender(raw), items, db_url, now=clock()
        )
        if recorded is not None:
            reading.recorded.extend(recorded)
            if report.kind == reports.BOUNCE:
                reading.bounces += 1
            else:
                reading.complaints += 1
        box.move(uid, bounce.done_folder)
        reading.moved += 1
        return
    outcome = bounce_records.AUTO_REPLY if report.kind == reports.AUTO_REPLY else bounce_records.UNCLASSIFIED
    bounce_records.record_message(key, outcome, report.subject, _sender(raw), (), db_url, now=clock())
    _left(reading, outcome)


def _left(reading: Reading, outcome: str) -> None:
    if outcome == bounce_records.AUTO_REPLY:
        reading.auto_replies += 1
    else:
        reading.unclassified += 1


async def run_in_backend(db_url: str | None = None) -> None:
    """The backend's lifespan task: read the bounce mailbox every ``PUBLISHER_BOUNCE_POLL_S``
    (one worker of the site at a time), when one is configured and the site sends the list's emails."""
    values = settings.current()
    bounce, mail = values.bounces, values.mail
    if not values.list_emails_on or mail is None or bounce.mailbox is None:
        return
    logger.info("Bounce mailbox: reading %s every %s s", bounce.mailbox.describe(), bounce.poll_s)
    while True:
        try:
            reading = await asyncio.to_thread(read_once, bounce, mail, db_url)
            if reading is not None and reading.messages:
                logger.info("Bounce mailbox: %s", reading)
        except MailboxTrouble as trouble:
            logger.warning("Bounce mailbox: %s; trying again in %s s", trouble, bounce.poll_s)
        except Exception as exc:
            logger.error(
                "Bounce mailbox: the read failed (%s); trying again in %s s",
                type(exc).__name__,
                bounce.poll_s,
                exc_info=exc,
            )
        await asyncio.sleep(bounce.poll_s)
