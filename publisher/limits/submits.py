"""Per-visitor limits on attempts (forms, link pages, sign-in, buy beacon), per tab and per address, and
the contact form's tokens used once. Every attempt counts, accepted or not, so a bot guessing answers
is stopped too. A log line never names a tab's client token: it is the key to the tab's state."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import limits.aio.storage
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.storage import RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter

from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.reflex_internals.state_managers import shared_redis
from publisher.rules.form_tokens import VALID_FOR_MS
from publisher.rules.visitor_limits import PER_ADDRESS, PER_CLIENT, Limit, address_key
from publisher.storage import tables

logger = logging.getLogger(__name__)

# Expired windows are swept out of this process's counts at most this often (see MemoryStorage).
SWEEP_EVERY_S = 60.0
REDIS_KEY_PREFIX = "publisher:ratelimit"
# A used form token's nonce is remembered a little longer than a token lives, so it never comes back to life.
_REMEMBER_S = VALID_FOR_MS // 1000 + 60
ONCE = RateLimitItemPerSecond(1, _REMEMBER_S)


class MemoryStorage(limits.aio.storage.MemoryStorage):
    """The ``limits`` package's in-process storage, sweeping expired windows at most once a minute: as
    shipped it sweeps every key on every hit (29 ms a hit at 100,000 keys, docs/performance.md)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self._clock = clock
        self._swept_at = clock()

    # The library's private name for starting its sweep, which it calls on every hit.
    async def _MemoryStorage__schedule_expiry(self) -> None:  # noqa: N802
        if self._clock() - self._swept_at >= SWEEP_EVERY_S:
            self._swept_at = self._clock()
            await super()._MemoryStorage__schedule_expiry()  # type: ignore[misc]


class Limiter:
    def __init__(
        self, storage: Storage | None = None, per_client: Limit = PER_CLIENT, per_address: Limit = PER_ADDRESS
    ):
        self.storage = storage if storage is not None else MemoryStorage()
        self.windows = FixedWindowRateLimiter(self.storage)
        self.per_client = per_client
        self.per_address = per_address

    def _checks(self, form: str, client: str, address: str) -> list[tuple[RateLimitItem, list[str], str]]:
        """Each limit that applies, whom it counts (form, scope, identity) and how a log line names
        them (never the client token)."""
        checks = [("client", client, self.per_client), ("address", address_key(address), self.per_address)]
        return [
            (
                RateLimitItemPerSecond(limit.attempts, limit.window_s),
                [form, scope, identity],
                f"address {identity}" if scope == "address" else "client (its tab)",
            )
            for scope, identity, limit in checks
            if identity
        ]

    async def allow(self, form: str, client: str, address: str) -> bool:
        """Count one attempt; False when this client or address is over its limit. A failing store
        allows it (logged): the limits must not take the forms down with them."""
        try:
            for item, whom, shown in self._checks(form, client, address):
                if not await self.windows.hit(item, *whom):
                    logger.info("Rate limit: %s over %d attempts on %s", shown, item.amount, form)
                    return False
        except Exception as exc:  # noqa: BLE001 - any store failure: fail open
            logger.warning("Rate limit store unavailable (%s); allowing the attempt", type(exc).__name__)
        return True

    async def exhausted(self, form: str, address: str) -> bool:
        """Whether this address has used all its attempts, counting nothing: asked before judging,
        so a guesser over the limit cannot tell right from wrong. A failing store says no (logged)."""
        try:
            for item, whom, shown in self._checks(form, "", address):
                if not await self.windows.test(item, *whom):
                    logger.info("Rate limit: %s has used its %d attempts on %s", shown, item.amount, form)
                    return True
        except Exception as exc:  # noqa: BLE001 - any store failure: fail open
            logger.warning("Rate limit store unavailable (%s); not counted as over the limit", type(exc).__name__)
        return False

    async def first_use(self, nonce: str) -> bool:
        """A nonce is a window of one hit: the first hit is its first use (Redis counts atomically)."""
        return await self.windows.hit(ONCE, "form-token", nonce)


class DatabaseUsedTokens:
    """In the embedded gateway's database (``db_url``: Reflex's, REFLEX_DB_URL, unless a test's)."""

    def __init__(self, db_url: str | None = None, clock: Callable[[], datetime] = tables.utc_now):
        self._db_url = db_url
        self._clock = clock

    async def first_use(self, nonce: str) -> bool:
        return await asyncio.to_thread(
            tables.first_token_use, nonce, timedelta(seconds=_REMEMBER_S), self._clock(), self._db_url
        )


def configured_storage() -> Storage:
    """Redis when Reflex uses it (its client's own settings: REFLEX_REDIS_URL), else this process."""
    redis = shared_redis()
    if redis is None:
        return MemoryStorage()
    # The connection pool carries Reflex's URL; the URI only tells ``limits`` it is Redis.
    return RedisStorage(
        "async+redis://",
        implementation="redispy",
        key_prefix=REDIS_KEY_PREFIX,
        connection_pool=redis.connection_pool,  # type: ignore[arg-type]
    )


shared_storage: PerProcess[Storage] = PerProcess(configured_storage)


def configured_limiter() -> Limiter:
    values = settings.current()
    return Limiter(
        shared_storage.get(),
        per_client=Limit(*values.rate_limit_client) if values.rate_limit_client else PER_CLIENT,
        per_address=Limit(*values.rate_limit_address) if values.rate_limit_address else PER_ADDRESS,
    )


shared_limiter: PerProcess[Limiter] = PerProcess(configured_limiter)


async def first_use(nonce: str) -> bool:
    """Whether this is the form token's first use. A failing store says yes (logged): the limits per
    address still hold, and the forms must not go down with the store."""
    try:
        return await shared_used_tokens.get().first_use(nonce)
    except Exception as exc:  # noqa: BLE001 - any store failure: fail open
        logger.warning("Form token store unavailable (%s); taking the token as unused", type(exc).__name__)
        return True


def configured_used_tokens() -> Limiter | DatabaseUsedTokens:
    """Redis when Reflex uses it, else the embedded gateway's database, else this process (forgotten at a
    restart: such a site runs one worker)."""
    if shared_redis() is None and settings.current().gateway_url is None:
        return DatabaseUsedTokens()
    return shared_limiter.get()


shared_used_tokens: PerProcess[Limiter | DatabaseUsedTokens] = PerProcess(configured_used_tokens)
