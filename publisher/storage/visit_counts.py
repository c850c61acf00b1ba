"""Every SQL statement of the visit counts: the day's salts, the seen sets, the daily aggregates.
Every read is one kind over a range of days on the primary key, so its cost never grows with the
visitors; visitors over several days are visitor-days (nothing links one day's to the next)."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

import sqlalchemy
from sqlmodel import col

from publisher.rules import visit_rules
from publisher.rules.visit_rules import VisitKind
from publisher.storage import tables
from publisher.storage.tables import VISIT_KEY_MAX, VISIT_KIND_MAX, VisitCount, VisitSalt, VisitSeen, as_utc

# Rows per INSERT: well under SQLite's 32,766 bound parameters (four a seen row, five a count).
CHUNK_ROWS = 500
# The weekly summary's figures: the top sources, and every book-and-store pair pressed (a few books).
WEEK_SOURCES = 5
WEEK_BUYS = 50
# "Visitors now" on the dashboard: the distinct visitors of the last this many minutes.
VISITORS_NOW_MINUTES = 5

_Row = TypeVar("_Row")


@dataclass
class Batch:
    """One flush of one worker: views per (day, kind, key), and the visitor ids seen per key."""

    views: dict[tuple[date, str, str], int] = field(default_factory=dict)
    seen: set[tuple[date, str, str, bytes]] = field(default_factory=set)


@dataclass(frozen=True)
class DayCount:
    day: date
    views: int
    visitors: int


@dataclass(frozen=True)
class KeyCount:
    key: str
    views: int
    visitors: int


@dataclass(frozen=True)
class BookFunnel:
    """One book over a period: its page's visits, and its buy buttons' presses at every store."""

    slug: str
    page_visitors: int
    page_views: int
    presses: int
    people_pressing: int


@dataclass(frozen=True)
class VisitWeek:
    visitors: int
    views: int
    bots: int
    top_sources: tuple[KeyCount, ...]
    buys: tuple[KeyCount, ...]  # key "slug host"


def _last_destroyed_day(now: datetime) -> date:
    """The latest day whose salt's destroy time is ``now`` or earlier (day 00:00 UTC + 48 h <= now)."""
    return visit_rules.day_of(as_utc(now) - timedelta(hours=visit_rules.SALT_LIFETIME_HOURS))


def _chunks(rows: list[_Row]) -> Iterator[list[_Row]]:
    for start in range(0, len(rows), CHUNK_ROWS):
        yield rows[start : start + CHUNK_ROWS]


def salt_for(day: date, now: datetime, db_url: str | None = None) -> bytes | None:
    """The day's salt (32 random bytes), made by the first worker to ask and the same for all;
    None once the day's destroy time has passed: a destroyed salt is never made again."""
    destroyed_at = visit_rules.salt_destroyed_at(day)
    if as_utc(now) >= destroyed_at:
        return None
    with tables.engine(db_url).begin() as connection:
        insert = tables.upsert_insert(connection)
        connection.execute(
            insert(VisitSalt)
            .values(day=day, salt=secrets.token_bytes(visit_rules.SALT_BYTES), destroyed_at=destroyed_at)
            .on_conflict_do_nothing(index_elements=["day"])
        )
        salt = connection.execute(
            sqlalchemy.select(col(VisitSalt.salt)).where(col(VisitSalt.day) == day)
        ).scalar_one_or_none()
    return None if salt is None else bytes(salt)


def drop_expired(now: datetime, db_url: str | None = None) -> date | None:
    """Delete the salts and seen rows of every day whose destroy time (00:00 UTC + 48 h) has
    passed: the days before yesterday. The first day of those left, or None: when to come back."""
    last = _last_destroyed_day(now)
    with tables.engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.delete(VisitSeen).where(col(VisitSeen.day) <= last))
        connection.execute(sqlalchemy.delete(VisitSalt).where(col(VisitSalt.day) <= last))
        firsts = [
            connection.execute(sqlalchemy.select(sqlalchemy.func.min(col(table.day)))).scalar_one()
            for table in (VisitSalt, VisitSeen)
        ]
    return min((day for day in firsts if day is not None), default=None)


def _clipped(kind: str, key: str) -> tuple[str, str]:
    """A kind and key that fit their columns: one overlong label must not fail the whole flush."""
    return kind[:VISIT_KIND_MAX], key[:VISIT_KEY_MAX]


def _summed(counts: Mapping[tuple[date, str, str], int]) -> Counter[tuple[str, date, str]]:
    """Counts by the count table's key (kind, day, key), clipped (two keys may become one)."""
    summed: Counter[tuple[str, date, str]] = Counter()
    for (day, kind, key), number in counts.items():
        kind, key = _clipped(kind, key)
        if kind != VisitKind.MINUTE:
            summed[(kind, day, key)] += number
    return summed


