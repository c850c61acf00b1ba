"""Who may open the event channel, and how long a closed tab's state stays: tabs that never submit would
fill a worker's memory (or Redis) unseen by the submit limits (docs/security.md, "Open tabs"). An open
tab's entry expires unless its worker renews it. A log never names a tab's token."""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reflex_base import config as reflex_config

from publisher.config import settings
from publisher.config.settings import PerProcess, TabLimits
from publisher.reflex_internals import state_managers
from publisher.reflex_internals.state_managers import shared_redis

if TYPE_CHECKING:
    from reflex.app import App

logger = logging.getLogger(__name__)

EVENT_PATH = "/_event"
# An open tab's entry lives this long unless its worker renews it.
ENTRY_TTL_S = 60
HEARTBEAT_S = 20
RATE_WINDOW_S = 60

# Why a tab was refused (logged; the page shows one notice for all).
WORKER_FULL = "this worker has its most open tabs"
MORE_THAN_SHARE = "this worker is nearly full and this address holds more than its share"
ADDRESS_FULL = "too many open tabs from this address"
TOO_FAST = "too many new tabs from this address this minute"
FOREIGN_ORIGIN = "a page of another website"

# Fair sharing of a worker's cap: from this share of it on, an address holding at least
# cap / (addresses holding tabs here), and at least FAIR_FLOOR, waits; a newcomer does not.
NEAR_FULL = 0.9
FAIR_FLOOR = 4

ONE_ADDRESS_WARNING = "the site sees every visitor as one address: set REFLEX_TRUSTED_PROXY_HOPS"


