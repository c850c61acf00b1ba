"""Per-visitor submission limits: counting, windows, scopes (failing open: tests/services/test_submit_limits.py),
and where the contact form's used tokens are remembered (on real stores: tests/services/test_used_tokens.py)."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from limits.aio.storage import memory as limits_memory

from publisher.limits import submits
from publisher.limits.submits import PER_ADDRESS, PER_CLIENT, Limiter, MemoryStorage
from tests.unit.conftest import Clock


@pytest.fixture
def limits_clock(monkeypatch) -> Clock:
    """The clock the ``limits`` package times its in-process windows by (its ``time.time()``), moved by the test."""
    fake = Clock()
    monkeypatch.setattr(limits_memory, "time", SimpleNamespace(time=fake))
    return fake


@pytest.mark.asyncio
async def test_expired_windows_are_forgotten_within_a_minute_not_swept_after_every_hit(limits_clock):
    """``limits``' own storage sweeps every key after every hit (29 ms a hit at 100,000 keys)."""
    sweep_clock = Clock(0.0)
    storage = MemoryStorage(clock=sweep_clock)
    limits = Limiter(storage)
    for i in range(100):
        assert await limits.allow("subscribe", "", f"10.0.1.{i}")
    limits_clock.now += PER_ADDRESS.window_s  # every window has ended
    sweep_clock.now += 59
    assert await limits.allow("subscribe", "", "10.0.2.1")
    await asyncio.sleep(0)  # the library's sweep, had it begun, runs now
    assert len(storage.storage) == 101
    assert not await limits.exhausted("subscribe", "10.0.1.7")  # an ended window counts nothing
    sweep_clock.now += 1
    assert await limits.allow("subscribe", "", "10.0.2.2")
    await asyncio.sleep(0)
    assert sorted(storage.storage) == [f"LIMITER/subscribe/address/10.0.2.{i}/40/600/second" for i in (1, 2)]


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),  # IPv4: per address
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),  # IPv6: its /64, the block one subscriber gets
        ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),  # IPv4-mapped: the IPv4 address
        ("fe80::1%eth0", "fe80::/64"),
        ("::1", "::/64"),
        ("not-an-address", "not-an-address"),
        ("", ""),
    ],
)
def test_addresses_are_keyed_per_ipv4_address_and_per_ipv6_64_block(address, key):
    assert submits.address_key(address) == key


@pytest.mark.asyncio
async def test_a_refusal_is_logged_without_the_tabs_client_token(caplog):
    caplog.set_level(logging.DEBUG)
    secret = "4d7c1f0e-secret-client-token"
    limits = Limiter(MemoryStorage())
    for _ in range(PER_CLIENT.attempts + 1):
        await limits.allow("contact", secret, "10.0.0.1")
    for i in range(PER_ADDRESS.attempts + 1):
        await limits.allow("contact", f"{secret}-{i}", "10.0.0.2")
    assert "Rate limit" in caplog.text
    assert secret not in caplog.text


@pytest.mark.asyncio
async def test_exhausted_says_whether_the_limit_is_used_up_and_counts_nothing(limits_clock):
    limits = Limiter(MemoryStorage())
    for _ in range(PER_ADDRESS.attempts - 1):
        await limits.allow("bounce-hook", "", "203.0.113.9")
    for _ in range(3):  # asking never counts
        assert not await limits.exhausted("bounce-hook", "203.0.113.9")
    assert await limits.allow("bounce-hook", "", "203.0.113.9")  # the last attempt is still allowed
    assert await limits.exhausted("bounce-hook", "203.0.113.9")
    assert not await limits.exhausted("bounce-hook", "203.0.113.10")  # another address
    assert not await limits.exhausted("contact", "203.0.113.9")  # another form
    limits_clock.now += PER_ADDRESS.window_s
    assert not await limits.exhausted("bounce-hook", "203.0.113.9")  # the next window


DOCS = Path(__file__).resolve().parents[2] / "docs"