def _insert_seen(connection, seen: Iterable[tuple[date, str, str, bytes]]) -> Counter[tuple[str, date, str]]:
    """Insert the seen rows not there yet; the new visitors per (kind, day, key). In key order, so
    two workers flushing the same visitors at once wait on each other instead of deadlocking."""
    insert = tables.upsert_insert(connection)
    rows = sorted({(day, *_clipped(kind, key), bytes(visitor)) for day, kind, key, visitor in seen})
    new: Counter[tuple[str, date, str]] = Counter()
    for chunk in _chunks(rows):
        statement = (
            insert(VisitSeen)
            .values([{"day": day, "kind": kind, "key": key, "visitor": visitor} for day, kind, key, visitor in chunk])
            .on_conflict_do_nothing(index_elements=["day", "kind", "key", "visitor"])
            # Only the rows inserted come back: the visitors this day's key had not seen.
            .returning(col(VisitSeen.day), col(VisitSeen.kind), col(VisitSeen.key))
        )
        for day, kind, key in connection.execute(statement):
            if kind != VisitKind.MINUTE:
                new[(kind, day, key)] += 1
    return new


def _add_counts(
    connection, views: Mapping[tuple[str, date, str], int], visitors: Mapping[tuple[str, date, str], int]
) -> None:
    """Add to each day's count (inserted at its first view): views + views, visitors + new visitors."""
    insert = tables.upsert_insert(connection)
    keys = sorted(set(views) | set(visitors))  # in the primary key's order: no deadlock between workers
    rows = [
        {
            "kind": kind,
            "day": day,
            "key": key,
            "views": views.get((kind, day, key), 0),
            "visitors": visitors.get((kind, day, key), 0),
        }
        for kind, day, key in keys
    ]
    for chunk in _chunks(rows):
        statement = insert(VisitCount).values(chunk)
        statement = statement.on_conflict_do_update(
            index_elements=["kind", "day", "key"],
            set_={
                "views": col(VisitCount.views) + statement.excluded.views,
                "visitors": col(VisitCount.visitors) + statement.excluded.visitors,
            },
        )
        connection.execute(statement)


def _part(batch: Batch, labelled: bool) -> Batch:
    def wanted(kind: str) -> bool:
        return (kind in visit_rules.LABEL_KINDS) is labelled

    return Batch(
        {counted: n for counted, n in batch.views.items() if wanted(counted[1])},
        {seen for seen in batch.seen if wanted(seen[1])},
    )


def _within_room(connection, batch: Batch) -> Batch:
    """The labels' batch with each (kind, day)'s labels past LABELS_PER_DAY folded into "(other)":
    the room goes to the new labels with the most views."""
    roomless = visit_rules.KNOWN_SOURCES | {visit_rules.OTHER}  # they take no room
    folded: dict[tuple[date, str, str], tuple[date, str, str]] = {}
    for day, kind in {(day, kind) for day, kind, _ in batch.views}:
        stored = set(
            connection.execute(
                sqlalchemy.select(col(VisitCount.key)).where(col(VisitCount.kind) == kind, col(VisitCount.day) == day)
            ).scalars()
        )
        room = visit_rules.LABELS_PER_DAY - len(stored - roomless)
        new = [counted for counted in batch.views if counted[:2] == (day, kind) and counted[2] not in stored | roomless]
        for counted in sorted(new, key=lambda counted: (-batch.views[counted], counted[2]))[max(room, 0) :]:
            folded[counted] = (day, kind, visit_rules.OTHER)
    if not folded:
        return batch

    def into(counts: dict[tuple[date, str, str], int]) -> dict[tuple[date, str, str], int]:
        summed: Counter[tuple[date, str, str]] = Counter()
        for counted, number in counts.items():
            summed[folded.get(counted, counted)] += number
        return dict(summed)

    seen = {(*folded.get((day, kind, key), (day, kind, key)), visitor) for day, kind, key, visitor in batch.seen}
    return Batch(into(batch.views), seen)


def _write(connection, batch: Batch) -> None:
    _add_counts(connection, _summed(batch.views), _insert_seen(connection, batch.seen))


def flush(batch: Batch, db_url: str | None = None) -> None:
    """Write one worker's batch in one transaction. Keys without labels go first: their "site" upsert
    makes another flush wait, so each reads the labels' room after."""
    if not batch.views and not batch.seen:
        return
    with tables.engine(db_url).begin() as connection:
        _write(connection, _part(batch, labelled=False))
        _write(connection, _within_room(connection, _part(batch, labelled=True)))


