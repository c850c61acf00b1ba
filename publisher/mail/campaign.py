"""A release told to the list, in batches over one SMTP connection (docs/mailing-list.md, "Announcing a
release"). The next envelope opens while the previous send is recorded, but its data goes only after the
record, so a sender killed mid-send duplicates at most one email."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from publisher import returns
from publisher.config import settings
from publisher.config.settings import Settings, worker_name
from publisher.content import books
from publisher.content.models import Book
from publisher.mail import mailer, outbox, release_email
from publisher.rules import list_rules, release_rules
from publisher.rules.list_rules import ListStatus
from publisher.storage import bounce_records, campaigns, queue, subscribers, tables

logger = logging.getLogger(__name__)

# A dead sender's jobs wait at most this long for another (renewed while a batch is sent).
LEASE = timedelta(seconds=60)
# Failures in a row that pause a campaign: a provider refusing everything, not a few bad addresses.
PAUSE_AFTER = 10
BATCH_MAX = 50
BATCH_SECONDS = 5.0  # a batch is about this long at the throttle's pace


def reserve_slots(next_free: datetime | None, now: datetime, count: int, rate: float) -> tuple[datetime, datetime]:
    """From the site's next free slot, never in the past: an idle site saves up no burst."""
    if rate <= 0:
        return now, now
    first = max(next_free or now, now)
    return first, first + timedelta(seconds=count / rate)


def slot_time(first: datetime, index: int, rate: float) -> datetime:
    return first if rate <= 0 else first + timedelta(seconds=index / rate)


def batch_size(rate: float) -> int:
    """At most ``BATCH_MAX``: the most a dead sender holds."""
    if rate <= 0:
        return BATCH_MAX
    return max(1, min(BATCH_MAX, int(rate * BATCH_SECONDS)))


@dataclass
class FailureStreak:
    """Failures since the last success; ``failure`` says when to pause. Its bounces wait for a success: a
    streak that pauses is the server's fault (550 to every reader), not the readers'."""

    limit: int = PAUSE_AFTER
    ids: list[int] = field(default_factory=list)
    bounces: list[bounce_records.Report] = field(default_factory=list)

    def success(self) -> list[bounce_records.Report]:
        self.ids.clear()
        return self.believe()

    def believe(self) -> list[bounce_records.Report]:
        """Its bounces so far, to record (after a success, or as the sender stops: they must not be lost)."""
        believed, self.bounces = self.bounces, []
        return believed

    def failure(self, delivery_id: int, bounce: bounce_records.Report | None = None) -> bool:
        self.ids.append(delivery_id)
        if bounce is not None:
            self.bounces.append(bounce)
        return len(self.ids) >= self.limit

    def forget(self) -> None:
        """The campaign paused on the streak: its failures were not the readers'."""
        self.ids.clear()
        self.bounces.clear()


def dead_workers(holders: list[str], host: str, alive: Callable[[int], bool]) -> list[str]:
    """Holders are ``host:pid:tag``."""
    dead = []
    for holder in holders:
        holder_host, _, rest = holder.partition(":")
        pid = rest.partition(":")[0]
        if holder_host == host and pid.isdigit() and not alive(int(pid)):
            dead.append(holder)
    return dead


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def free_dead_leases(db_url: str | None = None) -> int:
    dead = dead_workers(queue.lease_holders(db_url), socket.gethostname(), process_alive)
    return queue.release_leases_of(dead, db_url)


class Paused(Exception):
    """The campaign was paused: too many failures in a row, or its bounces."""


class LeaseLost(Exception):
    """Some of the batch's jobs went to another sender (their lease ran out): stop, or both would send."""


