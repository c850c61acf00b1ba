"""The embedded gateway's tables and every query on them.

Reflex's database layer (``db_url`` in rxconfig.py, ``REFLEX_DB_URL``; SQLite by
default, PostgreSQL for several containers); the schema comes from the Alembic
migrations in ``alembic/``. All functions are synchronous: the gateway and the
outbox call them from a thread, so the event loop never blocks.

A stored message and its delivery job are written in one transaction, so a
message is never stored without the job that emails it, nor the other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy
import sqlmodel
from sqlalchemy.dialects import postgresql, sqlite

from publisher.gateway.contract import SUBJECT_MAX, SendEmailRequest
from publisher.rules import validation
from publisher.storage import database


def utc_now() -> datetime:
    return datetime.now(UTC)


class ListStatus:
    """Where an address stands on the list: pending, then confirmed, then possibly unsubscribed."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    UNSUBSCRIBED = "unsubscribed"
    ALL = (PENDING, CONFIRMED, UNSUBSCRIBED)


SOURCE_MAX = 64
LINK_KEY_MAX = 32


class Subscriber(sqlmodel.SQLModel, table=True):
    """One address on the new-release list, where it stands, and when it got there.

    ``email`` is stored as it is sent (its domain in ASCII: forms/validation.py);
    ``email_key`` (the address in lower case) makes a repeat find the same row.
    ``link_key`` is random and secret: the confirmation and unsubscribe links name
    the row by it, signed (mailing_list.py). ``subscribed_at`` and ``source``: when
    and where the address last asked to join; ``confirmation_sent_at``: the last
    confirmation email, which the 24-hour rule reads. Every change is also written
    to ``subscription_event``, the record of consent.
    """

    __tablename__ = "subscriber"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    email_key: str = sqlmodel.Field(max_length=validation.EMAIL_MAX, unique=True, index=True)
    # The mailbox the address reaches (validation.mailbox_key: no +tag, lower case): the
    # 24-hour confirmation rule counts per mailbox, so spellings cannot multiply the emails.
    mailbox_key: str = sqlmodel.Field(max_length=validation.EMAIL_MAX, index=True)
    name: str = sqlmodel.Field(max_length=validation.NAME_MAX)
    book_updates: str = sqlmodel.Field(max_length=8)
    subscribed_at: datetime = sqlmodel.Field(default_factory=utc_now)
    status: str = sqlmodel.Field(default=ListStatus.PENDING, max_length=16, index=True)
    source: str = sqlmodel.Field(max_length=SOURCE_MAX)
    link_key: str = sqlmodel.Field(max_length=LINK_KEY_MAX, unique=True, index=True)
    confirmation_sent_at: datetime | None = None
    confirmed_at: datetime | None = None
    unsubscribed_at: datetime | None = None


class SubscriptionEvent(sqlmodel.SQLModel, table=True):
    """The record of consent: each time an address joined, confirmed, was imported or left, and how."""

    __tablename__ = "subscription_event"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    subscriber_id: int = sqlmodel.Field(index=True)
    event: str = sqlmodel.Field(max_length=16)
    at: datetime = sqlmodel.Field(default_factory=utc_now)
    how: str = sqlmodel.Field(max_length=SOURCE_MAX)


class ContactMessage(sqlmodel.SQLModel, table=True):
    """One message sent through the contact form, as the cloud gateway would email it."""

    __tablename__ = "contact_message"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    sender_name: str = sqlmodel.Field(max_length=2 * validation.NAME_MAX + 1)
    sender_email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    subject: str = sqlmodel.Field(max_length=SUBJECT_MAX)
    message: str = sqlmodel.Field(max_length=validation.MESSAGE_MAX)
    received_at: datetime = sqlmodel.Field(default_factory=utc_now)