def _window(now: float) -> int:
    return int(now // RATE_WINDOW_S)


def fair_refusal(held: int, open_here: int, addresses_here: int, per_worker: int) -> str | None:
    """Whether a worker refuses one more tab of an address holding ``held`` of its ``open_here``: near
    the cap an address holding its share waits first, so 34 addresses cannot lock everyone else out."""
    if open_here >= per_worker:
        return WORKER_FULL
    if held and open_here >= NEAR_FULL * per_worker:
        share = max(FAIR_FLOOR, per_worker / max(addresses_here, 1))
        if held >= share:
            return MORE_THAN_SHARE
    return None


@dataclass
class MemoryTabs:
    """The counts of this process: open tabs by address (each entry expiring), new tabs by minute."""

    open_tabs: dict[str, dict[str, float]] = field(default_factory=dict)
    new_tabs: dict[str, tuple[int, int]] = field(default_factory=dict)  # address -> (window, count)
    engaged_until: dict[str, float] = field(default_factory=dict)

    async def open(self, address: str, tab: str, now: float, limits: TabLimits) -> str | None:
        entries = {other: until for other, until in self.open_tabs.get(address, {}).items() if until > now}
        if len(entries) >= limits.per_address:
            self.open_tabs[address] = entries
            return ADDRESS_FULL
        window, count = self.new_tabs.get(address, (_window(now), 0))
        if window != _window(now):
            window, count = _window(now), 0
        if count >= limits.new_per_minute:
            return TOO_FAST
        self.new_tabs[address] = (window, count + 1)
        entries[tab] = now + ENTRY_TTL_S
        self.open_tabs[address] = entries
        return None

    async def close(self, address: str, tab: str) -> None:
        entries = self.open_tabs.get(address)
        if entries is not None:
            entries.pop(tab, None)
            if not entries:
                del self.open_tabs[address]

    async def renew(self, tabs: Mapping[str, str], now: float) -> None:
        for tab, address in tabs.items():
            self.open_tabs.setdefault(address, {})[tab] = now + ENTRY_TTL_S
        current = _window(now)
        self.new_tabs = {address: value for address, value in self.new_tabs.items() if value[0] == current}
        self.engaged_until = {token: until for token, until in self.engaged_until.items() if until > now}

    async def engage(self, token: str, now: float, keep_s: float) -> None:
        self.engaged_until[token] = now + keep_s

    async def engaged(self, token: str, now: float) -> bool:
        return self.engaged_until.get(token, 0) > now


# One round trip, atomic: drop expired entries, check both limits, then count the tab.
_OPEN_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 1 end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[5]) then return 2 end
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[6])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[7])
return 0
"""


class RedisTabs:
    """The counts in Redis: ``publisher:tabs:open:ADDRESS``, a sorted set of tab -> expiry time, and
    ``publisher:tabs:new:ADDRESS:MINUTE``; every key expires by itself when nobody renews it."""

    def __init__(self, redis):
        self._redis = redis
        self._open = redis.register_script(_OPEN_SCRIPT)

    @staticmethod
    def _open_key(address: str) -> str:
        return f"publisher:tabs:open:{address}"

    async def open(self, address: str, tab: str, now: float, limits: TabLimits) -> str | None:
        answer = await self._open(
            keys=[self._open_key(address), f"publisher:tabs:new:{address}:{_window(now)}"],
            args=[now, now + ENTRY_TTL_S, tab, limits.per_address, limits.new_per_minute, RATE_WINDOW_S, ENTRY_TTL_S],
        )
        return {0: None, 1: ADDRESS_FULL, 2: TOO_FAST}[int(answer)]

    async def close(self, address: str, tab: str) -> None:
        await self._redis.zrem(self._open_key(address), tab)

    async def renew(self, tabs: Mapping[str, str], now: float) -> None:
        by_address: dict[str, dict[str, float]] = {}
        for tab, address in tabs.items():
            by_address.setdefault(address, {})[tab] = now + ENTRY_TTL_S
        async with self._redis.pipeline(transaction=False) as pipe:
            for address, entries in by_address.items():
                pipe.zadd(self._open_key(address), entries)
                pipe.expire(self._open_key(address), ENTRY_TTL_S)
            await pipe.execute()

    async def engage(self, token: str, now: float, keep_s: float) -> None:
        await self._redis.set(f"publisher:tabs:engaged:{token}", 1, ex=int(keep_s))

    async def engaged(self, token: str, now: float) -> bool:
        return bool(await self._redis.exists(f"publisher:tabs:engaged:{token}"))


# The per-address counts, in the process or in Redis: ``open`` counts a tab unless a limit refuses it
# (the refusal, or None); ``renew`` keeps open tabs (tab -> address) counted another ENTRY_TTL_S.
OpenTabs = MemoryTabs | RedisTabs


class TabGate:
    """One worker's door: its open tabs, the shared counts, the heartbeat that renews them."""

    def __init__(self, store: OpenTabs, limits: TabLimits, clock: Callable[[], float] = time.time):
        self.store = store
        self.limits = limits
        self.clock = clock
        self.open_here: dict[str, str] = {}  # tab -> address, this worker's open tabs
        self.tokens: dict[str, str] = {}  # tab -> the token of the tab's page (states are by token)
        self._held: dict[str, int] = {}  # address -> its open and reserved tabs here
        self._reserved = 0  # places taken by admits still waiting for the shared counts
        self._heartbeat: asyncio.Task | None = None

    def token_open(self, token: str) -> bool:
        return token in self.tokens.values()

    async def admit(self, address: str, token: str = "") -> tuple[str | None, str | None]:
        """(the tab's id, None) when it may open, else (None, why not). The place is reserved before
        the await on the shared counts, so admits waiting together cannot overshoot the cap."""
        refusal = fair_refusal(
            self._held.get(address, 0), len(self.open_here) + self._reserved, len(self._held), self.limits.per_worker
        )
        if refusal is not None:
            return None, refusal
        tab = secrets.token_hex(8)
        self._reserved += 1
        self._held[address] = self._held.get(address, 0) + 1
        try:
            try:
                refusal = await self.store.open(address, tab, self.clock(), self.limits)
            except Exception as exc:  # noqa: BLE001 - the shared counts are down: the worker's cap still holds
                logger.warning("Open-tab counts unavailable (%s); letting the tab in", type(exc).__name__)
                refusal = None
        except BaseException:  # cancelled while waiting: the place goes back
            self._reserved -= 1
            self._give_back(address)
            raise
        self._reserved -= 1
        if refusal is not None:
            self._give_back(address)
            return None, refusal
        self.open_here[tab] = address
        self.tokens[tab] = token
        self._keep_renewing()
        return tab, None

    def _give_back(self, address: str) -> None:
        left = self._held.get(address, 0) - 1
        if left > 0:
            self._held[address] = left
        else:
            self._held.pop(address, None)

    async def release(self, tab: str) -> None:
        address = self.open_here.pop(tab, None)
        self.tokens.pop(tab, None)
        if address is None:
            return
        self._give_back(address)
        try:
            await self.store.close(address, tab)
        except Exception as exc:  # noqa: BLE001 - its entry expires by itself
            logger.warning("Open-tab counts unavailable (%s) closing a tab", type(exc).__name__)

    async def renew_now(self) -> None:
        if self.open_here:
            await self.store.renew(dict(self.open_here), self.clock())

    def _keep_renewing(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._renew_forever(), name="publisher-open-tabs-heartbeat")

    async def _renew_forever(self) -> None:
        while self.open_here:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await self.renew_now()
            except Exception as exc:  # noqa: BLE001 - try again at the next beat
                logger.warning("Open-tab counts unavailable (%s); renewing at the next beat", type(exc).__name__)


