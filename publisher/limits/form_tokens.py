"""The contact form's tokens are single use: a nonce once used is remembered until the token expires.

The token itself (rules/form_tokens.py) says which question was asked and when;
this store says whether it was already used, so a page's token answers one
submit, across every worker and host (Redis when Reflex uses it, else this
process: one worker). ``SET key 1 NX EX`` is atomic: of two submits racing with
one token, one wins.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

from reflex.utils import prerequisites

from publisher.per_process import PerProcess
from publisher.rules.form_tokens import VALID_FOR_MS

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


async def first_use(nonce: str) -> bool:
    """Whether this is the token's first use. A failing store says yes (logged): the limits per
    address still hold, and the forms must not go down with the store (as limits/submits.py)."""
    try:
        return await shared_used_tokens.get().first_use(nonce)
    except Exception as exc:  # noqa: BLE001 - any store failure: fail open
        logger.warning("Form token store unavailable (%s); taking the token as unused", type(exc).__name__)
        return True


def configured_store() -> UsedTokens:
    redis = prerequisites.get_redis()
    return RedisUsedTokens(redis) if redis is not None else MemoryUsedTokens()


shared_used_tokens: PerProcess[UsedTokens] = PerProcess(configured_store)
