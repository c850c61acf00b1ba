"""Faults: a hanging gateway, a backend restart, Redis lost: each visitor gets the failure message and
can retry, and everyone else keeps being served (a slow, failing, resetting or unreachable gateway:
tests/services/test_gateway.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
import socketio
from playwright.sync_api import Page, expect

from tests.browser import MIN_FILL_TIME_S, fill_contact, open_page, submit_button, wait_for_question
from tests.support import ProductionServer, RedisServer, running_server, wait_until
from tests.visitor import (
    CONTACT_STATE,
    SUBSCRIBE_STATE,
    Visitor,
    hydrated,
    run_async,
    subscribe_over_websocket,
)

HANG_GUARD_S = 60  # only a guard against a hang, however busy the machine: a toast is waited on, never timed
SUBSCRIBE_FAILED = "Failed to subscribe. Please try again."


@pytest.fixture(scope="module")
def server(built_site, test_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    """Waits on the gateway for a minute: a hang lasts until the test ends it."""
    workdir = tmp_path_factory.mktemp("faults")
    env = {
        "PUBLISHER_GATEWAY_URL": test_gateway.url,
        "PUBLISHER_GATEWAY_TIMEOUT_S": "60",
        "REFLEX_DB_URL": f"sqlite:///{workdir / 'faults.db'}",
    }
    with running_server(workdir, env) as prod:
        yield prod


def test_a_hanging_gateway_does_not_slow_anyone_else(server, gateway):
    """Thirty other visitors load their pages while twenty submits hang on the gateway, and the
    submits end only when the gateway answers: nobody waited for the hang to end."""
    gateway.delay_s = 60.0  # each submit waits until the gateway is let go (gateway.release)

    async def load():
        stuck = [Visitor(server.base_url, "/subscribe") for _ in range(20)]
        await asyncio.gather(*(v.open_page(hydrated) for v in stuck))
        submits = asyncio.gather(
            *(
                subscribe_over_websocket(server.base_url, f"stuck{i}@example.com", visitor=v, timeout_s=120)
                for i, v in enumerate(stuck)
            )
        )
        await asyncio.to_thread(wait_until, lambda: len(gateway.requests) == 20, 30, "20 submits on the gateway")

        async def other_visitor(path: str) -> None:
            visitor = Visitor(server.base_url, path)
            ready = (lambda v: bool(v.var(CONTACT_STATE, "question"))) if path == "/contact-us" else hydrated
            await visitor.open_page(ready, timeout_s=30)
            await visitor.close()

        await asyncio.gather(*(other_visitor(p) for p in ["/about", "/contact-us", "/"] * 10))
        hanging = [v.var(SUBSCRIBE_STATE, "status") for v in stuck]  # all served, and the hang goes on
        gateway.status = 503
        gateway.release.set()  # the gateway answers at last: with an error
        stuck_results = await submits
        for visitor in stuck:
            await visitor.close()
        return hanging, [v.var(SUBSCRIBE_STATE, "notice_text") for v, _ in stuck_results]

    hanging, stuck = run_async(load())
    assert hanging == ["submitting"] * 20
    assert stuck == [SUBSCRIBE_FAILED] * 20


HYDRATED_FRAME = '"is_hydrated_rx_state_":true'


def test_the_form_survives_a_backend_restart(page: Page, server: ProductionServer, gateway):
    """The module's server (the one the hang above waited on) is stopped under an open form and started
    again on its port, as a deployment restarts it; the page reconnects by itself and the message is sent."""
    # When the app has the visitor's state again: the frame that sets is_hydrated back to true
    # comes after the page's on_load delta (a fresh question), on every (re)connection.
    hydrated_at: list[float] = []
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda payload: hydrated_at.append(time.monotonic()) if HYDRATED_FRAME in str(payload) else None,
        ),
    )
    open_page(page, server.base_url, "/contact-us")
    wait_for_question(page)
    shown_at, token = time.monotonic(), page.locator("#contact-token").input_value()
    fill_contact(page, "")
    server.stop()
    server.start()  # on the port the page knows; nothing can hold it for the moment between the two
    restarted_at = time.monotonic()
    deadline = restarted_at + 30
    while not any(t > restarted_at for t in hydrated_at):
        assert time.monotonic() < deadline, "the page did not reconnect"
        page.wait_for_timeout(100)
    _, answer = wait_for_question(page)  # a new question if the old one was lost
    if page.locator("#contact-token").input_value() != token:
        shown_at = time.monotonic()  # a new question restarts the fill time; the old one's has run on
    page.fill("#contact-answer", str(answer))
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(page.locator("#contact-success")).to_be_visible()
    expect(page.locator("#site-error")).to_be_empty()
    unexpected = [e for e in page.console.errors if "WebSocket" not in e and "ERR_CONNECTION" not in e]  # type: ignore[attr-defined]
    assert unexpected == []
    assert len(gateway.requests) == 1


def test_redis_lost_during_operation_fails_clearly_and_recovers(built_site, test_gateway, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("redis-lost")
    redis = RedisServer(workdir)
    env = {
        "REFLEX_REDIS_URL": redis.url,
        "PUBLISHER_GATEWAY_URL": test_gateway.url,
        "REFLEX_DB_URL": f"sqlite:///{workdir / 'lost.db'}",
    }
    try:
        with running_server(workdir, env) as prod:

            async def before_during_after():
                visitor, _ = await subscribe_over_websocket(prod.base_url, "before@example.com", timeout_s=HANG_GUARD_S)
                before = visitor.var(SUBSCRIBE_STATE, "status")
                await visitor.close()

                open_tab = Visitor(prod.base_url, "/subscribe")  # a visitor with the form open
                await open_tab.open_page(hydrated)
                redis.stop()
                updates_before = len(open_tab.updates)
                await open_tab.send(
                    f"{SUBSCRIBE_STATE}.submit", {"form_data": {"name": "Jo Reader", "email": "during@example.com"}}
                )
                await open_tab.wait_for(lambda v: len(v.updates) > updates_before, timeout_s=15)
                seen = open_tab.updates[updates_before:]
                await open_tab.close()
                refused = Visitor(prod.base_url, "/subscribe")
                try:  # a new visitor cannot even connect; the page shows "Cannot connect to server"
                    await refused.connect(timeout_s=5)
                    connect_error = None
                except socketio.exceptions.ConnectionError as error:
                    connect_error = str(error)
                finally:
                    await refused.close()

                redis.start()
                after, _ = await subscribe_over_websocket(prod.base_url, "after@example.com", timeout_s=HANG_GUARD_S)
                recovered = after.var(SUBSCRIBE_STATE, "status")
                await after.close()
                return before, seen, connect_error, recovered

            before, seen, connect_error, recovered = run_async(before_during_after())
    finally:
        redis.stop()
    assert before == "success"
    error_values = [
        e["payload"].get("value") for u in seen for e in (u.get("events") or []) if e["name"] == "_set_value"
    ]
    assert error_values == ["Something went wrong on our side. Please try again in a moment."], seen
    # The connection itself was refused (socket.io's ConnectionError: at the handshake or at the
    # namespace, depending on where Redis was first needed), not some other failure.
    assert connect_error is not None
    assert recovered == "success"
    assert "during@example.com" not in [b.get("email") for b in test_gateway.bodies]
