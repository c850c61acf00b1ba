"""With Redis: the day's visitors per key in Redis sets (``SADD`` says who is new across every
worker), and each visitor's latest minute for "visitors now". Every key expires with its day's
salt, and a visitor id is a hash under it: nothing here names an address or a user agent."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta

from publisher.rules import visit_rules
from publisher.storage.visit_counts import Batch

SEEN_KEY_PREFIX = "publisher:visits:seen:"
NOW_KEY_PREFIX = "publisher:visits:now:"


def seen_key(day: date, kind: str, key: str) -> str:
    return f"{SEEN_KEY_PREFIX}{day.isoformat()}:{kind}:{key}"


def now_key(day: date) -> str:
    return NOW_KEY_PREFIX + day.isoformat()


def minute_start(day: date, minute: str) -> datetime:
    return datetime.combine(day, time(int(minute[:2]), int(minute[2:])), UTC)


def first_minute_counted(now: datetime, minutes: int) -> datetime:
    """The start of the earliest minute that is "now": a visitor seen in it or after it counts."""
    since = now.astimezone(UTC) - timedelta(minutes=minutes)
    return since.replace(second=0, microsecond=0)


def _expires_at(day: date) -> int:
    return int(visit_rules.salt_destroyed_at(day).timestamp())


class RedisVisitorSets:
    def __init__(self, redis):
        self._redis = redis

    async def mark(self, batch: Batch) -> None:
        """Set ``batch.new_visitors`` from what Redis answered; the flush then writes no seen rows."""
        members: dict[tuple[date, str, str], list[bytes]] = defaultdict(list)
        latest: dict[date, dict[bytes, float]] = defaultdict(dict)
        for day, kind, key, visitor in batch.seen:
            if kind == visit_rules.VisitKind.MINUTE:
                seen_at = minute_start(day, key).timestamp()
                latest[day][visitor] = max(seen_at, latest[day].get(visitor, seen_at))
            else:
                members[(day, kind, key)].append(visitor)
        async with self._redis.pipeline(transaction=True) as pipe:
            for (day, kind, key), visitors in members.items():
                pipe.sadd(seen_key(day, kind, key), *visitors)
                pipe.expireat(seen_key(day, kind, key), _expires_at(day))
            for day, minutes in latest.items():
                pipe.zadd(now_key(day), minutes, gt=True)  # a visitor's latest minute only moves on
                pipe.expireat(now_key(day), _expires_at(day))
            replies = await pipe.execute()
        batch.new_visitors = {
            counted: int(added) for counted, added in zip(members, replies[::2], strict=False) if int(added)
        }


def visitors_now(redis, now: datetime, minutes: int) -> int:
    """Distinct visitors seen in the last ``minutes`` minutes (a synchronous client); one seen around
    midnight is one in each day's set, under two salts."""
    since = first_minute_counted(now, minutes)
    days = {visit_rules.day_of(since), visit_rules.day_of(now)}
    return sum(int(redis.zcount(now_key(day), since.timestamp(), "+inf")) for day in days)
