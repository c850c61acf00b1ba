"""The contact form's tokens are single use: a nonce once used is remembered until the token expires,
in the embedded gateway's database, else as a window of one hit in the limits' storage (Redis: of two
racing submits one wins; else this process, forgotten at a restart: such a site runs one worker)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from limits import RateLimitItemPerSecond
from limits.aio.storage import Storage
from limits.aio.strategies import FixedWindowRateLimiter

from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.limits import submits
from publisher.reflex_internals.state_managers import shared_redis
from publisher.rules.form_tokens import VALID_FOR_MS
from publisher.storage import tables

logger = logging.getLogger(__name__)

# Kept a little longer than a token lives, so a used one never comes back to life.
_REMEMBER_S = VALID_FOR_MS // 1000 + 60
ONCE = RateLimitItemPerSecond(1, _REMEMBER_S)


class WindowUsedTokens:
    """A nonce is a window of one hit: the first hit is its first use (Redis counts atomically)."""

    def __init__(self, storage: Storage | None = None):
        self.storage = storage if storage is not None else submits.MemoryStorage()
        self._windows = FixedWindowRateLimiter(self.storage)

    async def first_use(self, nonce: str) -> bool:
        """Mark ``nonce`` used; True when nobody had used it before."""
        return await self._windows.hit(ONCE, "form-token", nonce)


class DatabaseUsedTokens:
    """In the embedded gateway's database (``db_url``: Reflex's, REFLEX_DB_URL, unless a test's)."""

    def __init__(self, db_url: str | None = None, clock: Callable[[], datetime] = tables.utc_now):
        self._db_url = db_url
        self._clock = clock

    async def first_use(self, nonce: str) -> bool:
        return await asyncio.to_thread(
            tables.first_token_use, nonce, timedelta(seconds=_REMEMBER_S), self._clock(), self._db_url
        )


async def first_use(nonce: str) -> bool:
    """Whether this is the token's first use. A failing store says yes (logged): the limits per
    address still hold, and the forms must not go down with the store."""
    try:
        return await shared_used_tokens.get().first_use(nonce)
    except Exception as exc:  # noqa: BLE001 - any store failure: fail open
        logger.warning("Form token store unavailable (%s); taking the token as unused", type(exc).__name__)
        return True


def configured_store() -> WindowUsedTokens | DatabaseUsedTokens:
    """Redis when Reflex uses it, else the embedded gateway's database, else this process."""
    if shared_redis() is None and settings.current().gateway_url is None:
        return DatabaseUsedTokens()
    return WindowUsedTokens(submits.shared_storage.get())


shared_used_tokens: PerProcess[WindowUsedTokens | DatabaseUsedTokens] = PerProcess(configured_store)
