"""A release's campaign: its row, its readers' jobs, its batches, the site's send throttle."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

import sqlalchemy
import sqlmodel
from sqlmodel import col

from publisher.rules.list_rules import ListStatus
from publisher.storage import bounce_records, tables
from publisher.storage.queue import ClaimedDelivery, claimed, claiming, clipped, due_jobs
from publisher.storage.tables import Campaign, Delivery, SendThrottle, Subscriber, Waiting


def get_campaign(campaign_id: int, db_url: str | None = None) -> Campaign | None:
    with tables.open_session(db_url) as session:
        return session.get(Campaign, campaign_id)


def find_campaign(book_slug: str, db_url: str | None = None) -> Campaign | None:
    with tables.open_session(db_url) as session:
        return session.exec(sqlmodel.select(Campaign).where(col(Campaign.book_slug) == book_slug)).first()


def confirmed_count(db_url: str | None = None) -> int:
    """Not those only waiting for a book."""
    on_list = col(Subscriber.status) == ListStatus.CONFIRMED, col(Subscriber.book_updates) == tables.ON_LIST
    with tables.engine(db_url).begin() as connection:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).where(*on_list)).scalar_one()


def create_campaign(
    book_slug: str, subject: str, message_id: Callable[[int], str], now: datetime, retry_for: timedelta, db_url=None
) -> Campaign | None:
    """None if the book has one: the unique slug and (campaign, reader) pair keep even a simultaneous
    second run from queueing twice."""
    with tables.engine(db_url).begin() as connection:
        columns = {"book_slug": book_slug, "subject": subject, "status": tables.SENDING, "created_at": now}
        campaign_id = tables.insert_once(connection, Campaign, "book_slug", **columns)
        if campaign_id is None:
            return None
        _queue_readers(connection, campaign_id, book_slug, message_id, now, retry_for)
    return find_campaign(book_slug, db_url)


def _queue_readers(
    connection, campaign_id: int, book_slug: str, message_id: Callable[[int], str], now: datetime, retry_for: timedelta
) -> None:
    """Confirmed readers on the list or waiting for the book, one set: a reader in both gets one email."""
    waits = sqlalchemy.select(col(Waiting.id)).where(
        col(Waiting.subscriber_id) == col(Subscriber.id), col(Waiting.book_slug) == book_slug
    )
    wanted = sqlalchemy.or_(col(Subscriber.book_updates) == tables.ON_LIST, waits.exists())
    confirmed = sqlalchemy.select(col(Subscriber.id)).where(col(Subscriber.status) == ListStatus.CONFIRMED, wanted)
    readers = cast(list[int], list(connection.execute(confirmed.order_by(col(Subscriber.id))).scalars()))
    if readers:
        jobs = {reader: tables.Job(message_id(reader), retry_for) for reader in readers}
        values = [tables.delivery_values(tables.RELEASE, reader, job, now) for reader, job in jobs.items()]
        connection.execute(sqlalchemy.insert(Delivery), [row | {"campaign_id": campaign_id} for row in values])
    done = {} if readers else {"status": tables.FINISHED, "finished_at": now}
    connection.execute(
        sqlalchemy.update(Campaign).where(col(Campaign.id) == campaign_id).values(recipients=len(readers), **done)
    )


def ensure_scheduled(book_slug: str, subject: str, due_at: datetime, db_url: str | None = None) -> None:
    """A forthcoming book's send, due at its release moment: created once, and while only scheduled (not
    moved, held or started) it follows the content's moment and subject."""
    with tables.engine(db_url).begin() as connection:
        columns = {"subject": subject, "status": tables.SCHEDULED, "due_at": due_at}
        if tables.insert_once(connection, Campaign, "book_slug", book_slug=book_slug, **columns) is None:
            connection.execute(
                sqlalchemy.update(Campaign)
                .where(col(Campaign.book_slug) == book_slug, col(Campaign.status) == tables.SCHEDULED)
                .values(subject=subject, due_at=due_at)
            )


def start_due(
    now: datetime, message_id: Callable[[int], str], retry_for: timedelta, db_url: str | None = None
) -> list[Campaign]:
    """The sends this call started: the claim is one UPDATE on the row, so of two replicas at once, one wins."""
    waiting_to_start = col(Campaign.status).in_((tables.SCHEDULED, tables.MOVED)), col(Campaign.due_at) <= now
    started = []
    with tables.engine(db_url).begin() as connection:
        due = connection.execute(sqlalchemy.select(col(Campaign.id), col(Campaign.book_slug)).where(*waiting_to_start))
        for campaign_id, book_slug in cast(list[tuple[int, str]], due.all()):
            claim = sqlalchemy.update(Campaign).where(col(Campaign.id) == campaign_id, *waiting_to_start)
            if connection.execute(claim.values(status=tables.SENDING, created_at=now)).rowcount == 1:
                _queue_readers(connection, campaign_id, book_slug, message_id, now, retry_for)
                started.append(book_slug)
    return [campaign for slug in started if (campaign := find_campaign(slug, db_url)) is not None]