def configured_gate() -> TabGate:
    redis = shared_redis()
    return TabGate(RedisTabs(redis) if redis is not None else MemoryTabs(), settings.current().tabs)


shared_gate: PerProcess[TabGate] = PerProcess(configured_gate)


# A closed tab that never submitted keeps its state this long; one that submitted keeps Reflex's hour,
# so a page that reconnects still finds its success alert.
CLOSED_TAB_KEEP_S = 180

# The app (publisher.py installs it), whose state manager holds the tabs: never imported here.
installed_app: PerProcess[App] = PerProcess()
# What a page keeps for an open tab in this worker's memory instead of the tab's stored state
# (the dashboard's action waiting for its "Yes", whose target may be an address): by client
# token, dropped when the tab's channel closes here (``closed``). A tab's channel, and so its
# events, stay on one worker while it is open.
tab_memory: PerProcess[dict[str, dict[str, Any]]] = PerProcess(dict)


def keep_s() -> int:
    """Reflex's expiry of a tab's state (a submitted tab keeps it)."""
    return reflex_config.get_config().redis_token_expiration


async def engage(token: str) -> None:
    """The tab submitted something: keep its state as long as Reflex would."""
    if not token:
        return
    try:
        await shared_gate.get().store.engage(token, time.time(), keep_s())
    except Exception as exc:  # noqa: BLE001 - at worst the state goes early; the submit itself goes on
        logger.warning("Could not mark a tab as engaged (%s)", type(exc).__name__)


async def opened(token: str) -> None:
    """A tab connects (again): in Redis its state keys get Reflex's expiry back."""
    manager = installed_app.get().state_manager
    if token and isinstance(manager, state_managers.StateManagerRedis):
        try:
            await state_managers.expire_keys(manager, token, keep_s())
        except Exception as exc:  # noqa: BLE001 - Reflex's own writes still set its expiry on each change
            logger.warning("Could not restore a tab's state expiry (%s)", type(exc).__name__)


async def closed(token: str) -> None:
    """The tab's event channel closed: what a page kept for it in memory goes, and a tab that never
    submitted keeps its state briefly."""
    tab_memory.get().pop(token, None)
    gate = shared_gate.get()
    if not token or gate.token_open(token):
        return  # the same tab is connected again here
    try:
        if await gate.store.engaged(token, time.time()):
            return
        if await state_managers.expire_soon(installed_app.get().state_manager, token, CLOSED_TAB_KEEP_S):
            memory_back.after(CLOSED_TAB_KEEP_S + HAND_BACK_AFTER_S)
    except Exception as exc:  # noqa: BLE001 - the state then expires at Reflex's time
        logger.warning("Could not shorten a closed tab's state (%s)", type(exc).__name__)


class MemoryBack:
    """Hands the memory of dropped states back to the system: Python keeps freed memory for its own reuse,
    so after a flood of tabs the process would stay at its peak (a collection, then ``malloc_trim``)."""

    def __init__(self):
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0
        self._trim: Callable[[int], int] | None
        try:  # glibc's malloc_trim (the image is Debian), or none elsewhere
            self._trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            self._trim = None

    def after(self, delay_s: float) -> None:
        loop = asyncio.get_running_loop()
        self._due = max(self._due, loop.time() + delay_s)
        if self._timer is None:
            self._timer = loop.call_at(self._due, self._hand_back)

    def _hand_back(self) -> None:
        started = time.perf_counter()
        gc.collect()
        if self._trim is not None:
            self._trim(0)
        took_ms = (time.perf_counter() - started) * 1000
        logger.info("Closed tabs' states dropped; memory handed back in %.0f ms", took_ms)
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(self._due, self._hand_back) if self._due > loop.time() + 1 else None


memory_back = MemoryBack()
# The disk manager's loop drops an expired state within its 2 s debounce.
HAND_BACK_AFTER_S = 5
