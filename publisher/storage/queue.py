"""The outbox's queue: claiming a job with a lease, so one sender across workers and containers holds
it at a time, and recording what became of it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import cast

import sqlalchemy
import sqlmodel
from sqlmodel import col

from publisher.storage import tables
from publisher.storage.tables import FAILED, PENDING, ContactMessage, Delivery, PublisherNotice, Subscriber


@dataclass(frozen=True)
class ClaimedDelivery:
    id: int
    kind: str
    message_id: str
    attempts: int
    give_up_at: datetime
    source: ContactMessage | Subscriber | PublisherNotice | None
    campaign_id: int | None = None
    stalled_claims: int = 0
    created_at: datetime | None = None  # when the job was queued (a confirmation's: its sign-up)

    @property
    def stalled_reason(self) -> str:
        return (
            f"given up: claimed {self.stalled_claims} times without an outcome "
            "(its sender stopped each time while sending it)"
        )


def sent_since(kind: str, since: datetime, db_url: str | None = None) -> int:
    sent = col(Delivery.kind) == kind, col(Delivery.status) == tables.SENT, col(Delivery.sent_at) >= since
    with tables.engine(db_url).begin() as connection:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).where(*sent)).scalar_one()


def claiming(jobs, now: datetime, lease: timedelta, worker: str, *, one_job: bool):
    """Give ``worker`` the ``jobs`` with one more attempt, read back. ``one_job``: a stalled claim too when the
    last lease ran out with no outcome (a batch marks its job in flight itself: ``begin_sending``)."""
    values: dict = {"lease_until": now + lease, "claimed_by": worker, "attempts": col(Delivery.attempts) + 1}
    if one_job:
        values["stalled_claims"] = sqlalchemy.case(
            (col(Delivery.lease_until).is_not(None), col(Delivery.stalled_claims) + 1),
            else_=col(Delivery.stalled_claims),
        )
    read_back = [getattr(Delivery, field.name) for field in fields(ClaimedDelivery) if field.name != "source"]
    return sqlalchemy.update(Delivery).where(jobs).values(**values).returning(col(Delivery.source_id), *read_back)


def claimed(row, source: ContactMessage | Subscriber | PublisherNotice | None) -> ClaimedDelivery:
    values = {name: value for name, value in row._mapping.items() if name != "source_id"}
    return ClaimedDelivery(**values, source=source)


def due_jobs(now: datetime, *conditions, limit: int = 1):
    """Oldest first; a job another worker holds the lock of is skipped, not waited for (SKIP LOCKED)."""
    return (
        sqlmodel.select(col(Delivery.id))
        .where(
            col(Delivery.status) == PENDING,
            col(Delivery.next_attempt_at) <= now,
            sqlalchemy.or_(col(Delivery.lease_until).is_(None), col(Delivery.lease_until) < now),
            *conditions,
        )
        .order_by(col(Delivery.next_attempt_at), col(Delivery.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )


def claim_due(
    worker: str,
    now: datetime,
    lease: timedelta,
    db_url: str | None = None,
    only_ids: list[int] | None = None,
    held_kinds: tuple[str, ...] = (),
) -> ClaimedDelivery | None:
    conditions = [col(Delivery.campaign_id).is_(None)]  # a release's jobs go in batches (claim_release_batch)
    if only_ids is not None:
        conditions.append(col(Delivery.id).in_(only_ids))
    if held_kinds:
        conditions.append(col(Delivery.kind).not_in(held_kinds))
    claim = claiming(col(Delivery.id) == due_jobs(now, *conditions).scalar_subquery(), now, lease, worker, one_job=True)
    with tables.open_session(db_url) as session:
        row = session.execute(claim).first()
        session.commit()
        return None if row is None else claimed(row, _source(session, row.kind, row.source_id))


def _source(
    session: sqlmodel.Session, kind: str, source_id: int
) -> ContactMessage | Subscriber | PublisherNotice | None:
    if kind == tables.CONTACT:
        return session.get(ContactMessage, source_id)
    if kind == tables.NOTICE:
        return session.get(PublisherNotice, source_id)
    return session.get(Subscriber, source_id)  # None: the row it mails is gone


def _finishing(delivery_id: int, worker: str | None, **values):
    """``worker``: only while it still holds the job."""
    statement = sqlalchemy.update(Delivery).where(col(Delivery.id) == delivery_id, col(Delivery.status) == PENDING)
    if worker is not None:
        statement = statement.where(col(Delivery.claimed_by) == worker)
    return statement.values(lease_until=None, stalled_claims=0, **values)


def _finish(db_url: str | None, delivery_id: int, worker: str | None, **values) -> bool:
    with tables.engine(db_url).begin() as connection:
        return connection.execute(_finishing(delivery_id, worker, **values)).rowcount == 1


def mark_sent(
    delivery_id: int,
    now: datetime,
    note: str | None = None,
    db_url: str | None = None,
    *,
    then_read: int | None = None,
    then_sending: int | None = None,
) -> str | None:
    """Record the send, whoever holds the lease by now (the server accepted it). ``then_read``/``then_sending``:
    the next reader's status read and job marked in flight in the same transaction (one round trip)."""
    with tables.engine(db_url).begin() as connection:
        connection.execute(_finishing(delivery_id, None, status=tables.SENT, sent_at=now, last_error=clipped(note)))
        if then_sending is not None:
            connection.execute(_in_flight(then_sending))
        if then_read is None:
            return tables.NOT_READ
        return _status_of(connection, then_read)