def steer(book_slug: str, moved_to: datetime | None, held: bool = False, db_url: str | None = None) -> bool:
    """Move a send not started yet to the publisher's time (a held one stays held), else hold it or stop holding
    it (at its time as it stands: no longer the content's); whether it changed."""
    before: tuple[str, ...] = (tables.SCHEDULED, tables.MOVED) if held else (tables.HELD,)
    values: dict = {"status": tables.HELD if held else tables.MOVED}
    if moved_to is not None:
        held_stays = sqlalchemy.case((col(Campaign.status) == tables.HELD, tables.HELD), else_=tables.MOVED)
        before, values = tables.NOT_STARTED, {"due_at": moved_to, "status": held_stays}
    changing = sqlalchemy.update(Campaign).where(col(Campaign.book_slug) == book_slug, col(Campaign.status).in_(before))
    with tables.engine(db_url).begin() as connection:
        return connection.execute(changing.values(**values)).rowcount == 1


def list_campaigns(db_url: str | None = None) -> list[Campaign]:
    with tables.open_session(db_url) as session:
        return list(session.exec(sqlmodel.select(Campaign).order_by(col(Campaign.id))))


def campaign_counts(campaign_id: int, db_url: str | None = None) -> dict[str, int]:
    with tables.engine(db_url).begin() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(Delivery.status), sqlalchemy.func.count())
            .where(col(Delivery.campaign_id) == campaign_id)
            .group_by(col(Delivery.status))
        ).all()
    return dict.fromkeys((tables.PENDING, tables.SENT, tables.FAILED, tables.SKIPPED), 0) | dict(rows)


def set_campaign_status(
    campaign_id: int, status: str, reason: str | None = None, now: datetime | None = None, db_url=None
) -> bool:
    """Pause a sending campaign (``reason``: why) or resume a paused one; whether it changed."""
    before = tables.PAUSED if status == tables.SENDING else tables.SENDING
    changing = sqlalchemy.update(Campaign).where(col(Campaign.id) == campaign_id, col(Campaign.status) == before)
    with tables.engine(db_url).begin() as connection:
        if connection.execute(changing.values(status=status, paused_reason=clipped(reason))).rowcount != 1:
            return False
        if status == tables.SENDING:
            # Resumed: the pause thresholds judge only what comes after, and what waited for a retry goes now.
            bounce_records.reset_baseline(connection, campaign_id)
            connection.execute(
                sqlalchemy.update(Delivery)
                .where(col(Delivery.campaign_id) == campaign_id, col(Delivery.status) == tables.PENDING)
                .values(next_attempt_at=now or tables.utc_now())
            )
    return True


def finish_if_done(campaign_id: int, now: datetime, db_url: str | None = None) -> bool:
    pending = (
        sqlalchemy.select(col(Delivery.id))
        .where(col(Delivery.campaign_id) == campaign_id, col(Delivery.status) == tables.PENDING)
        .exists()
    )
    finishing = (
        sqlalchemy.update(Campaign)
        .where(col(Campaign.id) == campaign_id, col(Campaign.status) == tables.SENDING, ~pending)
        .values(status=tables.FINISHED, finished_at=now)
    )
    with tables.engine(db_url).begin() as connection:
        return connection.execute(finishing).rowcount == 1


def claim_release_batch(
    worker: str, now: datetime, lease: timedelta, limit: int, db_url: str | None = None
) -> list[ClaimedDelivery]:
    sending = sqlalchemy.select(col(Campaign.id)).where(col(Campaign.status) == tables.SENDING)
    due = due_jobs(now, col(Delivery.campaign_id).in_(sending), limit=limit)
    claim = claiming(col(Delivery.id).in_(due.scalar_subquery()), now, lease, worker, one_job=False)
    with tables.open_session(db_url) as session:
        rows = sorted(session.execute(claim).all(), key=lambda row: row.id)
        session.commit()
        theirs = sqlmodel.select(Subscriber).where(col(Subscriber.id).in_([row.source_id for row in rows]))
        readers = {reader.id: reader for reader in session.exec(theirs)}
        return [claimed(row, readers.get(row.source_id)) for row in rows]


def reserve_send_slots(
    count: int, reserve: Callable[[datetime | None, datetime], tuple[datetime, datetime]], now: datetime, db_url=None
) -> datetime:
    """The first slot's time; the row is locked while read and moved, so two senders never take the same slots."""
    with tables.engine(db_url).begin() as connection:
        tables.insert_once(connection, SendThrottle, "id", id=1, next_slot_at=now)
        next_free = connection.execute(
            sqlalchemy.select(col(SendThrottle.next_slot_at)).where(col(SendThrottle.id) == 1).with_for_update()
        ).scalar_one()
        first, after = reserve(next_free, now)
        connection.execute(sqlalchemy.update(SendThrottle).where(col(SendThrottle.id) == 1).values(next_slot_at=after))
    return first
