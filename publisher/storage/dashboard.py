"""What the publisher's dashboard reads (web/states/admin.py): every query bounded.

Counts are aggregates on indexed columns and lists have a limit, so the page costs the same
with a hundred readers or a hundred thousand (benchmarks: docs/performance.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy
from sqlmodel import col

from publisher.rules import validation
from publisher.storage.tables import (
    CONTACT,
    FAILED,
    PENDING,
    SENT,
    ContactMessage,
    Delivery,
    Subscriber,
    engine,
)

LISTED = 50  # rows in each of the dashboard's lists


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class ReaderLine:
    email: str
    status: str
    joined_at: datetime


def _readers(statement, db_url: str | None) -> list[ReaderLine]:
    with engine(db_url).connect() as connection:
        return [ReaderLine(email, status, _utc(at)) for email, status, at in connection.execute(statement)]


def latest_signups(limit: int = LISTED, db_url: str | None = None) -> list[ReaderLine]:
    """The latest sign-ups (and imports), newest first."""
    statement = (
        sqlalchemy.select(col(Subscriber.email), col(Subscriber.status), col(Subscriber.subscribed_at))
        .order_by(col(Subscriber.id).desc())
        .limit(limit)
    )
    return _readers(statement, db_url)


def find_readers(text: str, limit: int = LISTED, db_url: str | None = None) -> list[ReaderLine]:
    """The readers whose address starts with ``text`` (letter case aside): a prefix search on the
    indexed ``email_key``, so it stays fast on any list. Wildcards in ``text`` are taken as typed."""
    prefix = validation.one_line(text, validation.EMAIL_MAX).strip().lower()
    if not prefix:
        return []
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    statement = (
        sqlalchemy.select(col(Subscriber.email), col(Subscriber.status), col(Subscriber.subscribed_at))
        .where(col(Subscriber.email_key).like(escaped + "%", escape="\\"))
        .order_by(col(Subscriber.email_key))
        .limit(limit)
    )
    return _readers(statement, db_url)


# A contact message's email to the publisher, as the dashboard says it.
DELIVERED, WAITING, NOT_SENT, STORED = "delivered", "waiting", "failed", "stored"
_DELIVERY_WORDS = {SENT: DELIVERED, PENDING: WAITING, FAILED: NOT_SENT}


@dataclass(frozen=True)
class MessageLine:
    sender: str
    email: str
    subject: str
    received_at: datetime
    delivery: str  # delivered, waiting, failed; stored: kept without email (no SMTP)
    text: str


def latest_messages(limit: int = LISTED, db_url: str | None = None) -> list[MessageLine]:
    """The contact messages, newest first, with what became of their email to the publisher."""
    statement = (
        sqlalchemy.select(
            col(ContactMessage.sender_name),
            col(ContactMessage.sender_email),
            col(ContactMessage.subject),
            col(ContactMessage.received_at),
            col(Delivery.status),
            col(ContactMessage.message),
        )
        .select_from(ContactMessage)
        .outerjoin(
            Delivery, sqlalchemy.and_(col(Delivery.kind) == CONTACT, col(Delivery.source_id) == col(ContactMessage.id))
        )
        .order_by(col(ContactMessage.id).desc())
        .limit(limit)
    )
    with engine(db_url).connect() as connection:
        return [
            MessageLine(name, email, subject, _utc(at), _DELIVERY_WORDS.get(status or "", STORED), text)
            for name, email, subject, at, status, text in connection.execute(statement)
        ]


@dataclass(frozen=True)
class OutboxHealth:
    waiting: int
    failing: int
    oldest_waiting_since: datetime | None


def outbox_health(db_url: str | None = None) -> OutboxHealth:
    """The outbox's emails not yet sent: how many wait, how many failed, since when the oldest waits."""
    with engine(db_url).connect() as connection:
        counts = dict(
            connection.execute(
                sqlalchemy.select(col(Delivery.status), sqlalchemy.func.count())
                .where(col(Delivery.status).in_((PENDING, FAILED)))
                .group_by(col(Delivery.status))
            ).all()
        )
        oldest = connection.execute(
            sqlalchemy.select(sqlalchemy.func.min(col(Delivery.created_at))).where(col(Delivery.status) == PENDING)
        ).scalar_one_or_none()
    return OutboxHealth(counts.get(PENDING, 0), counts.get(FAILED, 0), None if oldest is None else _utc(oldest))
