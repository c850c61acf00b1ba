"""A release's campaign: its row, its readers' jobs, its batches, the site's send throttle."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

import sqlalchemy
import sqlmodel
from sqlmodel import col

from publisher.storage import bounce_records, database, tables
from publisher.storage.queue import ClaimedDelivery, claim_values, clipped
from publisher.storage.tables import (
    FAILED,
    FINISHED,
    PAUSED,
    PENDING,
    RELEASE,
    SENDING,
    SENT,
    SKIPPED,
    Campaign,
    Delivery,
    ListStatus,
    SendThrottle,
    Subscriber,
    insert_once,
    utc_now,
)


def get_campaign(campaign_id: int, db_url: str | None = None) -> Campaign | None:
    with tables.open_session(db_url) as session:
        return session.get(Campaign, campaign_id)


def find_campaign(book_slug: str, db_url: str | None = None) -> Campaign | None:
    with tables.open_session(db_url) as session:
        return session.exec(sqlmodel.select(Campaign).where(col(Campaign.book_slug) == book_slug)).first()


def confirmed_count(db_url: str | None = None) -> int:
    with database.engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.select(sqlalchemy.func.count()).where(col(Subscriber.status) == ListStatus.CONFIRMED)
        ).scalar_one()


def create_campaign(
    book_slug: str, subject: str, message_id: Callable[[int], str], now: datetime, retry_for: timedelta, db_url=None
) -> Campaign | None:
    """The campaign and one release job per confirmed reader, in one transaction; None if the book has one.
    The unique slug and (campaign, reader) pair keep even a simultaneous second run from queueing twice."""
    with database.engine(db_url).begin() as connection:
        campaign_id = insert_once(
            connection, Campaign, "book_slug", book_slug=book_slug, subject=subject, status=SENDING, created_at=now
        )
        if campaign_id is None:
            return None
        ids = connection.execute(
            sqlalchemy.select(col(Subscriber.id))
            .where(col(Subscriber.status) == ListStatus.CONFIRMED)
            .order_by(col(Subscriber.id))
        ).scalars()
        # The model types an id optional (None before the insert): a stored row's never is.
        readers = cast(list[int], list(ids))
        if readers:
            connection.execute(
                sqlalchemy.insert(Delivery),
                [
                    {
                        "kind": RELEASE,
                        "campaign_id": campaign_id,
                        "source_id": reader,
                        "message_id": message_id(reader),
                        "status": PENDING,
                        "attempts": 0,
                        "created_at": now,
                        "next_attempt_at": now,
                        "give_up_at": now + retry_for,
                    }
                    for reader in readers
                ],
            )
        connection.execute(
            sqlalchemy.update(Campaign).where(col(Campaign.id) == campaign_id).values(recipients=len(readers))
        )
    return find_campaign(book_slug, db_url)


def list_campaigns(db_url: str | None = None) -> list[Campaign]:
    with tables.open_session(db_url) as session:
        return list(session.exec(sqlmodel.select(Campaign).order_by(col(Campaign.id))))


def campaign_counts(campaign_id: int, db_url: str | None = None) -> dict[str, int]:
    """The campaign's jobs by status (pending, sent, failed, skipped)."""
    with database.engine(db_url).begin() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(Delivery.status), sqlalchemy.func.count())
            .where(col(Delivery.campaign_id) == campaign_id)
            .group_by(col(Delivery.status))
        ).all()
    counts = dict.fromkeys((PENDING, SENT, FAILED, SKIPPED), 0)
    counts.update(dict(rows))
    return counts


