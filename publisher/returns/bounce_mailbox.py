"""The bounce mailbox, read (docs/mailing-list.md, "A bounce mailbox (IMAP)"): one worker at a time,
under a lease; a report is taken before its message is moved, so a reader dying between the two only
moves it; a message that fails is recorded and left. Runs in a daemon thread: it never holds the exit."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.parser
import email.policy
import email.utils
import functools
import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy

from publisher import returns
from publisher.config import settings
from publisher.config.settings import Settings, worker_name
from publisher.returns.imap_client import MailboxClient, MailboxTrouble
from publisher.rules import bounces, form_fields, reports
from publisher.storage import bounce_records, notice_records, tables
from publisher.storage.bounce_records import MailboxPlace, Report

logger = logging.getLogger(__name__)
# flufl.bounce logs each detector that cannot read a message at ERROR, with a traceback; for
# a bounce mailbox that only means "not this format", and the message is then left unclassified.
logging.getLogger("flufl.bounce").setLevel(logging.CRITICAL)

LEASE_NAME = "bounce-mailbox"
# Longer than one message takes, many times over; renewed every quarter of it while a read goes on.
LEASE = timedelta(minutes=10)
# Why a message was left: shown by `publisher-gateway bounces`.
NAMES_NO_EMAIL_OF_OURS = "names no email this site sent"


@dataclass
class Reading:
    """What one read of the mailbox did."""

    messages: int = 0
    bounces: int = 0
    complaints: int = 0
    auto_replies: int = 0
    unclassified: int = 0
    unproven: int = 0
    too_large: int = 0
    moved: int = 0
    troubles: int = 0
    already_met: int = 0
    stopped: bool = False

    def __str__(self) -> str:
        return (
            f"{self.messages} new messages: {self.bounces} bounce reports and {self.complaints} complaints "
            f"recorded and moved ({self.moved} moved in all), {self.auto_replies} auto-replies, "
            f"{self.unclassified} unclassified, {self.unproven} that name no email this site sent and "
            f"{self.too_large} too large left where they are"
            + (f", {self.troubles} could not be handled (see `bounces`)" if self.troubles else "")
            + (f"; {self.already_met} met before and not fetched again" if self.already_met else "")
            + ("; stopped before the end (the site is stopping)" if self.stopped else "")
        )


def _sender(raw: bytes) -> str:
    """The ``From:`` address of a message, as text to store (cleaned by the storage layer)."""
    head = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
    written = str(head.get("From", ""))
    return email.utils.parseaddr(written)[1] or written[: form_fields.EMAIL_MAX]


def reports_in(message: reports.ClassifiedMessage, mail: Settings, db_url: str | None = None) -> list[Report]:
    """The bounce or complaint a message proves by its signed VERP token or its quoted original's
    Message-ID; an address a report merely names proves nothing (anyone can write it)."""
    delivery_id = _verp_delivery(message, mail)
    if delivery_id is None and message.original_message_id:
        named = [failure.address for failure in message.failures] or list(message.original_to)
        delivery_id = bounce_records.delivery_by_message_id(message.original_message_id, named, db_url)
    if delivery_id is None:
        return []
    if message.kind == reports.BOUNCE:
        if not message.failures:
            return []
        failure = max(message.failures, key=lambda item: item.kind == bounces.HARD)
        return [Report(failure.kind, failure.reason, tables.FROM_MAILBOX, delivery_id=delivery_id)]
    reason = "complaint: the reader reported the email as spam"
    return [Report(bounces.COMPLAINT, reason, tables.FROM_MAILBOX, delivery_id=delivery_id)]


def _verp_delivery(message: reports.ClassifiedMessage, mail: Settings) -> int | None:
    """The email a report's VERP address names, when we signed its token."""
    if mail.bounce_address is None:
        return None
    returned = [*message.envelope_to, *([message.original_return_path] if message.original_return_path else [])]
    for address in returned:
        delivery_id = bounces.read_verp(mail.list_secrets, address, mail.bounce_address)
        if delivery_id is not None:
            return delivery_id
    return None


