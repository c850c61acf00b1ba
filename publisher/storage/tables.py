"""The embedded gateway's engine, tables (schema: the migrations in ``alembic/``) and shared queries;
synchronous (callers run them in a thread). SQLite in write-ahead-log mode: readers never wait for a writer."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import sqlalchemy
import sqlmodel
from reflex import model as rx_model
from reflex_base.environment import environment
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import declared_attr
from sqlmodel import col

from publisher.reflex_internals.stored_state import PRIVATE_FILE_MODE
from publisher.rules import form_fields, visit_rules
from publisher.rules.admin_access import ADMIN_NAME_MAX
from publisher.rules.list_rules import ListStatus

logger = logging.getLogger(__name__)

# alembic.ini beside the package (a checkout, an editable install); the image sets ALEMBIC_CONFIG.
PROJECT_ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"


def alembic_config() -> Path:
    """The project's alembic.ini wherever the process runs from; an operator's ALEMBIC_CONFIG wins."""
    if not environment.ALEMBIC_CONFIG.is_set() and PROJECT_ALEMBIC_INI.is_file():
        environment.ALEMBIC_CONFIG.set(PROJECT_ALEMBIC_INI)
    return environment.ALEMBIC_CONFIG.get()


def engine(url: str | None = None) -> sqlalchemy.engine.Engine:
    """Reflex's engine (and pool) for ``url``; for a SQLite file, in write-ahead-log mode."""
    alembic_config()  # before Reflex looks for it (and warns "Database is not initialized")
    found = rx_model.get_engine(url)
    if found.dialect.name == "sqlite" and not sqlalchemy.event.contains(found, "connect", _write_ahead_log):
        private_sqlite_file(found.url)  # once per engine: before its first connection
        sqlalchemy.event.listen(found, "connect", _write_ahead_log)
    return found


def private_sqlite_file(url: sqlalchemy.engine.URL) -> None:
    """Made ``0600`` before SQLite opens it: SQLite gives a new -wal and -shm the database's mode."""
    path = url.database
    if url.get_backend_name() != "sqlite" or not path or path == ":memory:" or path.startswith("file:"):
        return
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT, PRIVATE_FILE_MODE))
    except OSError:
        return
    for name in (path, f"{path}-wal", f"{path}-shm"):
        with contextlib.suppress(OSError):  # not there, or another user's: left as it is
            os.chmod(name, PRIVATE_FILE_MODE)


def _write_ahead_log(dbapi_connection, _record) -> None:
    try:
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:  # busy: another connection switches it, or already has
        logger.debug("SQLite journal mode left as it is: %s", exc)


def open_session(db_url: str | None) -> sqlmodel.Session:
    return sqlmodel.Session(engine(db_url))


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A time read back from the database: SQLite gives it without a zone; every time stored is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Table(sqlmodel.SQLModel):
    @declared_attr  # type: ignore[arg-type]  # as SQLModel declares its own
    def __tablename__(cls) -> str:  # noqa: N805 (a class attribute, as SQLModel declares it)
        return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


class Row(Table):
    id: int | None = sqlmodel.Field(default=None, primary_key=True)


SOURCE_MAX = 64
LINK_KEY_MAX = 32


ON_LIST, WAITLIST_ONLY, ASKED_TO_JOIN = "yes", "no", "asked"  # book_updates


class Subscriber(Row, table=True):
    """``link_key`` is random and secret: the signed confirmation and unsubscribe links name the row by it."""

    email: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX)
    email_key: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX, unique=True, index=True)
    # The 24-hour confirmation rule counts per mailbox (no +tag, lower case): spellings cannot multiply emails.
    mailbox_key: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX, index=True)
    name: str = sqlmodel.Field(max_length=form_fields.NAME_MAX)
    # ON_LIST, WAITLIST_ONLY, or ASKED_TO_JOIN (waiting, confirmed, and asked to join: its confirmation makes it yes).
    book_updates: str = sqlmodel.Field(max_length=8)
    subscribed_at: datetime = sqlmodel.Field(default_factory=utc_now)
    status: str = sqlmodel.Field(default=ListStatus.PENDING, max_length=16, index=True)
    source: str = sqlmodel.Field(max_length=SOURCE_MAX)
    link_key: str = sqlmodel.Field(max_length=LINK_KEY_MAX, unique=True, index=True)
    confirmation_sent_at: datetime | None = None
    confirmed_at: datetime | None = None
    unsubscribed_at: datetime | None = None
    # When the address stopped taking mail (bounces): no list email goes to it until it signs up again.
    bounced_at: datetime | None = None


