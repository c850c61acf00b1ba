"""The bounce mailbox, read by one worker at a time under a lease; a report is taken before its message
is moved, so a reader dying between the two only moves it; a message that fails is recorded and left."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
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
from publisher.rules import bounces, reports
from publisher.storage import bounce_records, notice_records, tables
from publisher.storage.bounce_records import MailboxPlace, Report

logger = logging.getLogger(__name__)
# flufl.bounce logs each detector that cannot read a message at ERROR: here that only means "not this format".
logging.getLogger("flufl.bounce").setLevel(logging.CRITICAL)

LEASE_NAME = "bounce-mailbox"
LEASE = timedelta(minutes=10)  # renewed every quarter of it while a read goes on
NAMES_NO_EMAIL_OF_OURS = "names no email this site sent"


@dataclass
class Reading:
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


def reports_in(message: reports.ClassifiedMessage, mail: Settings, db_url: str | None = None) -> list[Report]:
    """Proven by a signed VERP token or the original's Message-ID; a named address proves nothing."""
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
    if mail.bounce_address is None:
        return None
    returned = [*message.envelope_to, message.original_return_path or ""]
    jobs = (bounces.read_verp(mail.list_secrets, address, mail.bounce_address) for address in returned)
    return next((job for job in jobs if job is not None), None)


def read_once(
    values: Settings,
    db_url: str | None = None,
    *,
    worker: str | None = None,
    clock: Callable[[], datetime] = tables.utc_now,
    stop: threading.Event | None = None,
) -> Reading | None:
    """None when another worker is reading it; ``stop`` ends the read after the message in hand."""
    mailbox, mail = values.bounce_mailbox, values.mail
    assert mailbox is not None and mail is not None  # callers read only a configured mailbox
    holder = worker or worker_name()
    if not bounce_records.take_lease(LEASE_NAME, holder, clock(), clock() + LEASE, db_url):
        return None
    reading = Reading()
    try:
        with _LeaseKeeper(holder, db_url, clock) as lease:
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
    except MailboxTrouble as trouble:
        _record_run(trouble.reason, db_url, clock)
        raise
    else:
        _record_run(None, db_url, clock)
    finally:
        with contextlib.suppress(Exception):
            bounce_records.give_back_lease(LEASE_NAME, holder, db_url)
    return reading


def _record_run(error: str | None, db_url: str | None, clock: Callable[[], datetime]) -> None:
    """For the dashboard and the notices; a database error is not recorded: it is away."""
    try:
        notice_records.record_run(notice_records.BOUNCE_MAILBOX, error, clock(), db_url)
    except sqlalchemy.exc.SQLAlchemyError as failure:
        logger.warning("Bounce mailbox: how the read went was not recorded (%s)", type(failure).__name__)


def _connection_lost(exc: sqlalchemy.exc.SQLAlchemyError) -> bool:
    """Away (every message would fail alike), rather than refusing this one message's data."""
    away = (sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError, sqlalchemy.exc.TimeoutError)
    return isinstance(exc, away) or (isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.connection_invalidated)


@dataclass(frozen=True)
class _Read:
    box: MailboxClient
    place: MailboxPlace
    values: Settings
    mail: Settings
    db_url: str | None
    reading: Reading
    clock: Callable[[], datetime]

    def record(self, uid: int, outcome: str, **details: Any) -> None:
        bounce_records.record_message(self.place, uid, outcome, db_url=self.db_url, now=self.clock(), **details)


def _handle_one(read: _Read, uid: int, size: int | None) -> None:
    """What fails here fails this message alone, unless the mailbox or the database is away."""
    try:
        _handle(read, uid, size)
    except MailboxTrouble:
        raise  # the mailbox is away: no other message would fare better
    except Exception as exc:  # one message never stops the others
        if isinstance(exc, sqlalchemy.exc.SQLAlchemyError) and _connection_lost(exc):
            raise
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
    fetched = bounce_records.Fetched(hashlib.sha256(raw).hexdigest(), len(raw), message.subject, message.sender)
    if message.kind in (reports.BOUNCE, reports.COMPLAINT_REPORT):
        items = reports_in(message, read.mail, read.db_url)
        left_out = (
            f"named {message.recipients_named:,} recipients; the first {len(message.failures)} were read"
            if message.recipients_named > len(message.failures)
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


class _LeaseKeeper(contextlib.AbstractContextManager["_LeaseKeeper"]):
    """From its own thread, so one long message keeps the lease; ``lost`` once another worker holds it."""

    def __init__(self, holder: str, db_url: str | None, clock: Callable[[], datetime]) -> None:
        self._holder, self._db_url, self._clock = holder, db_url, clock
        self._done = threading.Event()
        self.lost = False
        threading.Thread(target=self._renew, name="bounce-mailbox-lease", daemon=True).start()

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
    """Not asyncio.to_thread: its executor is joined at exit, holding a stopping site past its 10 s window."""
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
    """The backend's lifespan task, when a mailbox is configured and the site sends the list's emails."""
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
