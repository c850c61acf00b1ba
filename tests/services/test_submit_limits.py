"""The rate limits (limits/submits.py) in each store the site picks, in the process and in a real
Redis (tests/support.RedisServer): the same counts from both. The limits' rules alone, with the
``limits`` package's clock moved, are in tests/unit/test_submit_limits.py."""

from __future__ import annotations

import pytest
import pytest_asyncio
import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from publisher.limits import submits
from publisher.limits.submits import Limit, Limiter


@pytest_asyncio.fixture(params=["memory", "redis"])
async def storage(request, redis_url, monkeypatch):
    """The store ``configured_storage`` picks without Redis and with it (Reflex's client)."""
    client = redis.asyncio.Redis.from_url(redis_url) if request.param == "redis" else None
    monkeypatch.setattr(submits, "shared_redis", lambda: client)
    yield submits.configured_storage()
    if client is not None:
        await client.aclose()


@pytest.mark.asyncio
async def test_an_address_gets_exactly_its_attempts_and_a_limit_used_up_is_exhausted_in_either_store(storage):
    limits = Limiter(storage, per_client=Limit(2, 600), per_address=Limit(3, 600))
    assert [await limits.allow("contact", "tab-1", "203.0.113.9") for _ in range(3)] == [True, True, False]
    assert [await limits.allow("contact", "tab-2", "203.0.113.9") for _ in range(2)] == [True, False]
    assert await limits.allow("contact", "tab-3", "203.0.113.10")  # another address
    assert await limits.allow("subscribe", "tab-1", "203.0.113.9")  # another form
    limits = Limiter(storage, per_address=Limit(2, 600))
    assert await limits.allow("bounce-hook", "", "203.0.113.9")
    assert not await limits.exhausted("bounce-hook", "203.0.113.9")
    assert not await limits.exhausted("bounce-hook", "203.0.113.9")  # asking counts nothing
    assert await limits.allow("bounce-hook", "", "203.0.113.9")
    assert await limits.exhausted("bounce-hook", "203.0.113.9")


@pytest.mark.asyncio
@pytest.mark.parametrize("storage", ["redis"], indirect=True)
async def test_in_redis_the_counts_are_the_sites_and_end_with_their_window(storage):
    client = submits.shared_redis()
    limits = Limiter(storage, per_address=Limit(20, 600))
    assert await limits.allow("buy", "", "2001:db8:1:2::7")
    keys = await client.keys("*")
    assert keys == [b"publisher:ratelimit:LIMITER/buy/address/2001:db8:1:2::/64/20/600/second"]
    assert 590 < await client.ttl(keys[0]) <= 600


@pytest.mark.asyncio
async def test_a_redis_that_is_away_lets_every_attempt_in(monkeypatch, caplog):
    """Nothing listens on the port: every attempt is allowed and none is over the limit, logged
    (without the client's retries, which take seconds before the same answer)."""
    client = redis.asyncio.Redis(host="127.0.0.1", port=9, retry=Retry(NoBackoff(), 0))
    monkeypatch.setattr(submits, "shared_redis", lambda: client)
    limits = Limiter(submits.configured_storage(), per_address=Limit(1, 600))
    assert [await limits.allow("contact", "", "203.0.113.9") for _ in range(3)] == [True] * 3
    assert not await limits.exhausted("contact", "203.0.113.9")
    assert "Rate limit store unavailable (ConnectionError)" in caplog.text
    await client.aclose()
