"""Every SQL statement of the visit counts: the day's salts, the seen sets, the daily aggregates.

CONTRACT (issue 42): the signatures below are fixed; the storage helper fills them in.
Kinds of a count: "site", "page" (a route), "source", "campaign", "bot", "buy" ("slug host"),
and in the seen set also "minute" ("HHMM", for visitors now).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass
class Batch:
    """One flush of one worker: views per (day, kind, key), the visitor ids seen per key, and,
    on Redis (which already knows who is new), the new visitors per key."""

    views: dict[tuple[date, str, str], int] = field(default_factory=dict)
    seen: set[tuple[date, str, str, bytes]] = field(default_factory=set)
    new_visitors: dict[tuple[date, str, str], int] = field(default_factory=dict)


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
class VisitWeek:
    visitors: int
    views: int
    bots: int
    top_sources: tuple[KeyCount, ...]
    buys: tuple[KeyCount, ...]  # key "slug host"


def salt_for(day: date, now: datetime, db_url: str | None = None) -> bytes | None:
    raise NotImplementedError


def drop_expired(now: datetime, db_url: str | None = None) -> int:
    raise NotImplementedError


def flush(batch: Batch, seen_done: bool = False, db_url: str | None = None) -> None:
    raise NotImplementedError


def prune(today: date, keep_days: int, db_url: str | None = None) -> int:
    raise NotImplementedError


def daily(kind: str, since: date, until: date, key: str = "", db_url: str | None = None) -> list[DayCount]:
    raise NotImplementedError


def top(kind: str, since: date, until: date, limit: int = 10, db_url: str | None = None) -> list[KeyCount]:
    raise NotImplementedError


def visitors_now(now: datetime, minutes: int = 5, db_url: str | None = None) -> int:
    raise NotImplementedError


def week(until: date, db_url: str | None = None) -> VisitWeek:
    raise NotImplementedError