class SubscriptionEvent(Row, table=True):
    subscriber_id: int = sqlmodel.Field(index=True)
    event: str = sqlmodel.Field(max_length=16)
    # Indexed: the dashboard reads the events of a range of days.
    at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)
    how: str = sqlmodel.Field(max_length=SOURCE_MAX)
    # Why, in the words of what came back (a bounce's reason); None for the reader's own acts.
    detail: str | None = sqlmodel.Field(default=None, max_length=500)


class ContactMessage(Row, table=True):
    sender_name: str = sqlmodel.Field(max_length=2 * form_fields.NAME_MAX + 1)
    sender_email: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX)
    subject: str = sqlmodel.Field(max_length=form_fields.SUBJECT_MAX)
    message: str = sqlmodel.Field(max_length=form_fields.MESSAGE_MAX)
    # Indexed: the dashboard reads the messages of a range of days.
    received_at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)


# Skipped: when its turn came, the address no longer wanted it.
PENDING, SENT, FAILED, SKIPPED = "pending", "sent", "failed", "skipped"
MAX_STALLED_CLAIMS = 3
# What mark_sent returns when it read no subscriber's status (not a status: none is ever stored).
NOT_READ = "not read"
# What a job emails (source_id: the message or the subscriber); a release job has its campaign_id.
CONTACT, SUBSCRIBER, CONFIRMATION, WELCOME, RELEASE = "contact", "subscriber", "confirmation", "welcome", "release"
TO_SUBSCRIBER = (CONFIRMATION, WELCOME, RELEASE)
ABOUT_SUBSCRIBER = (SUBSCRIBER, CONFIRMATION, WELCOME, RELEASE)  # source_id names a subscriber
ERROR_MAX = 500


class Delivery(Row, table=True):
    """``message_id`` is fixed when stored, so a repeated send carries the same Message-ID."""

    __tablename__ = "outbox_delivery"  # type: ignore[assignment]  # a str where Table has its rule
    # A reader is queued at most once per campaign, whatever runs twice (NULLs, other jobs, never clash).
    __table_args__ = (
        sqlalchemy.UniqueConstraint("campaign_id", "source_id", name="uq_outbox_delivery_campaign_reader"),
    )

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
    # Claims that ended with no outcome (the sender died mid-send): past MAX_STALLED_CLAIMS, given up.
    stalled_claims: int = sqlmodel.Field(default=0, sa_column_kwargs={"server_default": "0"})


# A forthcoming book's campaign waits first: scheduled (at its release moment), moved or held (docs/mailing-list.md).
SENDING, PAUSED, FINISHED = "sending", "paused", "finished"
SCHEDULED, MOVED, HELD = "scheduled", "moved", "held"
NOT_STARTED = (SCHEDULED, MOVED, HELD)


class Campaign(Row, table=True):
    """``recipients``: the readers queued in the same transaction as this row."""

    book_slug: str = sqlmodel.Field(max_length=120, unique=True)
    subject: str = sqlmodel.Field(max_length=form_fields.SUBJECT_MAX)
    status: str = sqlmodel.Field(default=SENDING, max_length=16)
    recipients: int = 0
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    finished_at: datetime | None = None
    paused_reason: str | None = sqlmodel.Field(default=None, max_length=ERROR_MAX)
    # The counts at the last resume: the pause thresholds judge only what came after.
    baseline_sent: int = sqlmodel.Field(default=0, sa_column_kwargs={"server_default": "0"})
    baseline_hard: int = sqlmodel.Field(default=0, sa_column_kwargs={"server_default": "0"})
    baseline_complaints: int = sqlmodel.Field(default=0, sa_column_kwargs={"server_default": "0"})
    # When a scheduled campaign starts by itself (None: started by hand, announce).
    due_at: datetime | None = None


