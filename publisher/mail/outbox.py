"""The durable outbox: every email the site owes is sent, eventually, once (docs/mailing-list.md says
the one window where it can send twice). A list email is built when its turn comes, so an address that
left meanwhile gets nothing; each worker's sender claims one job at a time under a lease."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy

from publisher import returns
from publisher.config import settings
from publisher.config.settings import PerProcess, Settings, site_url, worker_name
from publisher.content import books
from publisher.mail import mailer
from publisher.rules import list_rules
from publisher.rules.list_rules import ListStatus, is_latest_confirmation, link_second
from publisher.storage import queue, subscribers, tables

logger = logging.getLogger(__name__)

RETRY_DELAYS = tuple(timedelta(seconds=s) for s in (15, 60, 300, 900, 1800, 3600, 7200))
RETRY_FOR = timedelta(days=3)
# Longer than any one send can take (connect, TLS, AUTH, DATA: SMTP_TIMEOUT_S each at worst).
LEASE = timedelta(minutes=5)
POLL_INTERVAL_S = 5.0
# How long a worker keeps trying to record "sent" while the database is away (inside the lease).
MARK_SENT_FOR_S = 120.0
CONFIRMATION_WINDOW = timedelta(hours=1)  # the span of the site's ceiling on confirmations


def next_attempt(failed_attempts: int, now: datetime, give_up_at: datetime) -> datetime | None:
    """Short waits, then every two hours; None once the retry window is over (the last try falls on ``give_up_at``)."""
    if now >= give_up_at:
        return None
    return min(now + RETRY_DELAYS[min(failed_attempts, len(RETRY_DELAYS)) - 1], give_up_at)


async def settle(
    delivery: queue.ClaimedDelivery, failure: returns.DeliveryFailed, worker: str, now: datetime, db_url: str | None
) -> tuple[datetime | None, str]:
    """When it is tried again (None: failed for good), and the reason recorded."""
    when = None if failure.permanent else next_attempt(delivery.attempts, now, delivery.give_up_at)
    if when is not None:
        await asyncio.to_thread(queue.mark_retry, delivery.id, worker, when, failure.reason, db_url)
        return when, failure.reason
    reason = failure.reason
    if not failure.permanent:
        reason = f"gave up after {delivery.attempts} attempts over {RETRY_FOR.days} days: {failure.reason}"
    await asyncio.to_thread(queue.mark_failed, delivery.id, worker, reason, db_url)
    return None, reason


async def gave_up_stalled(delivery: queue.ClaimedDelivery, worker: str, db_url: str | None, who: str) -> bool:
    if delivery.stalled_claims < tables.MAX_STALLED_CLAIMS:
        return False
    await asyncio.to_thread(queue.mark_failed, delivery.id, worker, delivery.stalled_reason, db_url)
    logger.error("%s: delivery #%s %s", who, delivery.id, delivery.stalled_reason)
    return True


def unexpected(exc: BaseException) -> str:
    return f"could not be built or sent: {type(exc).__name__}: {str(exc).strip() or 'no details'}"


def job_for(settings: Settings) -> tables.Job:
    return tables.Job(message_id=mailer.new_message_id(settings), retry_for=RETRY_FOR)


class NothingToSend(Exception):
    """The job names no email that can be built (its row is gone): it fails, with why. Not LookupError:
    a KeyError from a bug while building must read as unexpected."""


class NoLongerWanted(Exception):
    """The address's place on the list changed since the email was queued: it is not sent."""


# The status a subscriber must still have when a list job's turn comes (a confirmation: or confirmed and
# asked to join the list too, from a book's waitlist).
_WANTED_WHILE = {tables.CONFIRMATION: ListStatus.PENDING, tables.WELCOME: ListStatus.CONFIRMED}