PENDING, SENT, FAILED, SKIPPED = "pending", "sent", "failed", "skipped"
MAX_STALLED_CLAIMS = 3
# What mark_sent returns when it read no subscriber's status (not a status: none is ever stored).
NOT_READ = "not read"
# What a job emails: a contact message or a new-subscriber notice to the publisher, or a
# confirmation or welcome email to a subscriber (source_id: the message or the subscriber).
# A release job (campaign_id set) emails a new book to a confirmed reader (gateway/campaign.py).
CONTACT, SUBSCRIBER, CONFIRMATION, WELCOME, RELEASE = "contact", "subscriber", "confirmation", "welcome", "release"
TO_SUBSCRIBER = (CONFIRMATION, WELCOME, RELEASE)
ABOUT_SUBSCRIBER = (SUBSCRIBER, CONFIRMATION, WELCOME, RELEASE)  # source_id names a subscriber
ERROR_MAX = 500


class Delivery(sqlmodel.SQLModel, table=True):
    """One email the outbox owes: to the publisher (a contact message, a new-subscriber
    notice) or to a subscriber (a confirmation or welcome email). ``skipped``: not
    sent because, when its turn came, the address no longer wanted it.

    ``lease_until``/``claimed_by``: a worker that claims the job owns it until then,
    so two workers never send it at the same time. ``message_id`` is fixed when the
    job is stored, so a repeated send carries the same Message-ID.
    """

    __tablename__ = "outbox_delivery"
    # A reader is queued at most once per campaign, whatever runs twice (NULLs, other jobs, never clash).
    __table_args__ = (
        sqlalchemy.UniqueConstraint("campaign_id", "source_id", name="uq_outbox_delivery_campaign_reader"),
    )

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    campaign_id: int | None = sqlmodel.Field(default=None, index=True)
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
    # Claims that ended with no outcome (the sender died, or its lease ran out, mid-send):
    # past MAX_STALLED_CLAIMS the job is given up instead of taking down sender after sender.
    stalled_claims: int = sqlmodel.Field(default=0, sa_column_kwargs={"server_default": "0"})


# A campaign: sending (its jobs are sent), paused (after repeated failures: announce resumes it),
# finished (nothing left to send).
SENDING, PAUSED, FINISHED = "sending", "paused", "finished"


class Campaign(sqlmodel.SQLModel, table=True):
    """One book announced to the list: its jobs are release deliveries with its id.

    ``book_slug`` is unique: a book is announced once. ``recipients``: the readers
    queued, all in the same transaction as this row.
    """

    __tablename__ = "campaign"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    book_slug: str = sqlmodel.Field(max_length=120, unique=True)
    subject: str = sqlmodel.Field(max_length=SUBJECT_MAX)
    status: str = sqlmodel.Field(default=SENDING, max_length=16)
    recipients: int = 0
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    finished_at: datetime | None = None
    paused_reason: str | None = sqlmodel.Field(default=None, max_length=500)


class SendThrottle(sqlmodel.SQLModel, table=True):
    """The next free sending slot of the whole site (one row): every sender reserves its emails here."""

    __tablename__ = "send_throttle"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    next_slot_at: datetime


def engine(db_url: str | None) -> sqlalchemy.engine.Engine:
    return database.engine(db_url)


def open_session(db_url: str | None) -> sqlmodel.Session:
    return sqlmodel.Session(engine(db_url))


def insert_once(connection, model: type[sqlmodel.SQLModel], unique_column: str, **values) -> int | None:
    """Insert a row unless one with the same ``unique_column`` exists; the new id, or None.

    On SQLite and PostgreSQL the insert skips a known key (ON CONFLICT DO NOTHING:
    no error, and for two at once no aborted transaction); elsewhere a savepoint
    takes the unique violation.
    """
    dialect = connection.dialect.name
    insert = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}.get(dialect)
    if insert is not None:
        statement = (
            insert(model)
            .values(**values)
            .on_conflict_do_nothing(index_elements=[unique_column])
            .returning(model.id)  # a row only when inserted (rowcount is not reliable here)
        )
        return connection.execute(statement).scalar_one_or_none()
    try:
        with connection.begin_nested():
            return connection.execute(sqlalchemy.insert(model).values(**values)).inserted_primary_key[0]
    except sqlalchemy.exc.IntegrityError:
        return None


