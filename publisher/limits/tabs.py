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
from typing import TYPE_CHECKING, Any

from limits import RateLimitItemPerMinute
from limits.aio.storage import Storage
from limits.aio.strategies import FixedWindowRateLimiter
from reflex_base import config as reflex_config

from publisher.config import settings
from publisher.config.settings import PerProcess, TabLimits
from publisher.limits import submits
from publisher.reflex_internals import state_managers
from publisher.reflex_internals.state_managers import shared_redis

if TYPE_CHECKING:
    from reflex.app import App

logger = logging.getLogger(__name__)

EVENT_PATH = "/_event"
# An open tab's entry in Redis lives this long unless its worker renews it.
ENTRY_TTL_S = 60
HEARTBEAT_S = 20

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


# One round trip, atomic: drop expired entries, then count the tab unless the address has its most.
_OPEN_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


class SharedTabs:
    """Every worker's open tabs in Redis: ``publisher:tabs:open:ADDRESS``, a sorted set of tab -> expiry
    time; a crashed worker's entries expire, as the key does when nobody renews it."""

    def __init__(self, redis):
        self._redis = redis
        self._open = redis.register_script(_OPEN_SCRIPT)

    @staticmethod
    def _key(address: str) -> str:
        return f"publisher:tabs:open:{address}"

    async def open(self, address: str, tab: str, now: float, per_address: int) -> bool:
        args = [now, now + ENTRY_TTL_S, tab, per_address, ENTRY_TTL_S]
        return bool(await self._open(keys=[self._key(address)], args=args))

    async def close(self, address: str, tab: str) -> None:
        await self._redis.zrem(self._key(address), tab)

    async def renew(self, tabs: Mapping[str, str], now: float) -> None:
        by_address: dict[str, dict[str, float]] = {}
        for tab, address in tabs.items():
            by_address.setdefault(address, {})[tab] = now + ENTRY_TTL_S
        async with self._redis.pipeline(transaction=False) as pipe:
            for address, entries in by_address.items():
                pipe.zadd(self._key(address), entries)
                pipe.expire(self._key(address), ENTRY_TTL_S)
            await pipe.execute()


class TabGate:
    """One worker's door: its own open tabs per address (all there are without Redis), every worker's in
    ``shared`` (Redis), and the new tabs a minute counted by the ``limits`` package with the forms' attempts."""

    def __init__(
        self,
        limits: TabLimits,
        shared: SharedTabs | None = None,
        counts: Storage | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.limits = limits
        self.shared = shared
        self.counts = counts if counts is not None else submits.MemoryStorage()
        self._new_tabs = FixedWindowRateLimiter(self.counts)
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
        held = self._held.get(address, 0)
        refusal = fair_refusal(held, len(self.open_here) + self._reserved, len(self._held), self.limits.per_worker)
        if refusal is None and held >= self.limits.per_address:
            refusal = ADDRESS_FULL
        if refusal is not None:
            return None, refusal
        tab = secrets.token_hex(8)
        self._reserved += 1
        self._held[address] = held + 1
        try:
            refusal = await self._counted(address, tab)
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

    async def _counted(self, address: str, tab: str) -> str | None:
        """Count the tab unless a shared count refuses it (the refusal). A failing store lets it in (logged):
        the worker's own limits still hold."""
        try:
            now, per_address = self.clock(), self.limits.per_address
            if self.shared is not None and not await self.shared.open(address, tab, now, per_address):
                return ADDRESS_FULL
            if not await self._new_tabs.hit(RateLimitItemPerMinute(self.limits.new_per_minute), "tabs", address):
                if self.shared is not None:
                    await self.shared.close(address, tab)
                return TOO_FAST
        except Exception as exc:  # noqa: BLE001 - the shared counts are down: the worker's cap still holds
            logger.warning("Open-tab counts unavailable (%s); letting the tab in", type(exc).__name__)
        return None

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
        if self.shared is None:
            return
        try:
            await self.shared.close(address, tab)
        except Exception as exc:  # noqa: BLE001 - its entry expires by itself
            logger.warning("Open-tab counts unavailable (%s) closing a tab", type(exc).__name__)

    async def renew_now(self) -> None:
        if self.shared is not None and self.open_here:
            await self.shared.renew(dict(self.open_here), self.clock())

    async def engage(self, token: str, keep_s: int) -> None:
        """Remember for ``keep_s`` that the tab submitted (from now: a second submit starts again)."""
        await self.counts.clear(f"tabs-engaged/{token}")
        await self.counts.incr(f"tabs-engaged/{token}", keep_s)

    async def engaged(self, token: str) -> bool:
        return await self.counts.get(f"tabs-engaged/{token}") > 0

    def _keep_renewing(self) -> None:
        if self.shared is not None and (self._heartbeat is None or self._heartbeat.done()):
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
    shared = SharedTabs(redis) if redis is not None else None
    return TabGate(settings.current().tabs, shared, submits.shared_storage.get())


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
    return reflex_config.get_config().redis_token_expiration


async def engage(token: str) -> None:
    """The tab submitted something: keep its state as long as Reflex would."""
    if not token:
        return
    try:
        await shared_gate.get().engage(token, keep_s())
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
        if await gate.engaged(token):
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
