"""The submit limits' counters (limits/submits.py) in each store, in the process and in a real
Redis (tests/support.RedisServer): the same counts from both. The limits' rules alone, with an
injected clock, are in tests/unit/test_submit_limits.py."""

from __future__ import annotations

import pytest
import pytest_asyncio
import redis.asyncio

from publisher.limits.submits import Limit, Limiter, MemoryCounter, RedisCounter


@pytest_asyncio.fixture(params=["memory", "redis"])
async def counter(request, redis_server):
    if request.param == "memory":
        yield MemoryCounter()
        return
    client = redis.asyncio.Redis.from_url(redis_server.url)
    await client.flushdb()
    yield RedisCounter(client)
    await client.aclose()


@pytest.mark.asyncio
async def test_count_reads_what_hit_added_and_adds_nothing(counter):
    assert await counter.count("publisher:ratelimit:test:a") == 0
    assert [await counter.hit("publisher:ratelimit:test:a", 600) for _ in range(3)] == [1, 2, 3]
    assert [await counter.count("publisher:ratelimit:test:a") for _ in range(3)] == [3, 3, 3]
    assert await counter.count("publisher:ratelimit:test:b") == 0


@pytest.mark.asyncio
async def test_a_limit_used_up_is_exhausted_in_either_store(counter):
    limits = Limiter(counter, per_address=Limit(2, 600))
    assert await limits.allow("bounce-hook", "", "203.0.113.9")
    assert not await limits.exhausted("bounce-hook", "", "203.0.113.9")
    assert await limits.allow("bounce-hook", "", "203.0.113.9")
    assert await limits.exhausted("bounce-hook", "", "203.0.113.9")
