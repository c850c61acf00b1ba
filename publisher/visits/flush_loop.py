"""Each worker's background loop: its tally to the database every few seconds, the day's salt
(shared by every worker: in Redis, else the database), the seen sets and the clean-up. A failure
costs that batch only: the loop never dies of a database or Redis that is away."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, time, timedelta

from publisher.rules import visit_rules
from publisher.storage import visit_counts
from publisher.storage.visit_counts import Batch
from publisher.visits.recorder import Recorder

logger = logging.getLogger(__name__)

SALT_KEY_PREFIX = "publisher:visits:salt:"
SEEN_KEY_PREFIX = "publisher:visits:seen:"
NOW_KEY_PREFIX = "publisher:visits:now:"

Flush = Callable[[Batch, bool], None]  # (batch, seen_done): storage/visit_counts.flush


class DatabaseStore:
    """Salts and seen rows in the embedded gateway's database (``db_url``: a test's, else Reflex's)."""

    seen_in_redis = False

    def __init__(self, db_url: str | None = None):
        self._db_url = db_url

    async def salt_for(self, day: date, now: datetime) -> bytes | None:
        return await asyncio.to_thread(visit_counts.salt_for, day, now, self._db_url)

    async def mark(self, batch: Batch) -> None:
        """Nothing: the flush's seen rows tell the new visitors."""


def seen_key(day: date, kind: str, key: str) -> str:
    return f"{SEEN_KEY_PREFIX}{day.isoformat()}:{kind}:{key}"


def now_key(day: date) -> str:
    return NOW_KEY_PREFIX + day.isoformat()


def first_minute_counted(now: datetime, minutes: int) -> datetime:
    """The start of the earliest minute that is "now": a visitor seen in it or after it counts."""
    since = now.astimezone(UTC) - timedelta(minutes=minutes)
    return since.replace(second=0, microsecond=0)


def _expires_at(day: date) -> int:
    return int(visit_rules.salt_destroyed_at(day).timestamp())


class RedisStore:
    """Salts and seen sets in Redis (``SADD`` says who is new across every worker; a sorted set holds
    each visitor's latest minute): every key expires at its day's salt's destroy time."""

    seen_in_redis = True

    def __init__(self, redis):
        self._redis = redis

    async def salt_for(self, day: date, now: datetime) -> bytes | None:
        destroyed_at = visit_rules.salt_destroyed_at(day)
        if now >= destroyed_at:
            return None
        key = SALT_KEY_PREFIX + day.isoformat()
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(key, secrets.token_bytes(visit_rules.SALT_BYTES), nx=True, exat=_expires_at(day))
            pipe.get(key)
            _, salt = await pipe.execute()
        return None if salt is None else bytes(salt)

    async def mark(self, batch: Batch) -> None:
        """Set ``batch.new_visitors`` from what Redis answered; the flush then writes no seen rows."""
        members: dict[tuple[date, str, str], list[bytes]] = defaultdict(list)
        latest: dict[date, dict[bytes, float]] = defaultdict(dict)
        for day, kind, key, visitor in batch.seen:
            if kind == visit_rules.VisitKind.MINUTE:
                seen_at = datetime.combine(day, time(int(key[:2]), int(key[2:])), UTC).timestamp()
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


class FlushLoop:
    def __init__(
        self,
        recorder: Recorder,
        store: DatabaseStore | RedisStore,
        flush: Flush,
        daily_chores: Callable[[datetime], None],
        interval_s: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        """``flush`` and ``daily_chores`` run in a thread: they block on the database."""
        self.recorder = recorder
        self.store = store
        self.flush = flush
        self.daily_chores = daily_chores
        self.interval_s = interval_s
        self.sleep = sleep
        self._chores_done_on: date | None = None

    async def load_salts(self) -> None:
        """A failure is logged and counting goes on with views only until a later turn fetches the salt."""
        try:
            await self.recorder.salts.refresh(self.store, self.recorder.clock())
        except Exception as exc:  # noqa: BLE001 - any store failure: count views without visitors
            logger.warning("Visits: the day's salt is not available (%s); counting views only", type(exc).__name__)

    async def flush_once(self) -> None:
        """Write what was counted since the last turn; on an error only this batch is lost (Redis
        away: its visitors only, which the database's seen rows would count twice)."""
        if self.recorder.tally.is_empty():
            return
        batch = self.recorder.tally.take()
        try:
            await self.store.mark(batch)
        except Exception as exc:  # noqa: BLE001 - Redis away: keep the views
            logger.warning("Visits: Redis did not answer (%s); this window's visitors are lost", type(exc).__name__)
            batch.seen = set()
            batch.new_visitors = {}
        try:
            await asyncio.to_thread(self.flush, batch, self.store.seen_in_redis)
        except Exception as exc:  # noqa: BLE001 - a database away loses this window only
            views = sum(count for (_, kind, _), count in batch.views.items() if kind == visit_rules.VisitKind.SITE)
            # The error's type only: its text may quote the batch's visitor ids.
            logger.warning("Visits: %d page views lost, the database did not take them (%s)", views, type(exc).__name__)

    async def chores_once_a_day(self) -> None:
        """The expired salts and seen rows dropped, old counts pruned: on the first turn of each day."""
        now = self.recorder.clock()
        today = visit_rules.day_of(now)
        if self._chores_done_on == today:
            return
        try:
            await asyncio.to_thread(self.daily_chores, now)
        except Exception as exc:  # noqa: BLE001 - tried again at the next turn
            logger.warning("Visits: the daily clean-up failed (%s); trying again", type(exc).__name__)
            return
        self._chores_done_on = today

    async def run(self) -> None:
        """Turn every ``interval_s`` until cancelled."""
        while True:
            await self.sleep(self.interval_s)
            try:
                await self.flush_once()
                await self.load_salts()
                await self.chores_once_a_day()
            except Exception as exc:  # noqa: BLE001 - the loop outlives any one turn
                logger.error("Visits: a turn of the flush loop failed (%s); the next one goes on", type(exc).__name__)