def lock_mailbox(connection, mailbox_key: str) -> None:
    """Serialise sign-ups to one mailbox until the transaction ends (PostgreSQL: an advisory
    lock on its key), so two spellings at once cannot both earn a confirmation. On SQLite a
    write that changes nothing takes the database's one write lock before anything is read."""
    if connection.dialect.name == "sqlite":
        connection.execute(sqlalchemy.update(Subscriber).where(sqlalchemy.false()).values(id=Subscriber.id))
    elif connection.dialect.name == "postgresql":
        connection.execute(
            sqlalchemy.select(sqlalchemy.func.pg_advisory_xact_lock(sqlalchemy.func.hashtext(mailbox_key)))
        )


def last_confirmation_to(connection, mailbox_key: str) -> datetime | None:
    """When a confirmation email last went to this mailbox, under any of its spellings."""
    return connection.execute(
        sqlalchemy.select(sqlalchemy.func.max(Subscriber.confirmation_sent_at)).where(
            Subscriber.mailbox_key == mailbox_key
        )
    ).scalar_one_or_none()


@dataclass(frozen=True)
class Job:
    """A delivery to create with the row it mails: the Message-ID and how long to keep trying."""

    message_id: str
    retry_for: timedelta


def delivery_values(kind: str, source_id: int, job: Job, now: datetime) -> dict:
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


def store_message(body: SendEmailRequest, db_url: str | None = None, job: Job | None = None) -> int:
    """Store a contact message (and its delivery job, in the same transaction); its id."""
    now = utc_now()
    with engine(db_url).begin() as connection:
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
            connection.execute(sqlalchemy.insert(Delivery).values(**delivery_values(CONTACT, message_id, job, now)))
    return message_id


def list_messages(db_url: str | None = None) -> list[ContactMessage]:
    with open_session(db_url) as session:
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
    campaign_id: int | None = None
    stalled_claims: int = 0

    @property
    def stalled_too_often(self) -> bool:
        return self.stalled_claims >= MAX_STALLED_CLAIMS

    @property
    def stalled_reason(self) -> str:
        return (
            f"given up: claimed {self.stalled_claims} times without an outcome "
            "(its sender stopped each time while sending it)"
        )


def _claiming(now: datetime, lease: timedelta, worker: str) -> dict:
    """What a claim writes: the lease, one more attempt, and one more stalled claim when the
    previous holder's lease ran out with no outcome recorded (an outcome clears the lease)."""
    stalled = sqlalchemy.case(
        (Delivery.lease_until.is_not(None), Delivery.stalled_claims + 1), else_=Delivery.stalled_claims
    )
    return {
        "lease_until": now + lease,
        "claimed_by": worker,
        "attempts": Delivery.attempts + 1,
        "stalled_claims": stalled,
    }


def sent_since(kind: str, since: datetime, db_url: str | None = None) -> int:
    """How many emails of ``kind`` went out since ``since`` (the confirmation ceiling reads it)."""
    with engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.select(sqlalchemy.func.count()).where(
                Delivery.kind == kind, Delivery.status == SENT, Delivery.sent_at >= since
            )
        ).scalar_one()


def claim_due(
    worker: str,
    now: datetime,
    lease: timedelta,
    db_url: str | None = None,
    only_ids: list[int] | None = None,
    held_kinds: tuple[str, ...] = (),
) -> ClaimedDelivery | None:
    """Take the oldest due, unleased pending job for ``worker``, or None; none of ``held_kinds``.

    One statement: ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED)``.
    On PostgreSQL a job another worker is claiming at this instant is skipped, not
    waited for; SQLite runs one writer at a time anyway (and has no FOR UPDATE).
    """
    due = sqlmodel.select(Delivery.id).where(
        Delivery.status == PENDING,
        Delivery.campaign_id.is_(None),  # a release's jobs go in batches (claim_release_batch)
        Delivery.next_attempt_at <= now,
        sqlalchemy.or_(Delivery.lease_until.is_(None), Delivery.lease_until < now),
    )
    if only_ids is not None:
        due = due.where(Delivery.id.in_(only_ids))
    if held_kinds:
        due = due.where(Delivery.kind.not_in(held_kinds))
    due = due.order_by(Delivery.next_attempt_at, Delivery.id).limit(1).with_for_update(skip_locked=True)
    claim = (
        sqlalchemy.update(Delivery)
        .where(Delivery.id == due.scalar_subquery())
        .values(**_claiming(now, lease, worker))
        .returning(
            Delivery.id,
            Delivery.kind,
            Delivery.source_id,
            Delivery.message_id,
            Delivery.attempts,
            Delivery.give_up_at,
            Delivery.stalled_claims,
        )
    )
    with open_session(db_url) as session:
        row = session.execute(claim).first()
        session.commit()
        if row is None:
            return None
        model = ContactMessage if row.kind == CONTACT else Subscriber
        source = session.get(model, row.source_id)
        return ClaimedDelivery(
            row.id, row.kind, row.message_id, row.attempts, row.give_up_at, source, stalled_claims=row.stalled_claims
        )


