"""An open dashboard refreshing itself every 2 seconds still idles out after the 30 minutes the docs give
(its state driven through its handlers, the session's rule on a moved clock)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from publisher.limits import tabs
from publisher.rules import admin_access
from publisher.rules.admin_access import SessionTimes
from publisher.storage import admins
from publisher.web.states import admin_state
from publisher.web.states.admin_state import AdminState
from tests.support import DOCS
from tests.unit.test_admin_access import ADA

SIGNED_IN = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
SESSION_HASH = admin_access.token_hash("a session")


class Session:
    """One admin session on a clock the test moves, under storage/admins.session_admin's rule."""

    def __init__(self) -> None:
        self.now = SIGNED_IN
        self.times: SessionTimes | None = SessionTimes(SIGNED_IN, SIGNED_IN)
        self.touches: list[datetime] = []
        self.ended_at: datetime | None = None

    def session_admin(self, session_hash, idle, now=None, touch=False, db_url=None):
        assert session_hash == SESSION_HASH
        if self.times is None:
            return None
        if not admin_access.session_open(self.times, self.now, idle):
            self.times, self.ended_at = None, self.now
            return None
        if touch:
            self.times = SessionTimes(self.times.created_at, self.now)
            self.touches.append(self.now)
        return ADA


@pytest.fixture
def session(monkeypatch) -> Session:
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.delenv("PUBLISHER_ADMIN_IDLE_MIN", raising=False)
    the_session = Session()
    monkeypatch.setattr(admins, "session_admin", the_session.session_admin)
    monkeypatch.setattr(AdminState, "_session_hash", lambda self: SESSION_HASH)
    monkeypatch.setattr(admin_state, "_figures", lambda: {"readers": [{"label": "Confirmed", "count": "1"}]})
    tabs.shared_gate.set(SimpleNamespace(token_open=lambda token: True))  # the tab stays open
    yield the_session
    tabs.shared_gate.set(None)


@pytest.mark.asyncio
async def test_an_open_page_refreshing_every_2_seconds_idles_out_after_30_minutes(session, monkeypatch):
    # The default of PUBLISHER_ADMIN_IDLE_MIN is docs/configuration.md's (tests/unit/test_configuration_docs.py).
    assert "ends after 30 minutes without an action" in " ".join((DOCS / "dashboard.md").read_text().split())
    from reflex.istate.data import RouterData

    state = AdminState(_reflex_internal_init=True)
    state.router = RouterData.from_router_data({"token": "tab-1", "ip": "10.0.0.1", "pathname": "/admin"})
    assert await AdminState.open.fn(state) is AdminState.watch  # opening the page: the admin did something
    assert state.signed_in and state.parts["readers"] and session.touches == [SIGNED_IN]

    real_sleep = asyncio.sleep
    refreshes = []

    async def two_seconds_pass(seconds: float) -> None:
        assert seconds == admin_state.REFRESH_MS / 1000 == 2
        refreshes.append(seconds)
        if len(refreshes) > 2 * 30 * 60:  # an hour of refreshes: the page would never idle out
            raise AssertionError("the open page's refresh kept its session open")
        session.now += timedelta(seconds=seconds)
        await real_sleep(0)

    async def itself(self):  # what ``async with self`` gives a background event: the state itself, here
        return self

    async def nothing(self, *exc_info):
        return None

    monkeypatch.setattr(AdminState, "__aenter__", itself)
    monkeypatch.setattr(AdminState, "__aexit__", nothing)
    monkeypatch.setattr(asyncio, "sleep", two_seconds_pass)
    await AdminState.watch.fn(state)

    assert session.touches == [SIGNED_IN]  # no refresh counted as the admin doing something
    assert session.ended_at == SIGNED_IN + timedelta(minutes=30)
    assert len(refreshes) == 30 * 60 // 2
    assert not state.signed_in and not any(getattr(state, name) for name in admin_state.SHOWN)
