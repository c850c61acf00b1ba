"""Per-visitor limits on form submissions: one client or one address
cannot hammer the forms or the gateway, and nobody else is slowed down.

Fixed windows counted per form: each browser tab (Reflex's client token) and each
network address (the client IP Reflex reports, proxies per its
``trusted_proxy_hops``). Every submit attempt counts, accepted or not, so a bot
guessing math answers is stopped too. Counters live in Redis when Reflex uses it
(shared by every worker and host), else in this process (one worker).

An IPv6 visitor is counted by their /64 block (``address_key`` says why).

Nothing that grants access is logged: a tab's client token is the key to its state,
so a refusal names the scope, the form and the address, never the token.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

from reflex.utils import prerequisites

from publisher.config import settings
from publisher.content.form_copy import TOO_MANY_ATTEMPTS
from publisher.per_process import PerProcess
from publisher.rules.visitor_limits import PER_ADDRESS, PER_CLIENT, Limit, address_key, window_key

logger = logging.getLogger(__name__)

__all__ = ["PER_ADDRESS", "PER_CLIENT", "TOO_MANY_ATTEMPTS", "Limit", "Limiter", "address_key", "shared_limiter"]


class Counter(Protocol):
    async def hit(self, key: str, ttl_s: int) -> int:
        """Add one to ``key`` (expiring after ``ttl_s``) and return the new count."""

    async def count(self, key: str) -> int:
        """``key``'s count in its window, adding nothing (0 when it has none)."""


class MemoryCounter:
    """Counts in this process; expired windows are dropped as new ones start."""

    def __init__(self, clock=time.monotonic):
        self._counts: dict[str, tuple[int, float]] = {}
        self._clock = clock

    async def hit(self, key: str, ttl_s: int) -> int:
        now = self._clock()
        if len(self._counts) > 10_000:
            self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
        count, expires = self._counts.get(key, (0, now + ttl_s))
        if expires <= now:
            count, expires = 0, now + ttl_s
        self._counts[key] = (count + 1, expires)
        return count + 1

    async def count(self, key: str) -> int:
        count, expires = self._counts.get(key, (0, 0.0))
        return count if expires > self._clock() else 0


class RedisCounter:
    """Counts in Redis, shared by every worker and host (INCR + EXPIRE in one round trip)."""

    def __init__(self, redis):
        self._redis = redis

    async def hit(self, key: str, ttl_s: int) -> int:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, ttl_s, nx=True)
            count, _ = await pipe.execute()
        return int(count)

    async def count(self, key: str) -> int:
        return int(await self._redis.get(key) or 0)


class Limiter:
    def __init__(
        self, counter: Counter, clock=time.time, per_client: Limit = PER_CLIENT, per_address: Limit = PER_ADDRESS
    ):
        self.counter = counter
        self.clock = clock
        self.per_client = per_client
        self.per_address = per_address

    def _windows(self, form: str, client: str, address: str) -> list[tuple[str, str, Limit]]:
        """The counter key of this client's and this address's current window, how a log line
        names each (never the client token: it is the key to the tab's state), and its limit."""
        now = self.clock()
        checks = [("client", client, self.per_client), ("address", address_key(address), self.per_address)]
        return [
            (
                window_key(form, scope, identity, now, limit.window_s),
                f"address {identity}" if scope == "address" else "client (its tab)",
                limit,
            )
            for scope, identity, limit in checks
            if identity
        ]

    async def allow(self, form: str, client: str, address: str) -> bool:
        """Count one attempt; False when this client or address is over its limit.

        If the counter store fails, the attempt is allowed (and logged): the limits
        protect the gateway, they must not take the forms down with them.
        """
        try:
            for key, shown, limit in self._windows(form, client, address):
                if await self.counter.hit(key, limit.window_s) > limit.attempts:
                    logger.info("Rate limit: %s over %d attempts on %s", shown, limit.attempts, form)
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
            for key, shown, limit in self._windows(form, client, address):
                if await self.counter.count(key) >= limit.attempts:
                    logger.info("Rate limit: %s has used its %d attempts on %s", shown, limit.attempts, form)
                    return True
        except Exception as exc:  # noqa: BLE001 - any store failure: fail open
            logger.warning("Rate limit store unavailable (%s); not counted as over the limit", type(exc).__name__)
        return False


def configured_limiter() -> Limiter:
    """Redis-backed when Reflex is configured with Redis, else in-process; limits from the settings."""
    overrides = settings.rate_limits()
    redis = prerequisites.get_redis()
    return Limiter(
        RedisCounter(redis) if redis is not None else MemoryCounter(),
        per_client=Limit(*overrides["client"]) if overrides["client"] else PER_CLIENT,
        per_address=Limit(*overrides["address"]) if overrides["address"] else PER_ADDRESS,
    )


shared_limiter: PerProcess[Limiter] = PerProcess(configured_limiter)