def email_for(
    delivery: queue.ClaimedDelivery, settings: Settings, now: datetime | None = None, db_url: str | None = None
) -> tuple[bytes, tuple[str, ...]]:
    """To whom (none: the publisher's inbox); a list email only while the address has the status it was queued for."""
    source, message_id = delivery.source, delivery.message_id
    if isinstance(source, tables.ContactMessage):
        return mailer.contact_email(settings, source, message_id), ()
    if isinstance(source, tables.PublisherNotice):
        return mailer.publisher_notice(settings, source, message_id), ()
    if not isinstance(source, tables.Subscriber):
        raise NothingToSend(f"the stored {delivery.kind} row it mails no longer exists")
    if delivery.kind == tables.SUBSCRIBER:
        return mailer.subscriber_notice(settings, source, message_id), ()
    wanted = _WANTED_WHILE.get(delivery.kind)
    if wanted is None:
        raise NothingToSend(f"no email is known for a {delivery.kind!r} job")
    asked = delivery.kind == tables.CONFIRMATION and source.book_updates == tables.ASKED_TO_JOIN
    if source.status != wanted and not (asked and source.status == ListStatus.CONFIRMED):
        raise NoLongerWanted(f"the address is {source.status} now, no longer {wanted}")
    if delivery.kind == tables.WELCOME:
        return mailer.welcome_email(settings, source, site_url(), message_id), (source.email,)
    confirmation_still_due(delivery, source, now or tables.utc_now())
    titles = waited_titles(source, db_url)
    return mailer.confirmation_email(settings, source, site_url(), message_id, titles), (source.email,)


def waited_titles(row: tables.Subscriber, db_url: str | None) -> list[str]:
    """A confirmed address asked only to join the list; a book no longer in the content, by its slug."""
    if row.status != ListStatus.PENDING or row.id is None:
        return []
    titles = {book.slug: book.title for book in books.BOOKS}
    return [titles.get(slug, slug) for slug in subscribers.waited_books(row.id, db_url)]


def confirmation_still_due(delivery: queue.ClaimedDelivery, row: tables.Subscriber, now: datetime) -> None:
    """A confirmation that waited (the hourly ceiling) goes only while it is the latest and its link works."""
    sent_at = row.confirmation_sent_at
    if sent_at is None or (
        delivery.created_at is not None and not is_latest_confirmation(delivery.created_at, sent_at, row.subscribed_at)
    ):
        raise NoLongerWanted("a newer confirmation for the address replaced it")
    if link_second(now) - link_second(sent_at) >= list_rules.CONFIRM_LINK_VALID_FOR.total_seconds():
        raise NoLongerWanted("its link expired while it waited (the site's hourly ceiling on confirmations)")


@dataclass(frozen=True)
class Outcome:
    delivery_id: int
    status: str  # tables.SENT, tables.PENDING (to retry), tables.FAILED or tables.SKIPPED
    detail: str | None = None