def set_campaign_status(
    campaign_id: int, status: str, reason: str | None = None, now: datetime | None = None, db_url=None
) -> bool:
    """Move a campaign to ``status``; only from sending or paused (a finished one stays finished)."""
    values: dict[str, str | datetime | None] = {"status": status, "paused_reason": clipped(reason)}
    if status == FINISHED:
        values["finished_at"] = now or utc_now()
    with database.engine(db_url).begin() as connection:
        before = connection.execute(
            sqlalchemy.select(col(Campaign.status)).where(col(Campaign.id) == campaign_id).with_for_update()
        ).scalar()
        updated = connection.execute(
            sqlalchemy.update(Campaign)
            .where(col(Campaign.id) == campaign_id, col(Campaign.status).in_((SENDING, PAUSED)))
            .values(**values)
        ).rowcount
        if status == SENDING and before == PAUSED and updated:
            # Resumed: the pause thresholds judge only what comes after.
            bounce_records.reset_baseline(connection, campaign_id)
        if status == SENDING and updated:
            # What was waiting to be retried goes now.
            connection.execute(
                sqlalchemy.update(Delivery)
                .where(col(Delivery.campaign_id) == campaign_id, col(Delivery.status) == PENDING)
                .values(next_attempt_at=now or utc_now())
            )
    return updated == 1


def finish_if_done(campaign_id: int, now: datetime, db_url: str | None = None) -> bool:
    """Mark a sending campaign finished once none of its jobs is pending; whether it was now."""
    pending = (
        sqlalchemy.select(col(Delivery.id))
        .where(col(Delivery.campaign_id) == campaign_id, col(Delivery.status) == PENDING)
        .exists()
    )
    with database.engine(db_url).begin() as connection:
        return (
            connection.execute(
                sqlalchemy.update(Campaign)
                .where(col(Campaign.id) == campaign_id, col(Campaign.status) == SENDING, ~pending)
                .values(status=FINISHED, finished_at=now)
            ).rowcount
            == 1
        )


def claim_release_batch(
    worker: str, now: datetime, lease: timedelta, limit: int, db_url: str | None = None
) -> list[ClaimedDelivery]:
    """Take up to ``limit`` due, unleased jobs of campaigns that are sending, oldest first, with their readers."""
    sending = sqlalchemy.select(col(Campaign.id)).where(col(Campaign.status) == SENDING)
    due = (
        sqlmodel.select(col(Delivery.id))
        .where(
            col(Delivery.status) == PENDING,
            col(Delivery.campaign_id).in_(sending),
            col(Delivery.next_attempt_at) <= now,
            sqlalchemy.or_(col(Delivery.lease_until).is_(None), col(Delivery.lease_until) < now),
        )
        .order_by(col(Delivery.next_attempt_at), col(Delivery.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claim = (
        sqlalchemy.update(Delivery)
        .where(col(Delivery.id).in_(due.scalar_subquery()))
        .values(**claim_values(now, lease, worker, one_job=False))
        .returning(
            col(Delivery.id),
            col(Delivery.kind),
            col(Delivery.source_id),
            col(Delivery.message_id),
            col(Delivery.attempts),
            col(Delivery.give_up_at),
            col(Delivery.campaign_id),
            col(Delivery.stalled_claims),
        )
    )
    with tables.open_session(db_url) as session:
        rows = sorted(session.execute(claim).all(), key=lambda row: row.id)
        session.commit()
        readers = {
            reader.id: reader
            for reader in session.exec(
                sqlmodel.select(Subscriber).where(col(Subscriber.id).in_([row.source_id for row in rows]))
            )
        }
        return [
            ClaimedDelivery(
                row.id,
                row.kind,
                row.message_id,
                row.attempts,
                row.give_up_at,
                readers.get(row.source_id),
                row.campaign_id,
                row.stalled_claims,
            )
            for row in rows
        ]


def reserve_send_slots(
    count: int, reserve: Callable[[datetime | None, datetime], tuple[datetime, datetime]], now: datetime, db_url=None
) -> datetime:
    """Take ``count`` sending slots from the site's one throttle row (``reserve``: the rule); when the
    first is. The row is locked while read and moved, so two senders never take the same slots."""
    with database.engine(db_url).begin() as connection:
        insert_once(connection, SendThrottle, "id", id=1, next_slot_at=now)
        next_free = connection.execute(
            sqlalchemy.select(col(SendThrottle.next_slot_at)).where(col(SendThrottle.id) == 1).with_for_update()
        ).scalar_one()
        first, after = reserve(next_free, now)
        connection.execute(sqlalchemy.update(SendThrottle).where(col(SendThrottle.id) == 1).values(next_slot_at=after))
    return first