def _finishing(delivery_id: int, worker: str | None, **values):
    """The update that ends a pending job's attempt (``worker``: only while it still holds it)."""
    statement = sqlalchemy.update(Delivery).where(Delivery.id == delivery_id, Delivery.status == PENDING)
    if worker is not None:
        statement = statement.where(Delivery.claimed_by == worker)
    return statement.values(lease_until=None, stalled_claims=0, **values)


def _finish(db_url: str | None, delivery_id: int, worker: str | None, **values) -> bool:
    with engine(db_url).begin() as connection:
        return connection.execute(_finishing(delivery_id, worker, **values)).rowcount == 1


def mark_sent(
    delivery_id: int, now: datetime, note: str | None = None, db_url: str | None = None, *, then_read: int | None = None
) -> str | None:
    """Record the send (whoever holds the lease by now: the server accepted it, so it is sent).

    ``then_read``: a subscriber whose status is read in the same transaction and
    returned (a campaign's next reader: one round trip an email instead of two);
    without it, ``NOT_READ``.
    """
    with engine(db_url).begin() as connection:
        connection.execute(_finishing(delivery_id, None, status=SENT, sent_at=now, last_error=_clip(note)))
        if then_read is None:
            return NOT_READ
        return _status_of(connection, then_read)


def mark_retry(delivery_id: int, worker: str, when: datetime, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, next_attempt_at=when, last_error=_clip(error))


def mark_skipped(delivery_id: int, worker: str, reason: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, status=SKIPPED, last_error=_clip(reason))


def mark_failed(delivery_id: int, worker: str, error: str, db_url: str | None = None) -> bool:
    return _finish(db_url, delivery_id, worker, status=FAILED, last_error=_clip(error))


def _clip(text: str | None) -> str | None:
    return None if text is None else text[:ERROR_MAX]


def list_deliveries(statuses: tuple[str, ...] = (PENDING, FAILED), db_url: str | None = None) -> list[Delivery]:
    """The outbox's own jobs (a release's are counted by ``campaign_counts``)."""
    with open_session(db_url) as session:
        return list(
            session.exec(
                sqlmodel.select(Delivery)
                .where(Delivery.status.in_(statuses), Delivery.campaign_id.is_(None))
                .order_by(Delivery.id)
            )
        )


def requeue_failed(now: datetime, retry_for: timedelta, db_url: str | None = None) -> list[int]:
    """Make every failed job due now, with a fresh retry window; their ids."""
    with engine(db_url).begin() as connection:
        return list(
            connection.execute(
                sqlalchemy.update(Delivery)
                .where(Delivery.status == FAILED, Delivery.campaign_id.is_(None))
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


# --- A release's campaign (gateway/campaign.py). ---


def get_campaign(campaign_id: int, db_url: str | None = None) -> Campaign | None:
    with open_session(db_url) as session:
        return session.get(Campaign, campaign_id)


def find_campaign(book_slug: str, db_url: str | None = None) -> Campaign | None:
    with open_session(db_url) as session:
        return session.exec(sqlmodel.select(Campaign).where(Campaign.book_slug == book_slug)).first()


def confirmed_count(db_url: str | None = None) -> int:
    with engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.select(sqlalchemy.func.count()).where(Subscriber.status == ListStatus.CONFIRMED)
        ).scalar_one()


def create_campaign(
    book_slug: str, subject: str, message_id: Callable[[int], str], now: datetime, retry_for: timedelta, db_url=None
) -> Campaign | None:
    """The campaign and one release job per confirmed reader, in one transaction; None if the book has one.

    ``message_id(subscriber_id)`` names each job's email. The unique book slug and the
    unique (campaign, reader) pair keep a second run, even a simultaneous one, from
    queueing anyone twice.
    """
    with engine(db_url).begin() as connection:
        campaign_id = insert_once(
            connection, Campaign, "book_slug", book_slug=book_slug, subject=subject, status=SENDING, created_at=now
        )
        if campaign_id is None:
            return None
        readers = list(
            connection.execute(
                sqlalchemy.select(Subscriber.id)
                .where(Subscriber.status == ListStatus.CONFIRMED)
                .order_by(Subscriber.id)
            ).scalars()
        )
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
            sqlalchemy.update(Campaign).where(Campaign.id == campaign_id).values(recipients=len(readers))
        )
    return find_campaign(book_slug, db_url)