def _in_flight(delivery_id: int):
    """One more stalled claim, which its outcome clears: a sender that dies while sending it leaves it counted."""
    return (
        sqlalchemy.update(Delivery)
        .where(col(Delivery.id) == delivery_id, col(Delivery.status) == PENDING)
        .values(stalled_claims=col(Delivery.stalled_claims) + 1)
    )


def begin_sending(delivery_id: int, subscriber_id: int, db_url: str | None = None) -> str | None:
    """Its reader's status (None: forgotten), read in the transaction that marks the job in flight."""
    with tables.engine(db_url).begin() as connection:
        connection.execute(_in_flight(delivery_id))
        return _status_of(connection, subscriber_id)


def mark_retry(delivery_id: int, worker: str, when: datetime, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, next_attempt_at=when, last_error=clipped(error))


def mark_skipped(delivery_id: int, worker: str, reason: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, status=tables.SKIPPED, last_error=clipped(reason))


def mark_failed(delivery_id: int, worker: str, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, status=FAILED, last_error=clipped(error))


def clipped(text: str | None) -> str | None:
    return None if text is None else text[: tables.ERROR_MAX]


def list_deliveries(statuses: tuple[str, ...] = (PENDING, FAILED), db_url: str | None = None) -> list[Delivery]:
    """A release's jobs are counted by ``campaign_counts``."""
    its_own = col(Delivery.status).in_(statuses), col(Delivery.campaign_id).is_(None)
    with tables.open_session(db_url) as session:
        return list(session.exec(sqlmodel.select(Delivery).where(*its_own).order_by(col(Delivery.id))))


def requeue_failed(now: datetime, retry_for: timedelta, db_url: str | None = None) -> list[int]:
    with tables.engine(db_url).begin() as connection:
        failed = _due_again(now, retry_for, col(Delivery.status) == FAILED, col(Delivery.campaign_id).is_(None))
        ids = connection.execute(failed.values(claimed_by=None).returning(col(Delivery.id))).scalars()
        return cast(list[int], list(ids))  # a stored row's id is never None


def _due_again(now: datetime, retry_for: timedelta, *conditions):
    return (
        sqlalchemy.update(Delivery)
        .where(*conditions)
        .values(status=PENDING, attempts=0, next_attempt_at=now, give_up_at=now + retry_for, lease_until=None)
    )


def _status_of(connection, subscriber_id: int) -> str | None:
    return connection.execute(
        sqlalchemy.select(col(Subscriber.status)).where(col(Subscriber.id) == subscriber_id)
    ).scalar_one_or_none()


def _update_held(delivery_ids: list[int], worker: str, db_url: str | None, **values) -> int:
    if not delivery_ids:
        return 0
    held = col(Delivery.id).in_(delivery_ids), col(Delivery.status) == PENDING, col(Delivery.claimed_by) == worker
    with tables.engine(db_url).begin() as connection:
        return connection.execute(sqlalchemy.update(Delivery).where(*held).values(**values)).rowcount


def release_leases(
    delivery_ids: list[int], worker: str, db_url: str | None = None, *, marked: int | None = None
) -> int:
    """Jobs claimed but not sent go back at once; ``marked``: the one marked in flight, its mark taken back."""
    if marked is not None and marked in delivery_ids:
        its_mark = col(Delivery.id) == marked, col(Delivery.claimed_by) == worker, col(Delivery.stalled_claims) > 0
        taken_back = (
            sqlalchemy.update(Delivery).where(*its_mark).values(stalled_claims=col(Delivery.stalled_claims) - 1)
        )
        with tables.engine(db_url).begin() as connection:
            connection.execute(taken_back)
    return _update_held(delivery_ids, worker, db_url, lease_until=None, attempts=col(Delivery.attempts) - 1)


def renew_leases(delivery_ids: list[int], worker: str, until: datetime, db_url: str | None = None) -> int:
    """How many this worker still held."""
    return _update_held(delivery_ids, worker, db_url, lease_until=until)


def requeue(delivery_ids: list[int], now: datetime, retry_for: timedelta, db_url: str | None = None) -> None:
    """Failed or waiting: due again when sending resumes, with a fresh retry window."""
    if not delivery_ids:
        return
    with tables.engine(db_url).begin() as connection:
        waiting = col(Delivery.status).in_((PENDING, FAILED))
        connection.execute(_due_again(now, retry_for, col(Delivery.id).in_(delivery_ids), waiting))


def release_leases_of(workers: list[str], db_url: str | None = None) -> int:
    if not workers:
        return 0
    leased = (
        col(Delivery.claimed_by).in_(workers),
        col(Delivery.status) == PENDING,
        col(Delivery.lease_until).is_not(None),
    )
    with tables.engine(db_url).begin() as connection:
        # The job it was sending carries its own mark (begin_sending).
        return connection.execute(sqlalchemy.update(Delivery).where(*leased).values(lease_until=None)).rowcount


def lease_holders(db_url: str | None = None) -> list[str]:
    with tables.engine(db_url).begin() as connection:
        leased = col(Delivery.status) == PENDING, col(Delivery.lease_until).is_not(None)
        holders = connection.execute(sqlalchemy.select(col(Delivery.claimed_by)).where(*leased).distinct()).scalars()
        return cast(list[str], list(holders))  # a claim writes its lease and its worker together
