"""The day's salt: one random secret per UTC day, shared by every worker (in Redis, else the
database), so once it is destroyed nobody can tell whether two days' visitors were one person.
A worker never asks on the request path: it fetches today's, and tomorrow's from 23:55 UTC."""

from __future__ import annotations

import asyncio
import secrets
from datetime import date, datetime, time, timedelta
from typing import Protocol

from publisher.rules import visit_rules
from publisher.storage import visit_counts

SALT_KEY_PREFIX = "publisher:visits:salt:"
# From this time of a day (UTC) the worker fetches the next day's salt too.
FETCH_TOMORROW_FROM = time(23, 55)
# How long one fetch may take before the worker goes on without it (views without visitors).
SALT_WAIT_S = 2.0


class SaltStore(Protocol):
    async def salt_for(self, day: date, now: datetime) -> bytes | None:
        """``day``'s salt, made now by whichever worker asks first; None once it is destroyed."""


class DatabaseSalts:
    """In the embedded gateway's database (``db_url``: Reflex's, REFLEX_DB_URL, unless a test's)."""

    def __init__(self, db_url: str | None = None):
        self._db_url = db_url

    async def salt_for(self, day: date, now: datetime) -> bytes | None:
        return await asyncio.to_thread(visit_counts.salt_for, day, now, self._db_url)


class RedisSalts:
    """In Redis, which deletes each at its destroy time (``EXAT``)."""

    def __init__(self, redis):
        self._redis = redis

    async def salt_for(self, day: date, now: datetime) -> bytes | None:
        destroyed_at = visit_rules.salt_destroyed_at(day)
        if now >= destroyed_at:
            return None
        key = SALT_KEY_PREFIX + day.isoformat()
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(key, secrets.token_bytes(visit_rules.SALT_BYTES), nx=True, exat=int(destroyed_at.timestamp()))
            pipe.get(key)
            _, salt = await pipe.execute()
        return None if salt is None else bytes(salt)


class DaySalts:
    """The salts this worker has fetched, read on the request path without a wait."""

    def __init__(self) -> None:
        self._salts: dict[date, bytes] = {}

    def of(self, day: date) -> bytes | None:
        """``day``'s salt if this worker has it; None: count views without visitors."""
        return self._salts.get(day)

    def days(self) -> list[date]:
        return sorted(self._salts)

    async def refresh(self, store: SaltStore, now: datetime, wait_s: float = SALT_WAIT_S) -> None:
        """A fetch that fails or takes longer than ``wait_s`` raises (the caller logs it and tries again
        next turn); what was fetched before it is kept."""
        today = visit_rules.day_of(now)
        self._salts = {day: salt for day, salt in self._salts.items() if day >= today - timedelta(days=1)}
        wanted = [today]
        if now.time() >= FETCH_TOMORROW_FROM:
            wanted.append(today + timedelta(days=1))
        for day in wanted:
            if day not in self._salts:
                salt = await asyncio.wait_for(store.salt_for(day, now), wait_s)
                if salt is not None:
                    self._salts[day] = salt