def list_campaigns(db_url: str | None = None) -> list[Campaign]:
    with open_session(db_url) as session:
        return list(session.exec(sqlmodel.select(Campaign).order_by(Campaign.id)))


def campaign_counts(campaign_id: int, db_url: str | None = None) -> dict[str, int]:
    """The campaign's jobs by status (pending, sent, failed, skipped)."""
    with engine(db_url).begin() as connection:
        rows = connection.execute(
            sqlalchemy.select(Delivery.status, sqlalchemy.func.count())
            .where(Delivery.campaign_id == campaign_id)
            .group_by(Delivery.status)
        ).all()
    counts = dict.fromkeys((PENDING, SENT, FAILED, SKIPPED), 0)
    counts.update(dict(rows))
    return counts


def set_campaign_status(
    campaign_id: int, status: str, reason: str | None = None, now: datetime | None = None, db_url=None
) -> bool:
    """Move a campaign to ``status``; only from sending or paused (a finished one stays finished)."""
    values = {"status": status, "paused_reason": _clip(reason)}
    if status == FINISHED:
        values["finished_at"] = now or utc_now()
    with engine(db_url).begin() as connection:
        updated = connection.execute(
            sqlalchemy.update(Campaign)
            .where(Campaign.id == campaign_id, Campaign.status.in_((SENDING, PAUSED)))
            .values(**values)
        ).rowcount
        if status == SENDING and updated:
            # Resumed: what was waiting to be retried goes now.
            connection.execute(
                sqlalchemy.update(Delivery)
                .where(Delivery.campaign_id == campaign_id, Delivery.status == PENDING)
                .values(next_attempt_at=now or utc_now())
            )
    return updated == 1


def finish_if_done(campaign_id: int, now: datetime, db_url: str | None = None) -> bool:
    """Mark a sending campaign finished once none of its jobs is pending; whether it was now."""
    pending = (
        sqlalchemy.select(Delivery.id).where(Delivery.campaign_id == campaign_id, Delivery.status == PENDING).exists()
    )
    with engine(db_url).begin() as connection:
        return (
            connection.execute(
                sqlalchemy.update(Campaign)
                .where(Campaign.id == campaign_id, Campaign.status == SENDING, ~pending)
                .values(status=FINISHED, finished_at=now)
            ).rowcount
            == 1
        )


