"""A closed tab's state, kept briefly unless the tab submitted something: Reflex keeps every tab's for
an hour, so a flood of tabs that never submit would hold memory (or Redis) that long. A tab that
submitted keeps Reflex's expiry, so a page that reconnects still finds its success alert."""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import time
from typing import TYPE_CHECKING, Any

from reflex_base import config as reflex_config

from publisher.limits import tabs
from publisher.per_process import PerProcess
from publisher.reflex_internals import state_managers

if TYPE_CHECKING:
    from reflex.app import App

logger = logging.getLogger(__name__)

CLOSED_TAB_KEEP_S = 180

# The app (publisher.py installs it), whose state manager holds the tabs: never imported here.
installed_app: PerProcess[App] = PerProcess()
# What a page keeps for an open tab in this worker's memory instead of the tab's stored state
# (the dashboard's action waiting for its "Yes", whose target may be an address): by client
# token, dropped when the tab's channel closes here (``closed``). A tab's channel, and so its
# events, stay on one worker while it is open.
tab_memory: PerProcess[dict[str, dict[str, Any]]] = PerProcess(dict)


def install(app) -> None:
    installed_app.set(app)


def _state_manager():
    return installed_app.get().state_manager


def keep_s() -> int:
    """Reflex's expiry of a tab's state (a submitted tab keeps it)."""
    return reflex_config.get_config().redis_token_expiration


async def engage(token: str) -> None:
    """The tab submitted something: keep its state as long as Reflex would."""
    if not token:
        return
    try:
        await tabs.shared_gate.get().store.engage(token, time.time(), keep_s())
    except Exception as exc:  # noqa: BLE001 - at worst the state goes early; the submit itself goes on
        logger.warning("Could not mark a tab as engaged (%s)", type(exc).__name__)


async def opened(token: str) -> None:
    """A tab connects (again): in Redis its state keys get Reflex's expiry back."""
    manager = _state_manager()
    if token and isinstance(manager, state_managers.StateManagerRedis):
        try:
            await state_managers.expire_keys(manager, token, keep_s())
        except Exception as exc:  # noqa: BLE001 - Reflex's own writes still set its expiry on each change
            logger.warning("Could not restore a tab's state expiry (%s)", type(exc).__name__)


async def closed(token: str) -> None:
    """The tab's event channel closed: what a page kept for it in memory goes, and a tab that never
    submitted keeps its state briefly."""
    tab_memory.get().pop(token, None)
    gate = tabs.shared_gate.get()
    if not token or gate.token_open(token):
        return  # the same tab is connected again here
    try:
        if await gate.store.engaged(token, time.time()):
            return
        if await state_managers.expire_soon(_state_manager(), token, CLOSED_TAB_KEEP_S):
            memory_back.after(CLOSED_TAB_KEEP_S + HAND_BACK_AFTER_S)
    except Exception as exc:  # noqa: BLE001 - the state then expires at Reflex's time
        logger.warning("Could not shorten a closed tab's state (%s)", type(exc).__name__)


class MemoryBack:
    """Hands the memory of dropped states back to the system: Python keeps freed memory for its own reuse,
    so after a flood of tabs the process would stay at its peak (a collection, then ``malloc_trim``)."""

    def __init__(self):
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0
        self._trim = _malloc_trim()

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


def _malloc_trim():
    """glibc's malloc_trim (the image is Debian), or None elsewhere."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


memory_back = MemoryBack()
# The disk manager's loop drops an expired state within its 2 s debounce.
HAND_BACK_AFTER_S = 5