class Waiting(Row, table=True):
    __table_args__ = (sqlalchemy.UniqueConstraint("subscriber_id", "book_slug", name="uq_waiting_reader_book"),)

    subscriber_id: int = sqlmodel.Field(index=True)
    book_slug: str = sqlmodel.Field(max_length=120, index=True)
    asked_at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)


# Where a bounce or complaint came from.
AT_SENDING, FROM_MAILBOX, FROM_WEBHOOK = "sending", "mailbox", "webhook"
REASON_MAX = 500


class Bounce(Row, table=True):
    """``delivery_id``: the email it is about, so soft bounces count per email and a campaign its own."""

    at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)
    subscriber_id: int = sqlmodel.Field(index=True)
    email: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX)
    kind: str = sqlmodel.Field(max_length=16)
    reason: str = sqlmodel.Field(max_length=REASON_MAX)
    source: str = sqlmodel.Field(max_length=16)
    delivery_id: int | None = sqlmodel.Field(default=None, index=True)
    campaign_id: int | None = sqlmodel.Field(default=None, index=True)


class MailboxMessage(Row, table=True):
    """``digest`` (SHA-256) keeps a copy under another UID from being processed twice."""

    __table_args__ = (sqlalchemy.UniqueConstraint("folder", "uidvalidity", "uid", name="uq_mailbox_message_place"),)

    folder: str = sqlmodel.Field(max_length=200)
    uidvalidity: int = sqlmodel.Field(sa_type=sqlalchemy.BigInteger)
    uid: int = sqlmodel.Field(sa_type=sqlalchemy.BigInteger)
    digest: str | None = sqlmodel.Field(default=None, max_length=64, index=True)
    size: int | None = None
    outcome: str = sqlmodel.Field(max_length=16, index=True)
    subject: str = sqlmodel.Field(max_length=200)
    sender: str = sqlmodel.Field(max_length=form_fields.EMAIL_MAX)
    # Why it was left, or what was not read of it ("names no email this site sent").
    note: str = sqlmodel.Field(default="", max_length=REASON_MAX)
    seen_at: datetime = sqlmodel.Field(default_factory=utc_now)
    last_seen_at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)


class JobLease(Row, table=True):
    """A job one worker at a time does across containers (the bounce mailbox): ``until`` in the future holds it."""

    name: str = sqlmodel.Field(max_length=32, unique=True)
    holder: str = sqlmodel.Field(max_length=64)
    until: datetime


class JobStatus(Row, table=True):
    name: str = sqlmodel.Field(max_length=32, unique=True)
    last_success_at: datetime | None = None
    # Since when it has failed without a success in between (None: its last run succeeded).
    failing_since: datetime | None = None
    last_error: str | None = sqlmodel.Field(default=None, max_length=ERROR_MAX)


NOTICE = "notice"  # an outbox job that emails the publisher a notice (source_id: publisher_notice)


class PublisherNotice(Row, table=True):
    """At most one of each kind a period (``period``: the day, or the week's Monday for the summary)."""

    __table_args__ = (sqlalchemy.UniqueConstraint("kind", "period", name="uq_publisher_notice_kind_period"),)

    kind: str = sqlmodel.Field(max_length=16)
    period: str = sqlmodel.Field(max_length=10)  # YYYY-MM-DD
    subject: str = sqlmodel.Field(max_length=form_fields.SUBJECT_MAX)
    body: str
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)


class SendThrottle(Row, table=True):
    next_slot_at: datetime


TOKEN_HASH_MAX = 64  # a SHA-256 in hex (rules/admin_access.token_hash)


class Admin(Row, table=True):
    """``user_handle``: the random WebAuthn user id, never their name: an authenticator learns nothing from it."""

    name: str = sqlmodel.Field(max_length=ADMIN_NAME_MAX, unique=True)
    user_handle: str = sqlmodel.Field(max_length=64, unique=True)
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)


class AdminPasskey(Row, table=True):
    """A signature counter that goes backwards is a cloned key: refused."""

    admin_id: int = sqlmodel.Field(index=True)
    # A WebAuthn credential id is at most 1,023 bytes: 1,364 characters of base64url.
    credential_id: str = sqlmodel.Field(max_length=1400, unique=True)
    public_key: bytes = sqlmodel.Field(sa_type=sqlalchemy.LargeBinary)
    sign_count: int = sqlmodel.Field(default=0, sa_type=sqlalchemy.BigInteger)
    name: str = sqlmodel.Field(max_length=ADMIN_NAME_MAX)
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    last_used_at: datetime | None = None