def claim_release_batch(
    worker: str, now: datetime, lease: timedelta, limit: int, db_url: str | None = None
) -> list[ClaimedDelivery]:
    """Take up to ``limit`` due, unleased jobs of campaigns that are sending, oldest first, with their readers."""
    sending = sqlalchemy.select(Campaign.id).where(Campaign.status == SENDING)
    due = (
        sqlmodel.select(Delivery.id)
        .where(
            Delivery.status == PENDING,
            Delivery.campaign_id.in_(sending),
            Delivery.next_attempt_at <= now,
            sqlalchemy.or_(Delivery.lease_until.is_(None), Delivery.lease_until < now),
        )
        .order_by(Delivery.next_attempt_at, Delivery.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claim = (
        sqlalchemy.update(Delivery)
        .where(Delivery.id.in_(due.scalar_subquery()))
        .values(**_claiming(now, lease, worker))
        .returning(
            Delivery.id,
            Delivery.kind,
            Delivery.source_id,
            Delivery.message_id,
            Delivery.attempts,
            Delivery.give_up_at,
            Delivery.campaign_id,
            Delivery.stalled_claims,
        )
    )
    with open_session(db_url) as session:
        rows = sorted(session.execute(claim).all(), key=lambda row: row.id)
        session.commit()
        readers = {
            reader.id: reader
            for reader in session.exec(
                sqlmodel.select(Subscriber).where(Subscriber.id.in_([row.source_id for row in rows]))
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


def subscriber_status(subscriber_id: int, db_url: str | None = None) -> str | None:
    """Where the reader stands now (None: forgotten), read just before their email goes."""
    with engine(db_url).begin() as connection:
        return _status_of(connection, subscriber_id)


def _status_of(connection, subscriber_id: int) -> str | None:
    return connection.execute(
        sqlalchemy.select(Subscriber.status).where(Subscriber.id == subscriber_id)
    ).scalar_one_or_none()


def _update_held(delivery_ids: list[int], worker: str, db_url: str | None, **values) -> int:
    """Change the jobs of ``delivery_ids`` that ``worker`` still holds (pending, claimed by it)."""
    if not delivery_ids:
        return 0
    with engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.update(Delivery)
            .where(Delivery.id.in_(delivery_ids), Delivery.status == PENDING, Delivery.claimed_by == worker)
            .values(**values)
        ).rowcount


def release_leases(delivery_ids: list[int], worker: str, db_url: str | None = None) -> int:
    """Give back jobs this worker claimed but did not send (it stops), so others take them at once."""
    return _update_held(delivery_ids, worker, db_url, lease_until=None, attempts=Delivery.attempts - 1)


def renew_leases(delivery_ids: list[int], worker: str, until: datetime, db_url: str | None = None) -> int:
    """Keep the jobs of a batch still being sent in this worker's hands; how many still were."""
    return _update_held(delivery_ids, worker, db_url, lease_until=until)


def requeue(delivery_ids: list[int], now: datetime, retry_for: timedelta, db_url: str | None = None) -> None:
    """These jobs (failed or waiting) are due again when sending resumes, with a fresh retry window."""
    if not delivery_ids:
        return
    with engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.update(Delivery)
            .where(Delivery.id.in_(delivery_ids), Delivery.status.in_((PENDING, FAILED)))
            .values(status=PENDING, attempts=0, next_attempt_at=now, give_up_at=now + retry_for, lease_until=None)
        )


def release_leases_of(workers: list[str], db_url: str | None = None) -> int:
    """Free the leases of workers known to be dead (gateway/campaign.py finds them), so nobody waits."""
    if not workers:
        return 0
    with engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.update(Delivery)
            .where(Delivery.claimed_by.in_(workers), Delivery.status == PENDING, Delivery.lease_until.is_not(None))
            .values(lease_until=None, stalled_claims=Delivery.stalled_claims + 1)  # its sender died mid-send
        ).rowcount


def lease_holders(db_url: str | None = None) -> list[str]:
    with engine(db_url).begin() as connection:
        return list(
            connection.execute(
                sqlalchemy.select(Delivery.claimed_by)
                .where(Delivery.status == PENDING, Delivery.lease_until.is_not(None))
                .distinct()
            ).scalars()
        )


def reserve_send_slots(
    count: int, reserve: Callable[[datetime | None, datetime], tuple[datetime, datetime]], now: datetime, db_url=None
) -> datetime:
    """Take ``count`` sending slots from the site's one throttle row; when the first is.

    ``reserve(next_free, now)`` gives (first slot, next free after these): the rule
    (gateway/campaign.py). The row is locked while it is read and moved, so two
    senders never take the same slots.
    """
    with engine(db_url).begin() as connection:
        insert_once(connection, SendThrottle, "id", id=1, next_slot_at=now)
        next_free = connection.execute(
            sqlalchemy.select(SendThrottle.next_slot_at).where(SendThrottle.id == 1).with_for_update()
        ).scalar_one()
        first, after = reserve(next_free, now)
        connection.execute(sqlalchemy.update(SendThrottle).where(SendThrottle.id == 1).values(next_slot_at=after))
    return first
