"""What a closed tab leaves behind (web/tab_states.py, reflex_internals/state_managers.py), and what
a page kept in memory for it."""

from __future__ import annotations

import asyncio
import time

import pytest
from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State

from publisher import reflex_internals
from publisher.reflex_internals import state_managers
from publisher.web import tab_states
from publisher.web.states import admin_state


def test_the_reflex_internals_it_relies_on_are_there():
    reflex_internals.check()  # raises, naming what moved, when an upgrade moved one


@pytest.mark.asyncio
async def test_in_memory_a_closed_tab_is_dropped_after_the_short_time_not_the_hour():
    manager = StateManagerMemory(token_expiration=3600)
    await manager.get_state(BaseStateToken(ident="idle-tab", cls=State))
    await manager.get_state(BaseStateToken(ident="other-tab", cls=State))
    assert await state_managers.expire_soon(manager, "idle-tab", 0.2)
    await state_managers.expire_soon(manager, "never-seen", 0.2)  # refused at the door: nothing to do
    deadline = time.monotonic() + 30  # dropped 0.2 s on; the deadline only ends a broken test
    while "idle-tab" in manager.states and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "idle-tab" not in manager.states and "other-tab" in manager.states
    await manager.close()


@pytest.mark.asyncio
async def test_on_disk_a_closed_tab_is_due_after_the_short_time_and_never_later_than_reflexs(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(tmp_path))
    manager = StateManagerDisk(token_expiration=3600)
    await manager.get_state(BaseStateToken(ident="idle-tab", cls=State))
    before = time.time()
    assert await state_managers.expire_soon(manager, "idle-tab", 180)
    after = time.time()
    touched, _ = manager._token_last_touched["idle-tab"]
    # Reflex drops it token_expiration after "touched": 180 s from the call, however long the call
    # took (a millisecond either way for the rounding of a float of 1.7e9 seconds).
    assert before + 180 - 1e-3 <= touched + manager.token_expiration <= after + 180 + 1e-3
    await state_managers.expire_soon(manager, "idle-tab", 600)  # never later than already due
    assert manager._token_last_touched["idle-tab"][0] == touched
    await manager.close()


@pytest.mark.asyncio
async def test_what_a_page_kept_in_memory_for_a_tab_goes_when_its_channel_closes():
    memory = tab_states.tab_memory.get()
    memory["closing-tab"] = {admin_state.ASKED: (admin_state.FORGET, "ann@example.com")}
    memory["open-tab"] = {admin_state.ASKED: (admin_state.PAUSE, "a-book")}
    try:
        await tab_states.closed("closing-tab")
        assert "closing-tab" not in memory
        assert memory["open-tab"] == {admin_state.ASKED: (admin_state.PAUSE, "a-book")}
    finally:
        memory.pop("closing-tab", None)
        memory.pop("open-tab", None)
