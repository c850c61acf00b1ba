"""The embedded gateway's tables and every query on them.

Reflex's database layer (``db_url`` in rxconfig.py, ``REFLEX_DB_URL``; SQLite by
default, PostgreSQL for several containers); the schema comes from the Alembic
migrations in ``alembic/``. All functions are synchronous: the gateway and the
outbox call them from a thread, so the event loop never blocks.

A stored message and its delivery job are written in one transaction, so a
message is never stored without the job that emails it, nor the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy
import sqlmodel
from reflex import model as rx_model
from sqlalchemy.dialects import postgresql, sqlite

from publisher.forms import validation
from publisher.gateway.contract import SUBJECT_MAX, SendEmailRequest, SubscribeRequest


def utc_now() -> datetime:
    return datetime.now(UTC)


class Subscriber(sqlmodel.SQLModel, table=True):
    """One address on the new-release list; ``email_key`` makes a repeat a no-op."""

    __tablename__ = "subscriber"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    email_key: str = sqlmodel.Field(max_length=validation.EMAIL_MAX, unique=True, index=True)
    name: str = sqlmodel.Field(max_length=validation.NAME_MAX)
    book_updates: str = sqlmodel.Field(max_length=8)
    subscribed_at: datetime = sqlmodel.Field(default_factory=utc_now)


class ContactMessage(sqlmodel.SQLModel, table=True):
    """One message sent through the contact form, as the cloud gateway would email it."""

    __tablename__ = "contact_message"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    sender_name: str = sqlmodel.Field(max_length=2 * validation.NAME_MAX + 1)
    sender_email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    subject: str = sqlmodel.Field(max_length=SUBJECT_MAX)
    message: str = sqlmodel.Field(max_length=validation.MESSAGE_MAX)
    received_at: datetime = sqlmodel.Field(default_factory=utc_now)


PENDING, SENT, FAILED = "pending", "sent", "failed"
CONTACT, SUBSCRIBER = "contact", "subscriber"
ERROR_MAX = 500


class Delivery(sqlmodel.SQLModel, table=True):
    """One email the outbox owes the publisher: a contact message, or a new-subscriber notice.

    ``lease_until``/``claimed_by``: a worker that claims the job owns it until then,
    so two workers never send it at the same time. ``message_id`` is fixed when the
    job is stored, so a repeated send carries the same Message-ID.
    """

    __tablename__ = "outbox_delivery"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    kind: str = sqlmodel.Field(max_length=16)
    source_id: int
    message_id: str = sqlmodel.Field(max_length=255, unique=True)
    status: str = sqlmodel.Field(default=PENDING, max_length=16, index=True)
    attempts: int = 0
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    next_attempt_at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)
    give_up_at: datetime
    lease_until: datetime | None = None
    claimed_by: str | None = sqlmodel.Field(default=None, max_length=64)
    last_error: str | None = sqlmodel.Field(default=None, max_length=ERROR_MAX)
    sent_at: datetime | None = None


def _engine(db_url: str | None) -> sqlalchemy.engine.Engine:
    return rx_model.get_engine(db_url)


def _session(db_url: str | None) -> sqlmodel.Session:
    return rx_model.session(db_url)


def _insert_once(dialect: str):
    """An INSERT that skips a row whose unique key exists (ON CONFLICT DO NOTHING), or None."""
    return {"postgresql": postgresql.insert, "sqlite": sqlite.insert}.get(dialect)


@dataclass(frozen=True)
class Job:
    """A delivery to create with the row it mails: the Message-ID and how long to keep trying."""

    message_id: str
    retry_for: timedelta


def _delivery_values(kind: str, source_id: int, job: Job, now: datetime) -> dict:
    return {
        "kind": kind,
        "source_id": source_id,
        "message_id": job.message_id,
        "status": PENDING,
        "attempts": 0,
        "created_at": now,
        "next_attempt_at": now,
        "give_up_at": now + job.retry_for,
    }


def store_subscription(body: SubscribeRequest, db_url: str | None = None, notice: Job | None = None) -> bool:
    """Store a subscriber; False when the address was already on the list (nothing changes).

    The unique ``email_key`` settles a repeat and two simultaneous subscriptions of
    one address alike: on SQLite and PostgreSQL the second insert does nothing
    (no error, no aborted transaction), elsewhere its IntegrityError is the answer.
    ``notice``: also queue the new-subscriber email, only when the address is new.
    """
    now = utc_now()
    values = {
        "email": body.email,
        "email_key": body.email.lower(),
        "name": body.name,
        "book_updates": body.book_updates,
        "subscribed_at": now,
    }
    engine = _engine(db_url)
    insert = _insert_once(engine.dialect.name)
    try:
        with engine.begin() as connection:
            if insert is not None:
                statement = (
                    insert(Subscriber)
                    .values(**values)
                    .on_conflict_do_nothing(index_elements=["email_key"])
                    .returning(Subscriber.id)  # a row only when inserted (rowcount is not reliable here)
                )
                new_id = connection.execute(statement).scalar_one_or_none()
            else:
                new_id = connection.execute(sqlalchemy.insert(Subscriber).values(**values)).inserted_primary_key[0]
            if new_id is not None and notice is not None:
                connection.execute(
                    sqlalchemy.insert(Delivery).values(**_delivery_values(SUBSCRIBER, new_id, notice, now))
                )
    except sqlalchemy.exc.IntegrityError:
        if insert is not None:
            raise
        return False
    return new_id is not None


def store_message(body: SendEmailRequest, db_url: str | None = None, job: Job | None = None) -> int:
    """Store a contact message (and its delivery job, in the same transaction); its id."""
    now = utc_now()
    with _engine(db_url).begin() as connection:
        message_id = connection.execute(
            sqlalchemy.insert(ContactMessage).values(
                sender_name=body.sender.name,
                sender_email=body.sender.email,
                subject=body.subject,
                message=body.message,
                received_at=now,
            )
        ).inserted_primary_key[0]  # not RETURNING: every dialect reports the new key
        if job is not None:
            connection.execute(sqlalchemy.insert(Delivery).values(**_delivery_values(CONTACT, message_id, job, now)))
    return message_id


def list_subscribers(db_url: str | None = None) -> list[Subscriber]:
    with _session(db_url) as session:
        return list(session.exec(sqlmodel.select(Subscriber).order_by(Subscriber.id)))


def list_messages(db_url: str | None = None) -> list[ContactMessage]:
    with _session(db_url) as session:
        return list(session.exec(sqlmodel.select(ContactMessage).order_by(ContactMessage.id)))


# --- The outbox's queue. ---


@dataclass(frozen=True)
class ClaimedDelivery:
    """A job this worker holds until ``lease_until``, with the row it mails."""

    id: int
    kind: str
    message_id: str
    attempts: int
    give_up_at: datetime
    source: ContactMessage | Subscriber | None


def claim_due(
    worker: str, now: datetime, lease: timedelta, db_url: str | None = None, only_ids: list[int] | None = None
) -> ClaimedDelivery | None:
    """Take the oldest due, unleased pending job for ``worker``, or None.

    One statement: ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED)``.
    On PostgreSQL a job another worker is claiming at this instant is skipped, not
    waited for; SQLite runs one writer at a time anyway (and has no FOR UPDATE).
    """
    due = sqlmodel.select(Delivery.id).where(
        Delivery.status == PENDING,
        Delivery.next_attempt_at <= now,
        sqlalchemy.or_(Delivery.lease_until.is_(None), Delivery.lease_until < now),
    )
    if only_ids is not None:
        due = due.where(Delivery.id.in_(only_ids))
    due = due.order_by(Delivery.next_attempt_at, Delivery.id).limit(1).with_for_update(skip_locked=True)
    claim = (
        sqlalchemy.update(Delivery)
        .where(Delivery.id == due.scalar_subquery())
        .values(lease_until=now + lease, claimed_by=worker, attempts=Delivery.attempts + 1)
        .returning(
            Delivery.id, Delivery.kind, Delivery.source_id, Delivery.message_id, Delivery.attempts, Delivery.give_up_at
        )
    )
    with _session(db_url) as session:
        row = session.execute(claim).first()
        session.commit()
        if row is None:
            return None
        model = ContactMessage if row.kind == CONTACT else Subscriber
        source = session.get(model, row.source_id)
        return ClaimedDelivery(row.id, row.kind, row.message_id, row.attempts, row.give_up_at, source)


def _finish(db_url: str | None, delivery_id: int, worker: str | None, **values) -> bool:
    statement = sqlalchemy.update(Delivery).where(Delivery.id == delivery_id, Delivery.status == PENDING)
    if worker is not None:
        statement = statement.where(Delivery.claimed_by == worker)
    with _engine(db_url).begin() as connection:
        return connection.execute(statement.values(lease_until=None, **values)).rowcount == 1


def mark_sent(delivery_id: int, now: datetime, note: str | None = None, db_url: str | None = None) -> bool:
    # Whoever holds the lease by now: the server accepted it, so it is sent.
    return _finish(db_url, delivery_id, None, status=SENT, sent_at=now, last_error=_clip(note))


def mark_retry(delivery_id: int, worker: str, when: datetime, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, next_attempt_at=when, last_error=_clip(error))


def mark_failed(delivery_id: int, worker: str, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, status=FAILED, last_error=_clip(error))


def _clip(text: str | None) -> str | None:
    return None if text is None else text[:ERROR_MAX]


def list_deliveries(statuses: tuple[str, ...] = (PENDING, FAILED), db_url: str | None = None) -> list[Delivery]:
    with _session(db_url) as session:
        return list(session.exec(sqlmodel.select(Delivery).where(Delivery.status.in_(statuses)).order_by(Delivery.id)))


def requeue_failed(now: datetime, retry_for: timedelta, db_url: str | None = None) -> list[int]:
    """Make every failed job due now, with a fresh retry window; their ids."""
    with _engine(db_url).begin() as connection:
        return list(
            connection.execute(
                sqlalchemy.update(Delivery)
                .where(Delivery.status == FAILED)
                .values(
                    status=PENDING,
                    attempts=0,
                    next_attempt_at=now,
                    give_up_at=now + retry_for,
                    lease_until=None,
                    claimed_by=None,
                )
                .returning(Delivery.id)
            ).scalars()
        )