def documented_form_limits() -> tuple[int, int, int]:
    """Per tab, per address and their window in minutes, as docs/mailing-list.md and docs/configuration.md say."""
    text = " ".join((DOCS / "mailing-list.md").read_text(encoding="utf-8").split())
    found = re.search(r"\((\d+) per page load, (\d+) per address in (\d+) minutes\)", text)
    assert found, "docs/mailing-list.md no longer says the forms' per-visitor limits"
    per_tab, per_address, minutes = (int(figure) for figure in found.groups())
    configuration = (DOCS / "configuration.md").read_text(encoding="utf-8")
    row = next(line for line in configuration.splitlines() if line.startswith("| `PUBLISHER_RATE_LIMIT_CLIENT`"))
    assert f"`{per_tab}/{minutes * 60}`, `{per_address}/{minutes * 60}`" in row
    return per_tab, per_address, minutes


def test_the_limits_are_the_figures_the_docs_give():
    assert documented_form_limits() == (8, 40, 10)
    assert submits.Limiter().per_client == submits.Limit(attempts=8, window_s=600)
    assert submits.Limiter().per_address == submits.Limit(attempts=40, window_s=600)


@pytest.mark.asyncio
@pytest.mark.parametrize("form", ["subscribe", "contact"])
async def test_a_tab_gets_exactly_its_documented_attempts_and_an_address_its_own(form, limits_clock):
    per_tab, per_address, minutes = documented_form_limits()
    limits = Limiter(MemoryStorage())
    assert [await limits.allow(form, "tab-1", "10.0.0.1") for _ in range(per_tab + 1)] == [True] * per_tab + [False]
    assert await limits.allow(form, "tab-2", "10.0.0.1")  # a new tab, same address: still within 40

    limits = Limiter(MemoryStorage())  # a window starts with its first attempt (windows are fixed, not sliding)
    tabs = [f"tab-{n}" for n in range(per_address + 1)]  # one attempt each: only the address's count
    assert [await limits.allow(form, tab, "10.0.0.9") for tab in tabs] == [True] * per_address + [False]
    limits_clock.now += minutes * 60 - 1
    assert not await limits.allow(form, "tab-new", "10.0.0.9")  # the window still holds
    limits_clock.now += 1
    assert await limits.allow(form, "tab-new", "10.0.0.9")


GATEWAY = "https://gw.example.com"


@pytest.mark.parametrize(
    ("redis", "gateway_url", "kept_by"),
    [("redis", None, "limits"), ("redis", GATEWAY, "limits"), (None, None, "database"), (None, GATEWAY, "limits")],
)
def test_used_tokens_are_kept_in_redis_else_the_sites_database_else_the_workers_memory(
    monkeypatch, redis, gateway_url, kept_by
):
    monkeypatch.setattr(submits, "shared_redis", lambda: redis)
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", gateway_url or "")  # empty: the embedded gateway
    shared = MemoryStorage()  # stands for whichever storage the submit limits use
    submits.shared_storage.set(shared)
    submits.shared_limiter.set(None)
    try:
        store = submits.configured_used_tokens()
    finally:
        submits.shared_storage.set(None)
        submits.shared_limiter.set(None)
    if kept_by == "database":
        assert type(store) is submits.DatabaseUsedTokens
    else:
        assert type(store) is Limiter and store.storage is shared


@pytest.mark.asyncio
async def test_a_token_is_used_once_in_a_window_of_an_hour_and_a_minute():
    assert submits.ONCE.get_expiry() == 3660  # docs/security.md
    store = Limiter(MemoryStorage())
    assert [await store.first_use(nonce) for nonce in ("n-1", "n-1", "n-2")] == [True, False, True]


@pytest.mark.asyncio
async def test_a_store_that_fails_lets_the_token_through_and_says_so(caplog):
    """The limits per address still hold, and the form must not go down with the store."""

    class Broken:
        async def first_use(self, nonce: str) -> bool:
            raise ConnectionError("the store is down")

    submits.shared_used_tokens.set(Broken())  # type: ignore[arg-type]
    try:
        assert await submits.first_use("nonce-0000000000000001") is True
    finally:
        submits.shared_used_tokens.set(None)
    assert "Form token store unavailable (ConnectionError)" in caplog.text