class AdminEnrolment(Table, table=True):
    token_hash: str = sqlmodel.Field(max_length=TOKEN_HASH_MAX, primary_key=True)
    admin_id: int = sqlmodel.Field(index=True)
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    expires_at: datetime = sqlmodel.Field(index=True)


class AdminSession(Table, table=True):
    """Rows, so every worker and container sees a sign-out or a revoke at once."""

    token_hash: str = sqlmodel.Field(max_length=TOKEN_HASH_MAX, primary_key=True)
    admin_id: int = sqlmodel.Field(index=True)
    created_at: datetime = sqlmodel.Field(default_factory=utc_now)
    last_active_at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)


class UsedFormToken(Row, table=True):
    """Kept until the token expires, so it never answers a second submit, after a restart or on another worker."""

    nonce: str = sqlmodel.Field(max_length=32, unique=True)  # rules/form_tokens.py: 22 characters, with room
    expires_at: datetime = sqlmodel.Field(index=True)


CEREMONY_ADDRESS_MAX = 64  # an IPv4 address, an IPv6 /64 ("2001:db8:1:2::/64"), with room


class AdminCeremony(Table, table=True):
    """``address`` bounds the ceremonies one address may have waiting."""

    id_hash: str = sqlmodel.Field(max_length=TOKEN_HASH_MAX, primary_key=True)
    challenge: bytes = sqlmodel.Field(sa_type=sqlalchemy.LargeBinary)
    enrolment_hash: str | None = sqlmodel.Field(default=None, max_length=TOKEN_HASH_MAX)
    address: str = sqlmodel.Field(default="", max_length=CEREMONY_ADDRESS_MAX)
    expires_at: datetime = sqlmodel.Field(index=True)


AUDIT_TARGET_MAX = 500


class AdminAudit(Row, table=True):
    """Never deleted by the site (``forget`` names the address it erased: the publisher's record that they did)."""

    at: datetime = sqlmodel.Field(default_factory=utc_now, index=True)
    admin: str = sqlmodel.Field(max_length=ADMIN_NAME_MAX)
    action: str = sqlmodel.Field(max_length=32)
    target: str = sqlmodel.Field(max_length=AUDIT_TARGET_MAX)


VISIT_KIND_MAX = 16  # "site", "page", "source", "campaign", "bot", "buy", "minute"
# A key: a route, a source, a label (rules/visit_rules.LABEL_MAX), "HHMM", or "<slug> <store host>" (host <= 253).
VISIT_KEY_MAX = 400


class VisitSalt(Table, table=True):
    """A visitor's id is a keyed hash under the day's salt, so one person cannot be followed across days."""

    day: date = sqlmodel.Field(primary_key=True)
    salt: bytes = sqlmodel.Field(sa_type=sqlalchemy.LargeBinary)
    destroyed_at: datetime


class VisitSeen(Table, table=True):
    """By salted visitor id (never an address or a user agent); ``minute`` rows ("HHMM") give the visitors now."""

    day: date = sqlmodel.Field(primary_key=True)
    kind: str = sqlmodel.Field(primary_key=True, max_length=VISIT_KIND_MAX)
    key: str = sqlmodel.Field(primary_key=True, max_length=VISIT_KEY_MAX)
    visitor: bytes = sqlmodel.Field(primary_key=True, sa_type=sqlalchemy.LargeBinary(visit_rules.VISITOR_ID_BYTES))


class VisitCount(Table, table=True):
    """The key's order (kind, day, key) serves every read (one kind over days); ``day``'s index, the daily prune."""

    kind: str = sqlmodel.Field(primary_key=True, max_length=VISIT_KIND_MAX)
    day: date = sqlmodel.Field(primary_key=True, index=True)
    key: str = sqlmodel.Field(primary_key=True, max_length=VISIT_KEY_MAX)
    views: int = sqlmodel.Field(default=0, sa_type=sqlalchemy.BigInteger)
    visitors: int = sqlmodel.Field(default=0, sa_type=sqlalchemy.BigInteger)


