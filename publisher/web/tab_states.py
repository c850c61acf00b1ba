"""What a closed tab leaves behind: its state, kept briefly unless the tab submitted something.

Reflex keeps every tab's state for its token expiration (an hour), whether or
not the tab ever did anything; a flood of tabs that never submit would hold
memory (or Redis) for that hour. When a tab's event channel closes
(tabs.EventChannelDoor) and the tab never submitted (``engage`` was never
called for it), its state is kept ``CLOSED_TAB_KEEP_S`` instead: its question
is asked afresh on the next visit anyway. A tab that submitted (mid-submit, or
succeeded) keeps Reflex's expiry, so a returning tab still finds its success
alert. A tab that connects again before then carries on with its state.

Reflex 0.10 has no per-tab expiry, so this is the one place that reaches into
its state managers; ``check_reflex_internals`` runs at start-up and names what
changed if an upgrade moved them:

- disk (one worker, Reflex's default: states in memory, copied to files): the
  time ``StateManagerDisk._token_last_touched`` records is moved back, so its
  write-queue loop (every 2 s) drops the state from memory when the short time is
  up (the file stays on disk for Reflex's hour; a tab that returns reloads it);
- memory: the deadline in ``StateManagerMemory._token_expires_at``, then its
  expiration task is restarted, since it sleeps until the earliest deadline it knew;
- Redis: EXPIRE on the tab's state keys, which Reflex names
  ``BaseStateToken._state_key`` ("TOKEN_full.state.name"), one per state class.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import gc
import logging
import time

from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.redis import StateManagerRedis
from reflex.istate.manager.token import BaseStateToken
from reflex_base import config as reflex_config

from publisher.limits import tabs

logger = logging.getLogger(__name__)

CLOSED_TAB_KEEP_S = 180


def check_reflex_internals() -> None:
    """Fail loudly at start-up if a Reflex upgrade moved what ``closed`` relies on."""
    missing = [
        name
        for name, present in (
            ("StateManagerMemory._token_expires_at", "_token_expires_at" in StateManagerMemory.__dataclass_fields__),
            ("StateManagerMemory._expiration_task", "_expiration_task" in StateManagerMemory.__dataclass_fields__),
            ("StateManagerMemory._ensure_expiration_task", hasattr(StateManagerMemory, "_ensure_expiration_task")),
            ("StateManagerDisk._token_last_touched", "_token_last_touched" in StateManagerDisk.__dataclass_fields__),
            ("StateManagerDisk.token_expiration", "token_expiration" in StateManagerDisk.__dataclass_fields__),
            ("StateManagerRedis.redis", "redis" in StateManagerRedis.__dataclass_fields__),
            ("BaseStateToken._state_key", hasattr(BaseStateToken, "_state_key")),
        )
        if not present
    ]
    if missing:
        raise RuntimeError(
            "publisher/hosting/tab_states.py relies on Reflex internals that this Reflex no longer has: "
            + ", ".join(missing)
            + ". Adapt it to the new state managers before upgrading."
        )


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


def _state_manager():
    from publisher.publisher import app  # noqa: PLC0415 (the app imports this module's users)

    return app.state_manager


async def opened(token: str) -> None:
    """A tab connects (again): in Redis its state keys get Reflex's expiry back."""
    manager = _state_manager()
    if token and isinstance(manager, StateManagerRedis):
        try:
            await _expire_keys(manager, token, keep_s())
        except Exception as exc:  # noqa: BLE001 - Reflex's own writes still set its expiry on each change
            logger.warning("Could not restore a tab's state expiry (%s)", type(exc).__name__)


async def closed(token: str) -> None:
    """The tab's event channel closed: a tab that never submitted keeps its state briefly."""
    gate = tabs.shared_gate.get()
    if not token or gate.token_open(token):
        return  # the same tab is connected again here
    try:
        if await gate.store.engaged(token, time.time()):
            return
        manager = _state_manager()
        if isinstance(manager, StateManagerDisk):
            _expire_on_disk(manager, token, CLOSED_TAB_KEEP_S)
            memory_back.after(CLOSED_TAB_KEEP_S + HAND_BACK_AFTER_S)
        elif isinstance(manager, StateManagerMemory):
            _expire_in_memory(manager, token, CLOSED_TAB_KEEP_S)
            memory_back.after(CLOSED_TAB_KEEP_S + HAND_BACK_AFTER_S)
        elif isinstance(manager, StateManagerRedis):
            await _expire_keys(manager, token, CLOSED_TAB_KEEP_S)
    except Exception as exc:  # noqa: BLE001 - the state then expires at Reflex's time
        logger.warning("Could not shorten a closed tab's state (%s)", type(exc).__name__)


class MemoryBack:
    """Hands the memory of dropped states back to the system once they are gone.

    Python keeps freed memory for its own reuse (glibc's heap and its own pools):
    after a flood of tabs the process would stay at its peak. Once the closed tabs'
    states have expired, a collection frees their cycles and glibc's ``malloc_trim``
    returns the free pages: when the first closed tab's state is gone, then again
    when the last one's is (a flood's tabs close over a while).
    """

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


def _expire_on_disk(manager: StateManagerDisk, token: str, seconds: float) -> None:
    tracked = manager._token_last_touched.get(token)
    if tracked is None:
        return  # no state was ever made for it (refused, or never hydrated)
    # Reflex drops a state token_expiration after it was last touched: as if touched long ago.
    backdated = time.time() - manager.token_expiration + seconds
    if tracked[0] > backdated:
        manager._token_last_touched[token] = (backdated, tracked[1])


def _expire_in_memory(manager: StateManagerMemory, token: str, seconds: float) -> None:
    tracked = manager._token_expires_at.get(token)
    if tracked is None:
        return  # no state was ever made for it (refused, or never hydrated)
    deadline = time.time() + seconds
    if tracked[0] <= deadline:
        return
    manager._token_expires_at[token] = (deadline, tracked[1])
    # The expiration task sleeps until the earliest deadline it saw: wake it for this one.
    task = manager._expiration_task
    manager._expiration_task = None
    if task is not None and not task.done():
        task.cancel()
    manager._ensure_expiration_task()


@functools.cache
def _state_classes() -> tuple[type, ...]:
    """Every state class of the app (fixed once the app is imported): one Redis key each per tab."""
    from reflex.state import State  # noqa: PLC0415

    classes, stack = [], [State]
    while stack:
        cls = stack.pop()
        classes.append(cls)
        stack.extend(cls.get_substates())
    return tuple(classes)


async def _expire_keys(manager: StateManagerRedis, token: str, seconds: int) -> None:
    from reflex.state import State  # noqa: PLC0415

    key = BaseStateToken(ident=token, cls=State)
    async with manager.redis.pipeline(transaction=False) as pipe:
        for cls in _state_classes():
            pipe.expire(key._state_key(cls), int(seconds))
        await pipe.execute()