def read_once(
    values: Settings,
    db_url: str | None = None,
    *,
    worker: str | None = None,
    clock: Callable[[], datetime] = tables.utc_now,
    stop: threading.Event | None = None,
) -> Reading | None:
    """Read the mailbox once; None when another worker is reading it. Raises MailboxTrouble or the
    database's error when either is away; ``stop`` ends the read after the message in hand."""
    mailbox, mail = values.bounce_mailbox, values.mail
    assert mailbox is not None and mail is not None  # callers read only a configured mailbox
    holder = worker or worker_name()
    if not bounce_records.take_lease(LEASE_NAME, holder, clock(), clock() + LEASE, db_url):
        return None
    reading = Reading()
    try:
        with _LeaseKeeper(holder, db_url, clock) as lease, _RunRecorded(db_url, clock):
            with MailboxClient(mailbox, ca_file=values.bounce_ca_file) as box:
                place = MailboxPlace(mailbox.folder, box.uidvalidity)
                read = _Read(box, place, values, mail, db_url, reading, clock)
                uids = box.uids()
                known = bounce_records.known_messages(place, uids, db_url, now=clock())
                reading.already_met = sum(outcome != bounce_records.PROCESSED for outcome in known.values())
                new = [uid for uid in uids if uid not in known]
                sizes = box.sizes(new)
                # Recorded before, but the reader stopped before moving it: only the move is left to do.
                unmoved = [uid for uid, outcome in known.items() if outcome == bounce_records.PROCESSED]
                for uid in sorted(unmoved + [uid for uid in new if uid in sizes]):
                    if stop is not None and stop.is_set():
                        reading.stopped = True
                        break
                    if lease.lost:
                        logger.warning("Bounce mailbox: another worker took over the reading")
                        break
                    _handle_one(read, uid, sizes.get(uid))
            bounce_records.prune_messages(clock(), db_url)
    finally:
        with contextlib.suppress(Exception):
            bounce_records.give_back_lease(LEASE_NAME, holder, db_url)
    return reading


class _RunRecorded:
    """Records how a read went (a success, or the mailbox's trouble) for the dashboard's Health and the
    publisher's notice; a database error is not recorded: it is away."""

    def __init__(self, db_url: str | None, clock: Callable[[], datetime]) -> None:
        self.db_url, self.clock = db_url, clock

    def __enter__(self) -> _RunRecorded:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        if kind is None or isinstance(exc, MailboxTrouble):
            error = exc.reason if isinstance(exc, MailboxTrouble) else None
            try:
                notice_records.record_run(notice_records.BOUNCE_MAILBOX, error, self.clock(), self.db_url)
            except sqlalchemy.exc.SQLAlchemyError as failure:
                logger.warning("Bounce mailbox: how the read went was not recorded (%s)", type(failure).__name__)


def _connection_lost(exc: sqlalchemy.exc.SQLAlchemyError) -> bool:
    """Whether a database error means the database is away (every message would fail alike),
    rather than that it refused what this one message brought (DataError, IntegrityError...)."""
    if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(
        exc, (sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError, sqlalchemy.exc.TimeoutError)
    )


@dataclass(frozen=True)
class _Read:
    """What every message of one read shares: the open mailbox and folder, the settings, the
    database, the tally and the clock."""

    box: MailboxClient
    place: MailboxPlace
    values: Settings
    mail: Settings
    db_url: str | None
    reading: Reading
    clock: Callable[[], datetime]

    def record(self, uid: int, outcome: str, **details: Any) -> None:
        """A message that carries no report to take: only its outcome is kept."""
        bounce_records.record_message(self.place, uid, outcome, db_url=self.db_url, now=self.clock(), **details)


def _handle_one(read: _Read, uid: int, size: int | None) -> None:
    """One message, whatever it holds: what fails here fails this message alone, recorded with
    its reason and left in the mailbox, unless the mailbox or the database is away."""
    try:
        _handle(read, uid, size)
    except MailboxTrouble:
        raise  # the mailbox is away: no other message would fare better
    except sqlalchemy.exc.SQLAlchemyError as exc:
        if _connection_lost(exc):
            raise
        _failed(read, uid, size, exc)
    except Exception as exc:  # noqa: BLE001 - one message never stops the others
        _failed(read, uid, size, exc)


def _failed(read: _Read, uid: int, size: int | None, exc: Exception) -> None:
    read.reading.troubles += 1
    reason = f"could not be handled ({type(exc).__name__}); it stays where it is"
    logger.error("Bounce mailbox: message UID %s %s", uid, reason, exc_info=exc)
    try:  # only what the site wrote itself: the message's own text may be what was refused
        read.record(uid, bounce_records.UNHANDLED, size=size, note=reason)
    except sqlalchemy.exc.SQLAlchemyError as again:
        if _connection_lost(again):
            raise
        logger.error("Bounce mailbox: message UID %s could not be recorded as failed either", uid, exc_info=again)