def upsert_insert(connection) -> Callable[..., postgresql.Insert | sqlite.Insert]:
    """The dialect's INSERT, which has ON CONFLICT: the site's databases are SQLite and PostgreSQL."""
    name = connection.dialect.name
    if name not in ("postgresql", "sqlite"):
        raise RuntimeError(f"the site needs SQLite or PostgreSQL, not {name}")
    return postgresql.insert if name == "postgresql" else sqlite.insert


def insert_once(
    connection, model: type[sqlmodel.SQLModel], unique_column: str | tuple[str, ...], **values
) -> int | None:
    """The new id, or None; ON CONFLICT DO NOTHING: for two at once, no aborted transaction."""
    columns = [unique_column] if isinstance(unique_column, str) else list(unique_column)
    statement = (
        upsert_insert(connection)(model)
        .values(**values)
        .on_conflict_do_nothing(index_elements=columns)
        # A row only when inserted (rowcount is not reliable here). Every table passed has an id column.
        .returning(model.id)  # type: ignore[attr-defined]
    )
    return connection.execute(statement).scalar_one_or_none()


def locked_subscriber(connection, column, value) -> Subscriber | None:
    row = connection.execute(sqlmodel.select(Subscriber).where(column == value).with_for_update()).first()
    return None if row is None else Subscriber.model_validate(dict(row._mapping))


def record_event(
    connection, subscriber_id: int, event: str, how: str, now: datetime, detail: str | None = None
) -> None:
    values = {"subscriber_id": subscriber_id, "event": event, "at": now, "how": how, "detail": detail}
    connection.execute(sqlalchemy.insert(SubscriptionEvent).values(**values))


def lock_mailbox(connection, mailbox_key: str) -> None:
    """Serialise sign-ups to one mailbox until the transaction ends, so two spellings cannot both earn
    a confirmation (SQLite: a write that changes nothing takes its one write lock first)."""
    if connection.dialect.name == "sqlite":
        connection.execute(sqlalchemy.update(Subscriber).where(sqlalchemy.false()).values(id=Subscriber.id))
    elif connection.dialect.name == "postgresql":
        connection.execute(
            sqlalchemy.select(sqlalchemy.func.pg_advisory_xact_lock(sqlalchemy.func.hashtext(mailbox_key)))
        )


def last_confirmation_to(connection, mailbox_key: str) -> datetime | None:
    latest = sqlalchemy.select(sqlalchemy.func.max(col(Subscriber.confirmation_sent_at)))
    return connection.execute(latest.where(col(Subscriber.mailbox_key) == mailbox_key)).scalar_one_or_none()


@dataclass(frozen=True)
class Job:
    message_id: str
    retry_for: timedelta


def delivery_values(kind: str, source_id: int, job: Job, now: datetime) -> dict:
    return {
        "kind": kind,
        "source_id": source_id,
        "message_id": job.message_id,
        "created_at": now,
        "next_attempt_at": now,
        "give_up_at": now + job.retry_for,
    }


def store_message(body: ContactMessage, db_url: str | None = None, job: Job | None = None) -> int:
    now = utc_now()
    fields = body.model_dump(exclude={"id", "received_at"})
    with engine(db_url).begin() as connection:
        stored = connection.execute(sqlalchemy.insert(ContactMessage).values(**fields, received_at=now))
        message_id = stored.inserted_primary_key[0]  # type: ignore[index]
        if job is not None:
            connection.execute(sqlalchemy.insert(Delivery).values(**delivery_values(CONTACT, message_id, job, now)))
    return message_id


def list_messages(db_url: str | None = None) -> list[ContactMessage]:
    with open_session(db_url) as session:
        return list(session.exec(sqlmodel.select(ContactMessage).order_by(col(ContactMessage.id))))


def first_token_use(nonce: str, remember_for: timedelta, now: datetime, db_url: str | None = None) -> bool:
    """True when nobody had used ``nonce``: of two racing submits one inserts."""
    with engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.delete(UsedFormToken).where(col(UsedFormToken.expires_at) <= now))
        inserted = insert_once(connection, UsedFormToken, "nonce", nonce=nonce, expires_at=now + remember_for)
    return inserted is not None
