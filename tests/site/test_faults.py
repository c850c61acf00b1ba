"""Faults: a slow, failing, resetting or unreachable gateway; a backend restart; Redis lost.

Each visitor must get the form's failure message within the (shortened) gateway
timeout, be able to retry, and everyone else must keep being served.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser import MIN_FILL_TIME_S, fill_contact, open_page, submit_button, wait_for_question
from tests.support import ProductionServer, RecordingGateway, RedisServer, free_port, running_server
from tests.visitor import (
    CONTACT_STATE,
    SUBSCRIBE_STATE,
    Visitor,
    hydrated,
    run_async,
    subscribe_over_websocket,
)

GATEWAY_TIMEOUT_S = 2.0
SUBSCRIBE_FAILED = "Failed to subscribe. Please try again."


@pytest.fixture(scope="module")
def fault_gateway() -> Iterator[RecordingGateway]:
    with RecordingGateway() as recording:
        yield recording


@pytest.fixture
def faulty(fault_gateway: RecordingGateway) -> Iterator[RecordingGateway]:
    with fault_gateway.for_one_test() as fresh:
        yield fresh


def gateway_env(url: str, workdir) -> dict[str, str]:
    return {
        "PUBLISHER_GATEWAY_URL": url,
        "PUBLISHER_GATEWAY_TIMEOUT_S": str(GATEWAY_TIMEOUT_S),
        "REFLEX_DB_URL": f"sqlite:///{workdir / 'faults.db'}",
    }


@pytest.fixture(scope="module")
def server(built_site, fault_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("faults")
    with running_server(workdir, gateway_env(fault_gateway.url, workdir)) as prod:
        yield prod


async def subscribe(base_url: str, email: str, visitor: Visitor | None = None) -> tuple[Visitor, float]:
    """Submit the signup form; returns the visitor and the seconds until its toast."""
    return await subscribe_over_websocket(base_url, email, visitor=visitor, timeout_s=GATEWAY_TIMEOUT_S + 10)


FAULTS = {
    "slow past the timeout": {"delay_s": 30.0},
    "500": {"status": 500},
    "502": {"status": 502},
    "503": {"status": 503},
    "connection reset": {"drop_connection": True},
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_gateway_fault_gives_the_failure_toast_in_time_and_a_retry_works(server, faulty, fault):
    for name, value in fault.items():
        setattr(faulty, name, value)

    async def journey():
        visitor, seconds = await subscribe(server.base_url, "jo@example.com")
        failed = (visitor.var(SUBSCRIBE_STATE, "status"), visitor.var(SUBSCRIBE_STATE, "notice_text"), seconds)
        faulty.release.set()
        faulty.reset()
        visitor, _ = await subscribe(server.base_url, "jo@example.com", visitor)
        retried = visitor.var(SUBSCRIBE_STATE, "status")
        await visitor.close()
        return failed, retried

    (status, text, seconds), retried = run_async(journey())
    assert (status, text) == ("editing", SUBSCRIBE_FAILED)
    assert seconds < GATEWAY_TIMEOUT_S + 1.5, seconds
    assert retried == "success"
    assert len(faulty.requests) == 1  # the failed call was not silently repeated


def test_an_unreachable_gateway_gives_the_failure_toast(built_site, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("unreachable")
    closed_port = free_port()  # nothing listens here
    with running_server(workdir, gateway_env(f"http://127.0.0.1:{closed_port}", workdir)) as prod:

        async def journey():
            visitor, seconds = await subscribe(prod.base_url, "jo@example.com")
            await visitor.close()
            return visitor.var(SUBSCRIBE_STATE, "notice_text"), seconds

        text, seconds = run_async(journey())
    assert text == SUBSCRIBE_FAILED
    assert seconds < GATEWAY_TIMEOUT_S + 1.5


def test_a_hanging_gateway_does_not_slow_anyone_else(server, faulty):
    faulty.delay_s = 30.0

    async def load():
        stuck = [Visitor(server.base_url, "/subscribe") for _ in range(20)]
        await asyncio.gather(*(v.open_page(hydrated) for v in stuck))
        submits = asyncio.gather(*(subscribe(server.base_url, f"stuck{i}@example.com", v) for i, v in enumerate(stuck)))
        await asyncio.sleep(0.3)  # every stuck submit is now waiting on the gateway

        async def other_visitor(path: str) -> float:
            visitor = Visitor(server.base_url, path)
            started = time.perf_counter()
            ready = (lambda v: bool(v.var(CONTACT_STATE, "question"))) if path == "/contact-us" else hydrated
            await visitor.open_page(ready)
            seconds = time.perf_counter() - started
            await visitor.close()
            return seconds

        others = await asyncio.gather(*(other_visitor(p) for p in ["/about", "/contact-us", "/"] * 10))
        stuck_results = await submits
        for visitor in stuck:
            await visitor.close()
        return others, [(v.var(SUBSCRIBE_STATE, "notice_text"), s) for v, s in stuck_results]

    others, stuck = run_async(load())
    assert max(others) < 1.5, sorted(others)[-5:]
    assert all(text == SUBSCRIBE_FAILED for text, _ in stuck)
    assert max(seconds for _, seconds in stuck) < GATEWAY_TIMEOUT_S + 2


HYDRATED_FRAME = '"is_hydrated_rx_state_":true'


def test_the_form_survives_a_backend_restart(page: Page, built_site, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("restart")
    port = free_port()
    env = {"REFLEX_DB_URL": f"sqlite:///{workdir / 'restart.db'}", "PUBLISHER_GATEWAY_URL": ""}
    first = ProductionServer(port, workdir / "first.log", extra_env=env)
    first.start()
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
    try:
        open_page(page, first.base_url, "/contact-us")
        wait_for_question(page)
        fill_contact(page, "")
    finally:
        first.stop()

    second = ProductionServer(port, workdir / "second.log", extra_env=env)
    second.start()
    restarted_at = time.monotonic()
    try:
        # The page reconnects by itself and is hydrated again by the new process.
        deadline = restarted_at + 30
        while not any(t > restarted_at for t in hydrated_at):
            assert time.monotonic() < deadline, "the page did not reconnect"
            page.wait_for_timeout(100)
        _, answer = wait_for_question(page)  # a new question if the old one was lost
        shown_at = time.monotonic()
        page.fill("#contact-answer", str(answer))
        time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
        submit_button(page).click()
        expect(page.locator("#contact-success")).to_be_visible()
        expect(page.locator("#site-error")).to_be_empty()
        unexpected = [e for e in page.console.errors if "WebSocket" not in e and "ERR_CONNECTION" not in e]  # type: ignore[attr-defined]
        assert unexpected == []
    finally:
        second.stop()


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
                visitor, _ = await subscribe(prod.base_url, "before@example.com")
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
                try:  # a new visitor cannot even connect; the page shows "Cannot connect to server"
                    refused = Visitor(prod.base_url, "/subscribe")
                    await refused.connect(timeout_s=5)
                    new_visitor_connected = True
                    await refused.close()
                except Exception:  # noqa: BLE001 - socketio's ConnectionError
                    new_visitor_connected = False

                redis.start()
                after, _ = await subscribe(prod.base_url, "after@example.com")
                recovered = after.var(SUBSCRIBE_STATE, "status")
                await after.close()
                return before, seen, new_visitor_connected, recovered

            before, seen, new_visitor_connected, recovered = run_async(before_during_after())
    finally:
        redis.stop()
    assert before == "success"
    error_values = [
        e["payload"].get("value") for u in seen for e in (u.get("events") or []) if e["name"] == "_set_value"
    ]
    assert error_values == ["Something went wrong on our side. Please try again in a moment."], seen
    assert new_visitor_connected is False
    assert recovered == "success"
    assert "during@example.com" not in [b.get("email") for b in test_gateway.bodies]


def test_redis_unavailable_at_start_up_is_a_clear_error(built_site):
    import subprocess

    from tests.support import PROJECT_ROOT, VENV_BIN, tool_env

    closed = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    result = subprocess.run(
        [str(VENV_BIN / "publisher-serve")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=tool_env(HOST="127.0.0.1", PORT=str(free_port()), REFLEX_REDIS_URL=closed),
    )
    assert result.returncode == 2
    assert "cannot reach Redis at REFLEX_REDIS_URL" in result.stderr
    assert "hunter2" not in result.stderr + result.stdout