def _handle(read: _Read, uid: int, size: int | None) -> None:
    reading, box = read.reading, read.box
    if size is None:  # recorded as processed by an earlier read that stopped before moving it
        box.move(uid, read.values.bounce_done_folder)
        reading.moved += 1
        return
    reading.messages += 1
    if size > read.values.bounce_max_bytes:
        note = f"too large to read: {size:,} bytes, above PUBLISHER_BOUNCE_MAX_BYTES ({read.values.bounce_max_bytes:,})"
        read.record(uid, bounce_records.TOO_LARGE, size=size, note=note)
        reading.too_large += 1
        return
    raw = box.fetch(uid)
    if raw is None:  # gone meanwhile (someone else moved it)
        return
    message = reports.classify(raw)
    fetched = bounce_records.Fetched(hashlib.sha256(raw).hexdigest(), len(raw), message.subject, _sender(raw))
    if message.kind in (reports.BOUNCE, reports.COMPLAINT_REPORT):
        items = reports_in(message, read.mail, read.db_url)
        left_out = (
            f"named {message.recipients_named:,} recipients; the first {len(message.failures)} were read"
            if message.recipients_left_out
            else ""
        )
        if not items:
            note = NAMES_NO_EMAIL_OF_OURS + (f"; {left_out}" if left_out else "")
            read.record(uid, bounce_records.UNPROVEN, fetched=fetched, note=note)
            reading.unproven += 1
            return
        record = functools.partial(
            bounce_records.record_message, read.place, uid, bounce_records.PROCESSED, fetched=fetched, note=left_out
        )
        if returns.take(items, read.db_url, record=record, limits=read.values, now=read.clock()):
            if message.kind == reports.BOUNCE:
                reading.bounces += 1
            else:
                reading.complaints += 1
        box.move(uid, read.values.bounce_done_folder)
        reading.moved += 1
        return
    if message.kind == reports.AUTO_REPLY:
        read.record(uid, bounce_records.AUTO_REPLY, fetched=fetched)
        reading.auto_replies += 1
    else:
        read.record(uid, bounce_records.UNCLASSIFIED, fetched=fetched)
        reading.unclassified += 1


class _LeaseKeeper:
    """Renews the lease every quarter of LEASE from its own thread, so a long read keeps it and no
    other worker starts on the same messages; ``lost`` once another worker holds it."""

    def __init__(self, holder: str, db_url: str | None, clock: Callable[[], datetime]) -> None:
        self._holder, self._db_url, self._clock = holder, db_url, clock
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="bounce-mailbox-lease", daemon=True)
        self.lost = False

    def __enter__(self) -> _LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()

    def _renew(self) -> None:
        while not self._done.wait((LEASE / 4).total_seconds()):
            try:
                now = self._clock()
                if not bounce_records.take_lease(LEASE_NAME, self._holder, now, now + LEASE, self._db_url):
                    self.lost = True
                    return
            except Exception as exc:  # noqa: BLE001 - the database away: the read itself will say so
                logger.warning("Bounce mailbox: the lease could not be renewed (%s)", type(exc).__name__)


_Result = TypeVar("_Result")


async def _in_own_thread(function: Callable[..., _Result], *args: Any, **kwargs: Any) -> _Result:
    """``function`` in a daemon thread of its own, awaited. Not asyncio.to_thread: its executor is
    joined at exit, holding a stopping site past its 10-second window."""
    future: concurrent.futures.Future[_Result] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return  # cancelled before it started: the site is stopping
        try:
            future.set_result(function(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, whatever it is
            future.set_exception(exc)

    threading.Thread(target=run, name="bounce-mailbox", daemon=True).start()
    return await asyncio.wrap_future(future)


async def run_in_backend(db_url: str | None = None) -> None:
    """The backend's lifespan task: read the bounce mailbox every ``PUBLISHER_BOUNCE_POLL_S``
    (one worker of the site at a time), when one is configured and the site sends the list's emails."""
    values = settings.current()
    if not values.list_emails_on or values.mail is None or values.bounce_mailbox is None:
        return
    logger.info("Bounce mailbox: reading %s every %s s", values.bounce_mailbox.describe(), values.bounce_poll_s)
    stop = threading.Event()

    async def read() -> None:
        try:
            reading = await _in_own_thread(read_once, values, db_url, stop=stop)
        except MailboxTrouble as trouble:
            logger.warning("Bounce mailbox: %s; trying again in %s s", trouble, values.bounce_poll_s)
            return
        if reading is not None and (reading.messages or reading.moved):
            logger.info("Bounce mailbox: %s", reading)

    try:
        await returns.keep_running(read, "Bounce mailbox", values.bounce_poll_s)
    finally:
        stop.set()  # cancelled: the site is stopping, so the read in progress ends after its message
