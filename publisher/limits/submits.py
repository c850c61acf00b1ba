"""Per-visitor limits on attempts: one client or one address cannot hammer the forms, the link
pages, the dashboard's sign-in or the buy beacon, and nobody else is slowed down.

The ``limits`` package counts them in fixed windows (a window starts with its first attempt),
per form name: each browser tab (Reflex's client token) and each network address (the client
IP Reflex reports, proxies per its ``trusted_proxy_hops``; an IPv6 visitor by their /64,
``address_key`` says why). Every attempt counts, accepted or not, so a bot guessing math
answers is stopped too. The counts live in Redis when Reflex uses it (shared by every worker
and host), else in this process (one worker): ``configured_storage`` decides, for every limit.

Nothing that grants access is logged: a tab's client token is the key to its state, so a
refusal names the scope, the form and the address, never the token.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import limits.aio.storage
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.storage import RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter
from reflex.utils import prerequisites

from publisher.config import settings
from publisher.content.form_copy import TOO_MANY_ATTEMPTS
from publisher.per_process import PerProcess
from publisher.rules.visitor_limits import PER_ADDRESS, PER_CLIENT, Limit, address_key

logger = logging.getLogger(__name__)

__all__ = ["PER_ADDRESS", "PER_CLIENT", "TOO_MANY_ATTEMPTS", "Limit", "Limiter", "address_key", "shared_limiter"]

# Expired windows are swept out of this process's counts at most this often (see MemoryStorage).
SWEEP_EVERY_S = 60.0
REDIS_KEY_PREFIX = "publisher:ratelimit"


class MemoryStorage(limits.aio.storage.MemoryStorage):
    """The ``limits`` package's in-process storage, sweeping its expired windows at most once a
    minute: as shipped it sweeps every key after every hit, 29 ms a hit at 100,000 live keys
    (docs/performance.md, Rate limits). A window is still over when it ends; only forgetting it waits."""

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
        them (never the client token: it is the key to the tab's state)."""
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
        """Count one attempt; False when this client or address is over its limit.

        If the store fails, the attempt is allowed (and logged): the limits protect the
        gateway, they must not take the forms down with them.
        """
        try:
            for item, whom, shown in self._checks(form, client, address):
                if not await self.windows.hit(item, *whom):
                    logger.info("Rate limit: %s over %d attempts on %s", shown, item.amount, form)
                    return False
        except Exception as exc:  # noqa: BLE001 - any store failure: fail open
            logger.warning("Rate limit store unavailable (%s); allowing the attempt", type(exc).__name__)
        return True

    async def exhausted(self, form: str, client: str, address: str) -> bool:
        """Whether this client or address has used all its attempts in the current window,
        counting nothing. For a check made before an attempt is judged: a refusal then says
        nothing about the attempt, so a guesser over the limit cannot tell a right guess from
        a wrong one. A failing store says no (logged), as ``allow`` lets the attempt in."""
        try:
            for item, whom, shown in self._checks(form, client, address):
                if not await self.windows.test(item, *whom):
                    logger.info("Rate limit: %s has used its %d attempts on %s", shown, item.amount, form)
                    return True
        except Exception as exc:  # noqa: BLE001 - any store failure: fail open
            logger.warning("Rate limit store unavailable (%s); not counted as over the limit", type(exc).__name__)
        return False


def configured_storage() -> Storage:
    """Redis when Reflex uses it (its client's own settings: REFLEX_REDIS_URL), else this process."""
    redis = prerequisites.get_redis()
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
    """The forms' limits from the settings, counted in the shared storage."""
    overrides = settings.rate_limits()
    return Limiter(
        shared_storage.get(),
        per_client=Limit(*overrides["client"]) if overrides["client"] else PER_CLIENT,
        per_address=Limit(*overrides["address"]) if overrides["address"] else PER_ADDRESS,
    )


shared_limiter: PerProcess[Limiter] = PerProcess(configured_limiter)