def prune(today: date, keep_days: int, db_url: str | None = None) -> int:
    """Delete the counts older than ``keep_days`` days (today is the first of them); the rows deleted."""
    if keep_days < 1:
        raise ValueError(f"keep_days must be at least 1, not {keep_days}")
    oldest_kept = today - timedelta(days=keep_days - 1)
    with tables.engine(db_url).begin() as connection:
        return connection.execute(sqlalchemy.delete(VisitCount).where(col(VisitCount.day) < oldest_kept)).rowcount


def _between(kind: str, since: date, until: date) -> sqlalchemy.ColumnElement[bool]:
    return sqlalchemy.and_(col(VisitCount.kind) == kind, col(VisitCount.day) >= since, col(VisitCount.day) <= until)


def daily(kind: str, since: date, until: date, key: str = "", db_url: str | None = None) -> list[DayCount]:
    """Views and visitors of one kind and key on each day from ``since`` to ``until`` (both
    included), oldest first, a day without any as zeros: one row per day, every day there."""
    with tables.engine(db_url).connect() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(VisitCount.day), col(VisitCount.views), col(VisitCount.visitors)).where(
                _between(kind, since, until), col(VisitCount.key) == key
            )
        )
        found = {day: (views, visitors) for day, views, visitors in rows}
    days = [since + timedelta(days=offset) for offset in range((until - since).days + 1)]
    return [DayCount(day, *found.get(day, (0, 0))) for day in days]


def book_funnels(
    pages: Mapping[str, str], buys: list[KeyCount], since: date, until: date, db_url: str | None = None
) -> list[BookFunnel]:
    """``pages``: each book's slug and its page's route; ``buys``: the period's presses ("slug host")."""
    funnels = []
    for slug, route in pages.items():
        days = daily(VisitKind.PAGE, since, until, key=route, db_url=db_url)
        pressed = [buy for buy in buys if buy.key.partition(" ")[0] == slug]
        visitors, views = sum(day.visitors for day in days), sum(day.views for day in days)
        presses, people = sum(buy.views for buy in pressed), sum(buy.visitors for buy in pressed)
        funnels.append(BookFunnel(slug, visitors, views, presses, people))
    return funnels


def top(kind: str, since: date, until: date, limit: int = 10, db_url: str | None = None) -> list[KeyCount]:
    """The keys of one kind from ``since`` to ``until`` (both included), summed over the days,
    the most visitors first (then views, then the key): at most ``limit``."""
    views = sqlalchemy.func.sum(col(VisitCount.views))
    visitors = sqlalchemy.func.sum(col(VisitCount.visitors))
    with tables.engine(db_url).connect() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(VisitCount.key), views, visitors)
            .where(_between(kind, since, until))
            .group_by(col(VisitCount.key))
            .order_by(visitors.desc(), views.desc(), col(VisitCount.key))
            .limit(limit)
        ).all()
    return [KeyCount(key, int(views), int(visitors)) for key, views, visitors in rows]


def visitors_now(now: datetime, minutes: int = VISITORS_NOW_MINUTES, db_url: str | None = None) -> int:
    """The distinct visitors seen in the current minute and the ``minutes`` before it (the
    "minute" seen rows, "HHMM" in UTC; before midnight they are yesterday's)."""
    moment = as_utc(now).astimezone(UTC)
    keys_by_day: dict[date, list[str]] = {}
    for back in range(minutes + 1):
        then = moment - timedelta(minutes=back)
        keys_by_day.setdefault(then.date(), []).append(visit_rules.minute_key(then))
    in_window = sqlalchemy.or_(
        *(sqlalchemy.and_(col(VisitSeen.day) == day, col(VisitSeen.key).in_(keys)) for day, keys in keys_by_day.items())
    )
    with tables.engine(db_url).connect() as connection:
        return connection.execute(
            sqlalchemy.select(sqlalchemy.func.count(sqlalchemy.distinct(col(VisitSeen.visitor)))).where(
                col(VisitSeen.kind) == VisitKind.MINUTE, in_window
            )
        ).scalar_one()


def week(until: date, db_url: str | None = None) -> VisitWeek:
    """The seven days before ``until`` (not included), for the weekly summary."""
    since, last = until - timedelta(days=7), until - timedelta(days=1)
    site = daily(VisitKind.SITE, since, last, db_url=db_url)
    bots = daily(VisitKind.BOT, since, last, db_url=db_url)
    sources = top(VisitKind.SOURCE, since, last, WEEK_SOURCES, db_url)
    buys = top(VisitKind.BUY, since, last, WEEK_BUYS, db_url)
    return VisitWeek(
        visitors=sum(day.visitors for day in site),
        views=sum(day.views for day in site),
        bots=sum(day.views for day in bots),
        top_sources=tuple(sources),
        buys=tuple(buys),
    )