class ReleaseSender:
    def __init__(
        self,
        mail: Settings,
        db_url: str | None = None,
        *,
        clock: Callable[[], datetime] = tables.utc_now,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        worker: str | None = None,
        site: str | None = None,
    ):
        self.mail = mail
        self.db_url = db_url
        self.clock = clock
        self.sleep = sleep
        self.worker = worker or worker_name()
        self.site = site or settings.site_url()
        self.session = mailer.SmtpSession(mail)
        self.streak = FailureStreak()
        self._campaigns: dict[int, tables.Campaign | None] = {}
        self._emails: dict[int, release_email.PreparedRelease | None] = {}
        self._held: list[int] = []
        self._lease_until: datetime | None = None
        self._lease_lost: str | None = None
        self._paused = False  # the bounces just recorded paused the campaign
        self._marked: int | None = None  # the job marked in flight (queue.begin_sending), not yet finished

    async def send_batch(self) -> int:
        now = self.clock()
        batch = await asyncio.to_thread(
            campaigns.claim_release_batch, self.worker, now, LEASE, batch_size(self.mail.send_rate), self.db_url
        )
        if not batch:
            return 0
        claimed = len(batch)
        batch = [job for job in batch if not await outbox.gave_up_stalled(job, self.worker, self.db_url, "Campaign")]
        if not batch:
            return claimed
        self._held = [delivery.id for delivery in batch]
        self._lease_until = now + LEASE
        self._lease_lost = None
        rate = self.mail.send_rate
        reading: asyncio.Future | None = None  # the next reader's status (with the last record, if any)
        keeping = asyncio.create_task(self._keep_lease(), name="publisher-campaign-lease")
        try:
            first = await asyncio.to_thread(
                campaigns.reserve_send_slots,
                len(batch),
                lambda next_free, at: reserve_slots(next_free, at, len(batch), rate),
                self.clock(),
                self.db_url,
            )
            reading = self._read_status(batch[0])
            for index, delivery in enumerate(batch):
                await self._wait_until(slot_time(first, index, rate))
                await self._renew_lease()
                if self._lease_lost is not None:
                    raise LeaseLost(self._lease_lost)
                following = batch[index + 1] if index + 1 < len(batch) else None
                reading = await self._send_one(delivery, reading, following)
                self._held.remove(delivery.id)
                if self._paused:  # its bounces paused the campaign (publisher/returns)
                    self._paused = False
                    raise Paused
            await reading
        except Paused:
            pass
        except LeaseLost as lost:
            logger.warning("Campaign: batch stopped: %s", lost)
        finally:
            keeping.cancel()
            if reading is not None and not reading.done():  # the last record lands before the leases go back
                with contextlib.suppress(Exception):
                    await asyncio.shield(reading)
            if self._held:  # stopped early: the rest go back at once
                held, self._held = self._held, []
                releasing = asyncio.to_thread(queue.release_leases, held, self.worker, self.db_url, marked=self._marked)
                await asyncio.shield(releasing)
            self._marked = None
        # A release job (claim_release_batch) always names its campaign.
        for campaign_id in {delivery.campaign_id for delivery in batch if delivery.campaign_id is not None}:
            await asyncio.to_thread(campaigns.finish_if_done, campaign_id, self.clock(), self.db_url)
        return claimed

    async def send_due(self) -> int:
        handled = 0
        try:
            while count := await self.send_batch():
                handled += count
        finally:
            await self.session.close()
            # Nothing more to send: the refusals of a streak too short to pause are believed.
            await asyncio.shield(self._take_bounces(self.streak.believe()))
        return handled

    async def _take_bounces(self, reports: list[bounce_records.Report], *, stop_if_paused: bool = False) -> None:
        recorded = await returns.take_at_sending(reports, self.db_url, "Campaign")
        if stop_if_paused:
            for campaign_id in {item.campaign_id for item in recorded if item.campaign_id is not None}:
                found = await asyncio.to_thread(campaigns.get_campaign, campaign_id, self.db_url)
                if found is not None and found.status == tables.PAUSED:
                    self._paused = True  # send_batch stops once this email's record is under way

    async def _wait_until(self, moment: datetime) -> None:
        """Never longer than half a lease at a time: a long wait for the throttle cannot hand the batch on."""
        while (delay := (moment - self.clock()).total_seconds()) > 0:
            await self.sleep(min(delay, LEASE.total_seconds() / 2))
            await self._renew_lease()

    async def _keep_lease(self) -> None:
        """Every quarter lease, whatever one email takes; a lost one stops the batch."""
        while True:
            await asyncio.sleep(LEASE.total_seconds() / 4)
            try:
                await self._renew_lease(now=True)
            except LeaseLost as lost:
                self._lease_lost = str(lost)
                return
            except Exception as exc:  # noqa: BLE001 - the next renewal (or the one before each email) tries again
                logger.warning("Campaign: could not renew a batch's lease (%s)", type(exc).__name__)

    async def _renew_lease(self, *, now: bool = False) -> None:
        """When under half the lease is left (or ``now``); LeaseLost: another sender has some."""
        moment = self.clock()
        if not now and self._lease_until is not None and self._lease_until - moment > LEASE / 2:
            return
        self._lease_until = moment + LEASE
        held = list(self._held)
        renewed = await asyncio.to_thread(queue.renew_leases, held, self.worker, self._lease_until, self.db_url)
        # Jobs finished meanwhile (the background renewal runs beside the sending) are not lost.
        if renewed < len(set(held) & set(self._held)):
            raise LeaseLost(
                f"{len(held) - renewed} of its {len(held)} jobs are no longer this sender's (lease ran out)"
            )

    def _campaign(self, campaign_id: int) -> tables.Campaign | None:
        if campaign_id not in self._campaigns:  # a campaign is never deleted, and its row is read once
            self._campaigns[campaign_id] = campaigns.get_campaign(campaign_id, self.db_url)
        return self._campaigns[campaign_id]

    def _read_status(self, delivery: queue.ClaimedDelivery | None) -> asyncio.Future:
        """None: forgotten; ``tables.NOT_READ``: no reader."""
        if delivery is None or delivery.source is None:
            known = asyncio.get_running_loop().create_future()
            known.set_result(tables.NOT_READ if delivery is None else None)
            return known
        self._marked = delivery.id  # in flight from now: a sender that dies sending it leaves it counted
        reader_id = delivery.source.id
        assert reader_id is not None  # a stored row has its id (the model's None is before the insert)
        return asyncio.ensure_future(asyncio.to_thread(queue.begin_sending, delivery.id, reader_id, self.db_url))

    def _prepared(self, campaign_id: int) -> release_email.PreparedRelease | None:
        if campaign_id not in self._emails:
            campaign = self._campaign(campaign_id)
            book = books.book_by_slug(campaign.book_slug) if campaign else None
            self._emails[campaign_id] = (
                None if book is None else release_email.PreparedRelease(self.mail, book, site=self.site)
            )
        return self._emails[campaign_id]

    def _build(self, delivery: queue.ClaimedDelivery) -> bytes | None:
        """None: the reader is forgotten; NothingToSend: its book is no longer in the content."""
        assert delivery.campaign_id is not None  # a release job always names its campaign
        prepared = self._prepared(delivery.campaign_id)
        reader = delivery.source
        if not isinstance(reader, tables.Subscriber):  # a release's source: its reader, or None
            return None
        if prepared is None:
            raise outbox.NothingToSend("the book is no longer in the content")
        return prepared.message(
            waited_only=reader.book_updates != tables.ON_LIST,
            name=reader.name,
            email=reader.email,
            unsubscribe_link=list_rules.unsubscribe_url(self.site, self.mail.list_secrets[0], reader.link_key),
            moment=self.clock(),
            message_id=delivery.message_id,
        )

    async def _send_one(
        self, delivery: queue.ClaimedDelivery, reading: asyncio.Future, following: queue.ClaimedDelivery | None
    ) -> asyncio.Future:
        """``reading`` (the previous record) reads this reader's status, so it is the one at sending time."""
        message, trouble = await self._open_envelope(delivery)
        status = await reading
        if status == tables.NOT_READ:  # the record could not read it
            status = await self._read_status(delivery)
        if status != ListStatus.CONFIRMED:
            if message is not None and trouble is None:
                await self.session.abandon()
            reason = "the reader was forgotten" if status is None else f"the reader is {status} now"
            await asyncio.to_thread(queue.mark_skipped, delivery.id, self.worker, reason, self.db_url)
            return self._read_status(following)
        if isinstance(trouble, mailer.UnsafeHeaders | outbox.NothingToSend):
            # This reader's copy alone fails, with the reason; not the server's fault, so it
            # counts toward no pause, and the campaign goes on.
            await asyncio.to_thread(queue.mark_failed, delivery.id, self.worker, str(trouble), self.db_url)
            if isinstance(trouble, mailer.UnsafeHeaders):  # a book gone from the content: its reason is enough
                logger.error("Campaign: delivery #%s failed: %s", delivery.id, trouble)
            return self._read_status(following)
        try:
            if trouble is not None:
                raise trouble
            assert message is not None  # no message and no error returned above
            await self.session.finish(message)
        except Exception as exc:  # noqa: BLE001 - as above
            await self._failed(delivery, exc if isinstance(exc, returns.DeliveryFailed) else self._unexpected(exc))
            return self._read_status(following)
        recording = self._record_sent(delivery, following)
        # A success: the refusals before it were the readers' own (FailureStreak), so they are bounces.
        await self._take_bounces(self.streak.success(), stop_if_paused=True)
        return recording

    async def _open_envelope(self, delivery: queue.ClaimedDelivery) -> tuple[bytes | None, Exception | None]:
        message: bytes | None = None
        try:
            message = self._build(delivery)
            if message is not None:
                assert isinstance(delivery.source, tables.Subscriber)  # _build found the reader
                await self.session.begin(delivery.source.email, mailer.return_path(self.mail, delivery.id))
        except (mailer.UnsafeHeaders, outbox.NothingToSend, returns.DeliveryFailed) as trouble:
            return message, trouble
        except Exception as exc:  # noqa: BLE001 - this reader's email fails, the campaign goes on
            return message, self._unexpected(exc)
        return message, None

    def _record_sent(self, delivery: queue.ClaimedDelivery, following: queue.ClaimedDelivery | None) -> asyncio.Future:
        """One transaction: this email sent, the next reader's status read, their job marked in flight."""
        following_reader = following.source.id if following is not None and following.source is not None else None
        following_job = following.id if following is not None and following_reader is not None else None
        self._marked = following_job
        return asyncio.ensure_future(
            outbox.record_sent(
                delivery.id, None, self.clock, self.db_url, then_read=following_reader, then_sending=following_job
            )
        )

    def _unexpected(self, exc: Exception) -> returns.DeliveryFailed:
        """That email fails for good and the connection (state unknown) is dropped."""
        logger.error("Campaign: unexpected error building or sending an email", exc_info=exc)
        self.session.discard()
        return returns.DeliveryFailed(outbox.unexpected(exc), permanent=True)

    async def _failed(self, delivery: queue.ClaimedDelivery, failure: returns.DeliveryFailed) -> None:
        assert delivery.campaign_id is not None  # a release job always names its campaign
        campaign = self._campaign(delivery.campaign_id)
        assert campaign is not None  # a campaign is never deleted
        when, reason = await outbox.settle(delivery, failure, self.worker, self.clock(), self.db_url)
        bounce = None
        if when is None:
            logger.warning("Campaign #%s: delivery #%s failed: %s", campaign.id, delivery.id, reason)
            bounce = returns.at_sending(delivery.id, failure)
        if self.streak.failure(delivery.id, bounce):
            await asyncio.to_thread(self._pause, campaign, failure.reason)
            raise Paused

    def _pause(self, campaign: tables.Campaign, reason: str) -> None:
        assert campaign.id is not None  # a stored row has its id (the model's None is before the insert)
        streak = list(self.streak.ids)
        self.streak.forget()
        paused = campaigns.set_campaign_status(
            campaign.id, tables.PAUSED, f"{len(streak)} failures in a row, the last: {reason}", db_url=self.db_url
        )
        queue.requeue(streak, self.clock(), outbox.RETRY_FOR, self.db_url)  # not the readers' fault
        if paused:
            logger.error(
                "Campaign #%s (%s) paused after %s failures in a row; the last: %s. "
                "Fix the cause, then `publisher-gateway announce %s` resumes it.",
                campaign.id,
                campaign.book_slug,
                len(streak),
                reason,
                campaign.book_slug,
            )


