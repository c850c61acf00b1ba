"""What the publisher's dashboard reads: counts are aggregates on indexed columns and lists have a limit,
so the page costs the same with a hundred readers or a hundred thousand (docs/performance.md)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import sqlalchemy
from sqlmodel import col

from publisher.rules import form_fields
from publisher.rules.list_rules import ListStatus
from publisher.storage import subscribers, tables
from publisher.storage.tables import (
    CONTACT,
    FAILED,
    PENDING,
    SENT,
    ContactMessage,
    Delivery,
    Subscriber,
    SubscriptionEvent,
    as_utc,
)

LISTED = 50  # rows in each of the dashboard's lists
# The record of consent's words for a leaving (an unsubscribe or a complaint, a bounce).
LEFT_EVENTS = (subscribers.UNSUBSCRIBED, subscribers.BOUNCED)


@dataclass(frozen=True)
class ReaderLine:
    email: str
    status: str
    joined_at: datetime


def _readers(statement, db_url: str | None) -> list[ReaderLine]:
    with tables.engine(db_url).connect() as connection:
        return [ReaderLine(email, status, as_utc(at)) for email, status, at in connection.execute(statement)]


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
    prefix = form_fields.one_line(text, form_fields.EMAIL_MAX).strip().lower()
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
    with tables.engine(db_url).connect() as connection:
        return [
            MessageLine(name, email, subject, as_utc(at), _DELIVERY_WORDS.get(status or "", STORED), text)
            for name, email, subject, at, status, text in connection.execute(statement)
        ]


@dataclass(frozen=True)
class OutboxHealth:
    waiting: int
    failing: int
    oldest_waiting_since: datetime | None


def outbox_health(db_url: str | None = None) -> OutboxHealth:
    """The outbox's emails not yet sent: how many wait, how many failed, since when the oldest waits."""
    with tables.engine(db_url).connect() as connection:
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
    return OutboxHealth(counts.get(PENDING, 0), counts.get(FAILED, 0), None if oldest is None else as_utc(oldest))


def _day_counts(connection, day_column, *where) -> dict[date, int]:
    """How many rows per day of ``day_column`` (a date in UTC), for the rows ``where`` selects."""
    day = sqlalchemy.func.date(day_column)
    rows = connection.execute(sqlalchemy.select(day, sqlalchemy.func.count()).where(*where).group_by(day)).all()
    return {date.fromisoformat(str(value)[:10]): count for value, count in rows if value is not None}


def confirmed_per_day(today: date, days: int = 90, db_url: str | None = None) -> list[int]:
    """Confirmed readers at the end of each of the last ``days`` days, oldest first: confirmed and not
    left by then. Two aggregates by day over the whole list, summed here."""
    left_status = col(Subscriber.status).in_((ListStatus.UNSUBSCRIBED, ListStatus.BOUNCED))
    ever_confirmed = sqlalchemy.and_(
        col(Subscriber.confirmed_at).is_not(None), col(Subscriber.status) != ListStatus.PENDING
    )
    left_at = sqlalchemy.case(
        (col(Subscriber.status) == ListStatus.UNSUBSCRIBED, col(Subscriber.unsubscribed_at)),
        else_=col(Subscriber.bounced_at),
    )
    with tables.engine(db_url).connect() as connection:
        joined = _day_counts(connection, col(Subscriber.confirmed_at), ever_confirmed)
        left = _day_counts(connection, left_at, ever_confirmed, left_status)
    first = today - timedelta(days=days - 1)
    running = sum(n for d, n in joined.items() if d < first) - sum(n for d, n in left.items() if d < first)
    series = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        running += joined.get(day, 0) - left.get(day, 0)
        series.append(running)
    return series


def _events_per_day(connection, since: datetime, events: Collection[str]) -> dict[date, int]:
    """How many of ``events`` the record of consent holds on each day since ``since``."""
    return _day_counts(
        connection,
        col(SubscriptionEvent.at),
        col(SubscriptionEvent.at) >= since,
        col(SubscriptionEvent.event).in_(events),
    )


def joined_and_left_per_week(today: date, weeks: int = 13, db_url: str | None = None) -> list[tuple[int, int]]:
    """Sign-ups and leavers (unsubscribed or bounced) in each of the last ``weeks`` weeks (7 days
    each, the last ending today), oldest first, from the record of consent."""
    first = today - timedelta(days=7 * weeks - 1)
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    with tables.engine(db_url).connect() as connection:
        joined = _events_per_day(connection, since, (subscribers.SUBSCRIBED,))
        left = _events_per_day(connection, since, LEFT_EVENTS)
    buckets = [[0, 0] for _ in range(weeks)]
    for counts, index in ((joined, 0), (left, 1)):
        for day, count in counts.items():
            week = (day - first).days // 7
            if 0 <= week < weeks:
                buckets[week][index] += count
    return [(joining, leaving) for joining, leaving in buckets]


@dataclass(frozen=True)
class ListDay:
    """What one day brought the list: sign-ups, confirmations (record of consent), contact messages."""

    day: date
    signups: int
    confirmations: int
    messages: int


def list_days(today: date, days: int, db_url: str | None = None) -> list[ListDay]:
    """Sign-ups, confirmations and contact messages on each of the last ``days`` days (the last is today),
    oldest first, zero-filled."""
    first = today - timedelta(days=days - 1)
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    with tables.engine(db_url).connect() as connection:
        signups = _events_per_day(connection, since, (subscribers.SUBSCRIBED,))
        confirmations = _events_per_day(connection, since, (subscribers.CONFIRMED,))
        messages = _day_counts(connection, col(ContactMessage.received_at), col(ContactMessage.received_at) >= since)
    return [
        ListDay(day, signups.get(day, 0), confirmations.get(day, 0), messages.get(day, 0))
        for day in (first + timedelta(days=offset) for offset in range(days))
    ]
