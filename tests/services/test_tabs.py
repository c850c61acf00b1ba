"""The event channel's limits (limits/tabs.py) as the site counts them in a real Redis shared by several
workers (in the process, with the ``limits`` package's clock moved: tests/unit/test_tabs.py)."""

from __future__ import annotations

import time

import pytest
import pytest_asyncio
import redis.asyncio

from publisher.limits import submits, tabs
from tests.unit.conftest import Clock
from tests.unit.test_tabs import LIMITS


@pytest_asyncio.fixture
async def client(redis_url, monkeypatch):
    """Reflex's Redis client, which the limits' storage uses too."""
    client = redis.asyncio.Redis.from_url(redis_url)
    monkeypatch.setattr(submits, "shared_redis", lambda: client)
    yield client
    await client.aclose()


def workers(client, count: int, limits: tabs.TabLimits = LIMITS, clock=time.time) -> list[tabs.TabGate]:
    counts = submits.configured_storage()
    return [tabs.TabGate(limits, tabs.SharedTabs(client), counts, clock) for _ in range(count)]


@pytest.mark.asyncio
async def test_an_address_gets_its_open_tabs_across_workers_and_no_more_and_closing_one_frees_its_place(client):
    first, second = workers(client, 2)
    opened = [await first.admit("198.51.100.7") for _ in range(2)] + [await second.admit("198.51.100.7")]
    assert all(tab is not None and why is None for tab, why in opened)
    assert await first.admit("198.51.100.7") == (None, tabs.ADDRESS_FULL)  # counted once, whichever worker has it
    assert await second.admit("198.51.100.7") == (None, tabs.ADDRESS_FULL)
    assert (await second.admit("198.51.100.8"))[0] is not None  # another address is served throughout
    await first.release(opened[0][0])
    assert (await second.admit("198.51.100.7"))[0] is not None


@pytest.mark.asyncio
async def test_new_tabs_from_an_address_are_limited_per_minute_and_a_refused_one_holds_no_place(client):
    [door] = workers(client, 1, tabs.TabLimits(per_address=1, new_per_minute=5, per_worker=100))
    for _ in range(5):
        tab, _ = await door.admit("203.0.113.9")
        await door.release(tab)  # closed at once: only the rate limits it
    assert await door.admit("203.0.113.9") == (None, tabs.TOO_FAST)
    assert await door.admit("203.0.113.9") == (None, tabs.TOO_FAST)  # not ADDRESS_FULL: the refused one went
    assert (await door.admit("203.0.113.10"))[0] is not None


@pytest.mark.asyncio
async def test_a_live_workers_heartbeat_keeps_its_tabs_counted_and_a_crashed_ones_expire(client):
    clock = Clock()
    worker, other = workers(client, 2, clock=clock)
    for _ in range(3):
        await worker.admit("198.51.100.30")
    for _ in range(3):  # three heartbeats: longer than an entry lives without one
        clock.now += tabs.HEARTBEAT_S
        await worker.renew_now()
    assert await other.admit("198.51.100.30") == (None, tabs.ADDRESS_FULL)
    clock.now += tabs.ENTRY_TTL_S + 1  # nobody renewed them: the worker is gone
    assert (await other.admit("198.51.100.30"))[0] is not None
    assert (tabs.ENTRY_TTL_S, tabs.HEARTBEAT_S) == (60, 20)  # docs/security.md


@pytest.mark.asyncio
async def test_a_tab_that_submitted_is_remembered_and_every_redis_key_expires_by_itself(client):
    [door] = workers(client, 1)
    assert not await door.engaged("token-1")
    await door.engage("token-1", 3600)
    assert await door.engaged("token-1") and not await door.engaged("token-2")
    await door.admit("198.51.100.40")
    keys = {key.decode(): await client.ttl(key) for key in await client.keys("publisher:*")}
    assert 0 < keys.pop("publisher:tabs:open:198.51.100.40") <= tabs.ENTRY_TTL_S
    assert 3500 < keys.pop("publisher:ratelimit:tabs-engaged/token-1") <= 3600
    [(window, ttl)] = keys.items()
    assert "198.51.100.40" in window and 0 < ttl <= 60  # the minute's new tabs