# How often the addresses that only waited for books are checked for erasure (wall-clock time).
ERASE_EVERY = timedelta(hours=1)


@dataclass
class ReleaseDay:
    """Each worker schedules forthcoming books' sends from the content it holds, starts them at their
    minute and erases the addresses that only waited after their days."""

    mail: Settings
    db_url: str | None = None
    clock: Callable[[], datetime] = tables.utc_now
    catalogue: Sequence[Book] = books.BOOKS
    scheduled: set[str] = field(default_factory=set)
    erased_at: datetime | None = None

    def step(self) -> None:
        now = self.clock()
        for book in release_rules.forthcoming(self.catalogue, now):
            if book.release is not None and book.slug not in self.scheduled:
                try:
                    campaigns.ensure_scheduled(book.slug, release_email.subject(book), book.release.utc, self.db_url)
                    self.scheduled.add(book.slug)
                except Exception as exc:  # noqa: BLE001 - the other books go on; this one is tried again
                    logger.error("Release day: could not schedule %s (%s)", book.slug, type(exc).__name__)
        for started in campaigns.start_due(
            now, lambda _reader: mailer.new_message_id(self.mail), outbox.RETRY_FOR, self.db_url
        ):
            logger.info("Release day: %s sent to %s readers from now", started.book_slug, started.recipients)
        if self.erased_at is None or now - self.erased_at >= ERASE_EVERY:
            self.erased_at = now
            if erased := subscribers.erase_waitlist_only(now, self.db_url):
                logger.info("Release day: %s addresses that only waited for books erased", erased)


async def run_in_backend(db_url: str | None = None) -> None:
    """Each worker starts release days and sends release jobs too (embedded gateway with SMTP)."""
    mail = settings.current().mail
    # Without the postal address, only the command (which refuses) could start a release.
    if not settings.current().list_emails_on or mail is None or mail.postal_address is None:
        return
    day, sender = ReleaseDay(mail, db_url), ReleaseSender(mail, db_url)

    async def start_then_send() -> None:
        try:
            await asyncio.to_thread(day.step)
        finally:  # a release day that fails (logged by keep_running) keeps no campaign from sending
            await sender.send_due()

    await returns.keep_running(start_then_send, "Campaign", outbox.POLL_INTERVAL_S)
