"""The event channel's limits (limits/tabs.py) in each store, in the process and in a real Redis: the same
behaviour from both."""

from __future__ import annotations

import time

import pytest
import pytest_asyncio
import redis.asyncio

from publisher.limits import tabs
from tests.unit.test_tabs import Clock, gate


@pytest_asyncio.fixture(params=["memory", "redis"])
async def store(request, redis_server):
    if request.param == "memory":
        yield tabs.MemoryTabs()
        return
    client = redis.asyncio.Redis.from_url(redis_server.url)
    await client.flushdb()
    yield tabs.RedisTabs(client)
    await client.aclose()


@pytest.mark.asyncio
async def test_an_address_gets_its_open_tabs_and_no_more_and_closing_one_frees_its_place(store):
    door = gate(store, Clock())
    opened = [await door.admit("198.51.100.7") for _ in range(3)]
    assert all(tab is not None and why is None for tab, why in opened)
    assert await door.admit("198.51.100.7") == (None, tabs.ADDRESS_FULL)
    assert (await door.admit("198.51.100.8"))[0] is not None  # another address is served throughout
    await door.release(opened[0][0])
    assert (await door.admit("198.51.100.7"))[0] is not None


@pytest.mark.asyncio
async def test_new_tabs_from_an_address_are_limited_per_minute_and_refusals_do_not_count(store):
    clock = Clock()
    door = gate(store, clock, tabs.TabLimits(per_address=100, new_per_minute=5, per_worker=100))
    for _ in range(5):
        tab, _ = await door.admit("203.0.113.9")
        await door.release(tab)  # closed at once: only the rate limits it
    assert await door.admit("203.0.113.9") == (None, tabs.TOO_FAST)
    assert await door.admit("203.0.113.9") == (None, tabs.TOO_FAST)
    clock.now += 60  # the next minute
    assert (await door.admit("203.0.113.9"))[0] is not None


@pytest.mark.asyncio
async def test_a_live_workers_heartbeat_keeps_its_tabs_counted_and_a_crashed_ones_expire(store):
    clock = Clock()
    worker, other = gate(store, clock), gate(store, clock)
    for _ in range(3):
        await worker.admit("198.51.100.30")
    for _ in range(3):  # three heartbeats: longer than an entry lives without one
        clock.now += tabs.HEARTBEAT_S
        await worker.renew_now()
    assert await other.admit("198.51.100.30") == (None, tabs.ADDRESS_FULL)
    clock.now += tabs.ENTRY_TTL_S + 1  # nobody renewed them: the worker is gone
    assert (await other.admit("198.51.100.30"))[0] is not None


@pytest.mark.asyncio
async def test_a_tab_that_submitted_is_remembered_for_the_time_given(store):
    clock = Clock()
    assert not await store.engaged("token-1", clock.now)
    await store.engage("token-1", clock.now, 3600)
    assert await store.engaged("token-1", clock.now + 10)
    if isinstance(store, tabs.MemoryTabs):  # Redis expires by its own clock: checked with a short time below
        assert not await store.engaged("token-1", clock.now + 3601)


@pytest.mark.asyncio
async def test_redis_entries_expire_by_themselves(redis_server):
    client = redis.asyncio.Redis.from_url(redis_server.url)
    await client.flushdb()
    store = tabs.RedisTabs(client)
    door = gate(store, Clock(time.time()))
    await door.admit("198.51.100.40")
    await store.engage("token-2", 0, 1)
    keys = sorted(key.decode() for key in await client.keys("publisher:tabs:*"))
    assert keys[0] == "publisher:tabs:engaged:token-2" and "publisher:tabs:open:198.51.100.40" in keys
    for key in keys:
        assert 0 < await client.ttl(key) <= max(tabs.ENTRY_TTL_S, tabs.RATE_WINDOW_S)
    await client.aclose()
