"""What the publisher's dashboard reads: counts are aggregates on indexed columns and lists have a limit,
so the page costs the same with a hundred readers or a hundred thousand (docs/performance.md)."""

from __future__ import annotations

import itertools
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import sqlalchemy
from sqlmodel import col

from publisher.content import admin_copy, books
from publisher.content.models import Book
from publisher.rules import form_fields, release_rules
from publisher.rules.list_rules import ListStatus
from publisher.storage import campaigns, subscribers, tables
from publisher.storage.tables import (
    CONTACT,
    FAILED,
    PENDING,
    SENT,
    ContactMessage,
    Delivery,
    Subscriber,
    SubscriptionEvent,
    Waiting,
    as_utc,
)

LISTED = 50  # rows in each of the dashboard's lists
# The list's figures count its readers, not addresses only waiting for a book.
ON_LIST = col(Subscriber.book_updates) == tables.ON_LIST
# The record of consent's words for a leaving (an unsubscribe or a complaint, a bounce).
LEFT_EVENTS = (subscribers.UNSUBSCRIBED, subscribers.BOUNCED)


_READERS: sqlalchemy.Select = sqlalchemy.select(
    col(Subscriber.email), col(Subscriber.status), col(Subscriber.subscribed_at).label("joined_at")
)


def _lines(statement, db_url: str | None) -> list[sqlalchemy.Row]:
    with tables.engine(db_url).connect() as connection:
        return list(connection.execute(statement))


def latest_signups(limit: int = LISTED, db_url: str | None = None) -> list[sqlalchemy.Row]:
    return _lines(_READERS.where(ON_LIST).order_by(col(Subscriber.id).desc()).limit(limit), db_url)


def find_readers(text: str, limit: int = LISTED, db_url: str | None = None) -> list[sqlalchemy.Row]:
    """A prefix search on the indexed ``email_key``, fast on any list; wildcards in ``text`` are taken as typed."""
    prefix = form_fields.one_line(text, form_fields.EMAIL_MAX).strip().lower()
    if not prefix:
        return []
    found = _READERS.where(col(Subscriber.email_key).startswith(prefix, autoescape=True))
    return _lines(found.order_by(col(Subscriber.email_key)).limit(limit), db_url)


# A contact message's email to the publisher, as the dashboard says it ("stored": kept without email, no SMTP).
_DELIVERY = {SENT: "delivered", PENDING: "waiting", FAILED: "failed"}


def latest_messages(db_url: str | None = None) -> list[sqlalchemy.Row]:
    statement = (
        sqlalchemy.select(
            col(ContactMessage.sender_name).label("sender"),
            col(ContactMessage.sender_email).label("email"),
            col(ContactMessage.subject),
            col(ContactMessage.received_at),
            sqlalchemy.case(_DELIVERY, value=col(Delivery.status), else_="stored").label("delivery"),
            col(ContactMessage.message).label("text"),
        )
        .select_from(ContactMessage)
        .outerjoin(
            Delivery, sqlalchemy.and_(col(Delivery.kind) == CONTACT, col(Delivery.source_id) == col(ContactMessage.id))
        )
        .order_by(col(ContactMessage.id).desc())
        .limit(LISTED)
    )
    return _lines(statement, db_url)


def outbox_health(db_url: str | None = None) -> sqlalchemy.Row:
    """The outbox's emails ``waiting`` and ``failing``, and since when the oldest waits."""
    waiting = col(Delivery.status) == PENDING
    statement = sqlalchemy.select(
        sqlalchemy.func.count().filter(waiting).label("waiting"),
        sqlalchemy.func.count().filter(col(Delivery.status) == FAILED).label("failing"),
        sqlalchemy.func.min(col(Delivery.created_at)).filter(waiting).label("oldest_waiting_since"),
    ).where(col(Delivery.status).in_((PENDING, FAILED)))  # by the index on status: sent ones never read
    with tables.engine(db_url).connect() as connection:
        return connection.execute(statement).one()


def _day_counts(connection, day_column, *where) -> dict[date, int]:
    day = sqlalchemy.func.date(day_column)
    rows = connection.execute(sqlalchemy.select(day, sqlalchemy.func.count()).where(*where).group_by(day)).all()
    return {date.fromisoformat(str(value)[:10]): count for value, count in rows if value is not None}


def _days(connection, first: date, days: int, day_column, *where) -> list[int]:
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    counts = _day_counts(connection, day_column, day_column >= since, *where)
    return [counts.get(first + timedelta(days=offset), 0) for offset in range(days)]


