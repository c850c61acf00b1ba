"""Per-visitor submission limits: counting, windows, scopes, and failing open."""

from __future__ import annotations

import pytest

from publisher.forms import ratelimit
from publisher.forms.ratelimit import PER_ADDRESS, PER_CLIENT, Limiter, MemoryCounter


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def limiter() -> tuple[Limiter, Clock]:
    clock = Clock()
    return Limiter(MemoryCounter(clock=clock), clock=clock), clock


@pytest.mark.asyncio
async def test_a_client_is_stopped_after_its_limit_and_others_are_not():
    limits, _ = limiter()
    allowed = [await limits.allow("contact", "tab-1", "10.0.0.1") for _ in range(PER_CLIENT.attempts + 2)]
    assert allowed == [True] * PER_CLIENT.attempts + [False, False]
    assert await limits.allow("contact", "tab-2", "10.0.0.2")  # another visitor is unaffected
    assert await limits.allow("subscribe", "tab-1", "10.0.0.1")  # each form counts separately


@pytest.mark.asyncio
async def test_an_address_is_stopped_across_its_clients():
    limits, _ = limiter()
    results = [await limits.allow("subscribe", f"tab-{i}", "10.0.0.9") for i in range(PER_ADDRESS.attempts + 1)]
    assert results[:-1] == [True] * PER_ADDRESS.attempts
    assert results[-1] is False


@pytest.mark.asyncio
async def test_the_limit_lifts_when_the_window_ends():
    limits, clock = limiter()
    for _ in range(PER_CLIENT.attempts):
        await limits.allow("contact", "tab-1", "10.0.0.1")
    assert not await limits.allow("contact", "tab-1", "10.0.0.1")
    clock.now += PER_CLIENT.window_s
    assert await limits.allow("contact", "tab-1", "10.0.0.1")


@pytest.mark.asyncio
async def test_a_failing_store_allows_the_attempt_and_logs(caplog):
    class Broken:
        async def hit(self, key, ttl_s):
            raise ConnectionError("redis is down")

    assert await Limiter(Broken()).allow("contact", "tab-1", "10.0.0.1")
    assert "Rate limit store unavailable (ConnectionError)" in caplog.text


def test_window_keys_name_form_scope_identity_and_window():
    assert (
        ratelimit.window_key("contact", "client", "tab-1", 1200.0, 600) == "publisher:ratelimit:contact:client:tab-1:2"
    )
