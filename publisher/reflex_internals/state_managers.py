"""Reflex's Redis for every store, and a closed tab's state kept briefly (limits/tabs.py decides when):
Reflex 0.10 has no per-tab expiry, so each state manager is reached into."""

from __future__ import annotations

import functools
import time

import redis.asyncio
from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.redis import StateManagerRedis
from reflex.istate.manager.token import BaseStateToken
from reflex.state import BaseState, State
from reflex.utils import prerequisites

__all__ = ["StateManagerRedis", "expire_keys", "expire_soon", "shared_redis", "what_moved"]


def shared_redis() -> redis.asyncio.Redis | None:
    """The one answer to "Redis or not" for every store: Reflex's client (REFLEX_REDIS_URL), or None."""
    return prerequisites.get_redis()


def what_moved() -> list[str]:
    return [
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


async def expire_soon(manager: object, token: str, seconds: float) -> bool:
    """Let the state of ``token`` go after ``seconds`` (never later than Reflex would); True when it was
    in this process's memory (worth handing memory back)."""
    if isinstance(manager, StateManagerDisk):
        _expire_on_disk(manager, token, seconds)
        return True
    if isinstance(manager, StateManagerMemory):
        _expire_in_memory(manager, token, seconds)
        return True
    if isinstance(manager, StateManagerRedis):
        await expire_keys(manager, token, int(seconds))
    return False


def _expire_on_disk(manager: StateManagerDisk, token: str, seconds: float) -> None:
    tracked = manager._token_last_touched.get(token)
    if tracked is None:
        return  # no state was ever made for it (refused, or never hydrated)
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
    """Every state class of the app: one Redis key each per tab."""
    classes: list[type] = []
    stack: list[type[BaseState]] = [State]
    while stack:
        cls = stack.pop()
        classes.append(cls)
        stack.extend(cls.get_substates())
    return tuple(classes)


async def expire_keys(manager: StateManagerRedis, token: str, seconds: int) -> None:
    key = BaseStateToken(ident=token, cls=State)
    async with manager.redis.pipeline(transaction=False) as pipe:
        for cls in _state_classes():
            pipe.expire(key._state_key(cls), int(seconds))
        await pipe.execute()