def confirmed_per_day(today: date, days: int = 90, db_url: str | None = None) -> list[int]:
    """Confirmed and not left by each day's end: two aggregates by day over the whole list, summed here."""
    left_status = col(Subscriber.status).in_((ListStatus.UNSUBSCRIBED, ListStatus.BOUNCED))
    ever_confirmed = sqlalchemy.and_(
        col(Subscriber.confirmed_at).is_not(None), col(Subscriber.status) != ListStatus.PENDING
    )
    left_at = sqlalchemy.case(
        (col(Subscriber.status) == ListStatus.UNSUBSCRIBED, col(Subscriber.unsubscribed_at)),
        else_=col(Subscriber.bounced_at),
    )
    with tables.engine(db_url).connect() as connection:
        joined = _day_counts(connection, col(Subscriber.confirmed_at), ever_confirmed, ON_LIST)
        left = _day_counts(connection, left_at, ever_confirmed, left_status, ON_LIST)
    first = today - timedelta(days=days - 1)
    before = sum(n for d, n in joined.items() if d < first) - sum(n for d, n in left.items() if d < first)
    changes = (joined.get(day, 0) - left.get(day, 0) for day in (first + timedelta(days=n) for n in range(days)))
    return list(itertools.accumulate(changes, initial=before))[1:]


def _events_per_day(connection, first: date, days: int, events: Collection[str]) -> list[int]:
    return _days(
        connection,
        first,
        days,
        col(SubscriptionEvent.at),
        col(SubscriptionEvent.event).in_(events),
        col(SubscriptionEvent.subscriber_id).in_(sqlalchemy.select(col(Subscriber.id)).where(ON_LIST)),
    )


def joined_and_left_per_week(today: date, weeks: int = 13, db_url: str | None = None) -> list[tuple[int, int]]:
    """From the record of consent, the last week ending today, oldest first."""
    first = today - timedelta(days=7 * weeks - 1)
    with tables.engine(db_url).connect() as connection:
        joined = _events_per_day(connection, first, 7 * weeks, (subscribers.SUBSCRIBED,))
        left = _events_per_day(connection, first, 7 * weeks, LEFT_EVENTS)
    return [(sum(joined[start : start + 7]), sum(left[start : start + 7])) for start in range(0, 7 * weeks, 7)]


@dataclass(frozen=True)
class ListDay:
    day: date
    signups: int
    confirmations: int
    messages: int


def list_days(today: date, days: int, db_url: str | None = None) -> list[ListDay]:
    first = today - timedelta(days=days - 1)
    with tables.engine(db_url).connect() as connection:
        signups = _events_per_day(connection, first, days, (subscribers.SUBSCRIBED,))
        confirmations = _events_per_day(connection, first, days, (subscribers.CONFIRMED,))
        messages = _days(connection, first, days, col(ContactMessage.received_at))
    return [
        ListDay(first + timedelta(days=offset), *figures)
        for offset, figures in enumerate(zip(signups, confirmations, messages, strict=True))
    ]


WAITLIST_DAYS = 30  # a forthcoming book's sign-ups: one figure a day, the last 30 days


@dataclass(frozen=True)
class ScheduledSend:
    """As the dashboard, ``publisher-gateway schedule`` and the Monday summary show it."""

    book: Book
    zone: str  # the book's
    status: str  # scheduled, moved, held; "" until a running site schedules it
    due_at: datetime
    confirmed: int
    pending: int
    per_day: list[int]  # the sign-ups to its waitlist on each of the last WAITLIST_DAYS days, today last

    @property
    def words(self) -> str:
        return admin_copy.FORTHCOMING_LINE.format(
            when=release_rules.publisher_words(self.due_at, self.zone),
            state=self.status or admin_copy.NOT_SCHEDULED,
            confirmed=f"{self.confirmed:,}",
            pending=f"{self.pending:,}",
        )


def scheduled_sends(now: datetime, db_url: str | None = None) -> list[ScheduledSend]:
    first = now.date() - timedelta(days=WAITLIST_DAYS - 1)
    by_book = {item.book_slug: item for item in campaigns.list_campaigns(db_url)}
    sends = []
    with tables.engine(db_url).connect() as connection:
        for book in books.BOOKS:
            item = by_book.get(book.slug)
            started = release_rules.is_out(book, now) if item is None else item.status not in tables.NOT_STARTED
            if book.release is None or started:
                continue
            of_book = col(Waiting.book_slug) == book.slug
            statuses = sqlalchemy.select(col(Subscriber.status), sqlalchemy.func.count()).join(
                Waiting, col(Waiting.subscriber_id) == col(Subscriber.id)
            )
            counts = dict(connection.execute(statuses.where(of_book).group_by(col(Subscriber.status))).all())
            due = as_utc(item.due_at or book.release.utc) if item else book.release.utc
            per_day = _days(connection, first, WAITLIST_DAYS, col(Waiting.asked_at), of_book)
            confirmed, pending = counts.get(ListStatus.CONFIRMED, 0), counts.get(ListStatus.PENDING, 0)
            status = item.status if item else ""
            sends.append(ScheduledSend(book, book.release.zone, status, due, confirmed, pending, per_day))
    return sorted(sends, key=lambda send: send.due_at)
