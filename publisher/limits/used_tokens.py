"""The contact form's tokens are single use: a nonce once used is remembered until the token expires,
in Redis (``SET NX``: of two racing submits one wins), else the embedded gateway's database, else
this process (forgotten at a restart: such a site runs one worker)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from publisher.config import settings
from publisher.per_process import PerProcess
from publisher.reflex_internals.state_managers import shared_redis
from publisher.rules.form_tokens import VALID_FOR_MS
from publisher.storage import used_form_tokens
from publisher.storage.tables import utc_now

logger = logging.getLogger(__name__)

# Kept a little longer than a token lives, so a used one never comes back to life.
_REMEMBER_S = VALID_FOR_MS // 1000 + 60
_KEY_PREFIX = "publisher:form-token:"


class UsedTokens(Protocol):
    async def first_use(self, nonce: str) -> bool:
        """Mark ``nonce`` used; True when nobody had used it before."""


class MemoryUsedTokens:
    def __init__(self, clock=time.monotonic):
        self._used: dict[str, float] = {}
        self._clock = clock

    async def first_use(self, nonce: str) -> bool:
        now = self._clock()
        if len(self._used) > 10_000:
            self._used = {key: until for key, until in self._used.items() if until > now}
        if self._used.get(nonce, 0.0) > now:
            return False
        self._used[nonce] = now + _REMEMBER_S
        return True


class RedisUsedTokens:
    def __init__(self, redis):
        self._redis = redis

    async def first_use(self, nonce: str) -> bool:
        return bool(await self._redis.set(_KEY_PREFIX + nonce, 1, nx=True, ex=_REMEMBER_S))


class DatabaseUsedTokens:
    """In the embedded gateway's database (``db_url``: Reflex's, REFLEX_DB_URL, unless a test's)."""

    def __init__(self, db_url: str | None = None, clock: Callable[[], datetime] = utc_now):
        self._db_url = db_url
        self._clock = clock

    async def first_use(self, nonce: str) -> bool:
        return await asyncio.to_thread(
            used_form_tokens.first_use, nonce, timedelta(seconds=_REMEMBER_S), self._clock(), self._db_url
        )


async def first_use(nonce: str) -> bool:
    """Whether this is the token's first use. A failing store says yes (logged): the limits per
    address still hold, and the forms must not go down with the store."""
    try:
        return await shared_used_tokens.get().first_use(nonce)
    except Exception as exc:  # noqa: BLE001 - any store failure: fail open
        logger.warning("Form token store unavailable (%s); taking the token as unused", type(exc).__name__)
        return True


def configured_store() -> UsedTokens:
    """Redis when Reflex uses it, else the embedded gateway's database, else this process."""
    redis = shared_redis()
    if redis is not None:
        return RedisUsedTokens(redis)
    if settings.gateway_url() is None:
        return DatabaseUsedTokens()
    return MemoryUsedTokens()


shared_used_tokens: PerProcess[UsedTokens] = PerProcess(configured_store)