async def record_sent(
    delivery_id: int,
    note: str | None,
    clock: Callable[[], datetime],
    db_url: str | None = None,
    *,
    then_read: int | None = None,
    then_sending: int | None = None,
) -> str | None:
    """The server has it: keep trying to record that, inside the lease, so it is not sent again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MARK_SENT_FOR_S
    delay = 0.5
    while True:
        try:
            return await asyncio.to_thread(
                queue.mark_sent, delivery_id, clock(), note, db_url, then_read=then_read, then_sending=then_sending
            )
        except sqlalchemy.exc.SQLAlchemyError as exc:
            if loop.time() + delay > deadline:
                logger.error(
                    "Outbox: delivery #%s was sent but could not be recorded (%s); "
                    "it will be sent again when its lease ends",
                    delivery_id,
                    type(exc).__name__,
                )
                return tables.NOT_READ
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)


class Sender:
    def __init__(
        self,
        settings: Settings,
        db_url: str | None = None,
        clock: Callable[[], datetime] = tables.utc_now,
        worker: str | None = None,
    ):
        self.settings = settings
        self.db_url = db_url
        self.clock = clock
        self.worker = worker or worker_name()
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def send_next(self, only_ids: list[int] | None = None) -> Outcome | None:
        now = self.clock()
        held = await asyncio.to_thread(self._held_kinds, now)
        delivery = await asyncio.to_thread(queue.claim_due, self.worker, now, LEASE, self.db_url, only_ids, held)
        if delivery is None:
            return None
        if await gave_up_stalled(delivery, self.worker, self.db_url, "Outbox"):
            return Outcome(delivery.id, tables.FAILED, delivery.stalled_reason)
        try:
            message, recipients = await asyncio.to_thread(email_for, delivery, self.settings, now, self.db_url)
            # A list email's Return-Path names it (VERP), so a bounce arriving later finds its reader.
            envelope_from = mailer.return_path(self.settings, delivery.id) if recipients else None
            note = await mailer.send(message, self.settings, recipients, envelope_from)
        except NoLongerWanted as reason:
            await asyncio.to_thread(queue.mark_skipped, delivery.id, self.worker, str(reason), self.db_url)
            logger.info("Outbox: delivery #%s (%s) not sent: %s", delivery.id, delivery.kind, reason)
            return Outcome(delivery.id, tables.SKIPPED, str(reason))
        except returns.DeliveryFailed as failure:
            return await self._failed(delivery, failure)
        except Exception as exc:  # never tried again: the email as built is refused, or a bug
            foreseen = isinstance(exc, NothingToSend | mailer.UnsafeHeaders)
            why = str(exc) if foreseen else unexpected(exc)
            await asyncio.to_thread(queue.mark_failed, delivery.id, self.worker, why, self.db_url)
            logger.error(
                "Outbox: delivery #%s (%s) failed: %s",
                delivery.id,
                delivery.kind,
                why,
                exc_info=None if foreseen else exc,
            )
            return Outcome(delivery.id, tables.FAILED, why)
        await record_sent(delivery.id, note, self.clock, self.db_url)
        if note:
            logger.error("Outbox: delivery #%s (%s) %s", delivery.id, delivery.message_id, note)
        else:
            logger.info("Outbox: delivery #%s (%s) sent", delivery.id, delivery.message_id)
        return Outcome(delivery.id, tables.SENT, note)

    def _held_kinds(self, now: datetime) -> tuple[str, ...]:
        """The site-wide ceiling on confirmation emails, so a bot typing strangers' addresses cannot make the
        domain mail thousands: past it they wait (stored, never lost) until the hour's count drops."""
        sent = queue.sent_since(tables.CONFIRMATION, now - CONFIRMATION_WINDOW, self.db_url)
        return (tables.CONFIRMATION,) if sent >= self.settings.confirmations_per_hour else ()

    async def _failed(self, delivery: queue.ClaimedDelivery, failure: returns.DeliveryFailed) -> Outcome:
        when, reason = await settle(delivery, failure, self.worker, self.clock(), self.db_url)
        if when is None:
            if delivery.kind in tables.TO_SUBSCRIBER and (report := returns.at_sending(delivery.id, failure)):
                await returns.take_at_sending([report], self.db_url, "Outbox")
            logger.error(
                "Outbox: delivery #%s failed and will not be retried: %s "
                "(fix the cause, then `publisher-gateway outbox --retry`)",
                delivery.id,
                reason,
            )
            return Outcome(delivery.id, tables.FAILED, reason)
        logger.warning("Outbox: delivery #%s not sent (%s); next attempt at %s", delivery.id, reason, when.isoformat())
        return Outcome(delivery.id, tables.PENDING, reason)

    async def send_due(self, only_ids: list[int] | None = None) -> list[Outcome]:
        outcomes = []
        while (outcome := await self.send_next(only_ids)) is not None:
            outcomes.append(outcome)
        return outcomes

    async def run(self) -> None:
        assert self.settings.smtp_url is not None
        logger.info("Outbox: emailing the publisher through %s", self.settings.smtp_url.describe())
        await returns.keep_running(self.send_due, "Outbox", POLL_INTERVAL_S, self._wake)


running_sender: PerProcess[Sender] = PerProcess()


def wake() -> None:
    """A job was just stored: this process's sender sends it now rather than at the next poll."""
    if (sender := running_sender.peek()) is not None:
        sender.wake()


async def run_in_backend(db_url: str | None = None) -> None:
    mail = settings.current().mail
    if settings.current().gateway_url is not None or mail is None:
        return
    sender = Sender(mail, db_url)
    running_sender.set(sender)
    try:
        await sender.run()
    finally:
        running_sender.set(None)
