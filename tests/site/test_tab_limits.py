"""A flood of tabs from one address cannot exhaust the server (limits/tabs.py): simulated visitors, each
from a loopback address of its own (127.0.0.2, .3, ...), against small limits."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from redis import Redis

from tests.browser import SUBSCRIBE_BODY
from tests.support import ProductionServer, RecordingGateway, RedisServer, running_server, wait_until
from tests.visitor import CONTACT_STATE, TOKEN_ANSWER, Visitor, form_token_shown_ago, hydrated

PER_ADDRESS = 4
PER_WORKER = 8
InLoop = Callable[[Coroutine], Any]


@pytest.fixture
def in_loop() -> Iterator[InLoop]:
    """Runs coroutines on an event loop in a thread, so tabs stay open while a (sync) browser test runs."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield lambda coroutine: asyncio.run_coroutine_threadsafe(coroutine, loop).result(60)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def limits_env(workdir: Path, gateway: RecordingGateway, **extra: str) -> dict[str, str]:
    return {
        "PUBLISHER_GATEWAY_URL": gateway.url,
        "REFLEX_DEPLOY_URL": "https://books.example.com",
        "REFLEX_DB_URL": f"sqlite:///{workdir / 'tabs.db'}",
        "PUBLISHER_MAX_TABS_PER_ADDRESS": str(PER_ADDRESS),
        "PUBLISHER_NEW_TABS_PER_MINUTE": "1000",
        "PUBLISHER_MAX_TABS": str(PER_WORKER),
        **extra,
    }


@pytest.fixture(scope="module")
def one_worker(built_site, test_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("tab-limits")
    with running_server(workdir, limits_env(workdir, test_gateway)) as server:
        yield server


@pytest.fixture(scope="module")
def redis(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis-tabs"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def two_workers_on_redis(built_site, redis, test_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("tab-limits-redis")
    env = limits_env(workdir, test_gateway, REFLEX_REDIS_URL=redis.url, GRANIAN_WORKERS="2")
    with running_server(workdir, env) as server:
        yield server


def url(server: ProductionServer) -> str:
    return f"http://127.0.0.1:{server.port}"


async def open_tabs(server: ProductionServer, source: str, count: int, path: str = "/contact-us") -> list[Visitor]:
    tabs = [Visitor(url(server), path, source=source) for _ in range(count)]
    for tab in tabs:
        await tab.open_page(hydrated)
    return tabs


async def close_all(tabs: list[Visitor]) -> None:
    for tab in tabs:
        await tab.close()


def test_a_form_page_refused_by_the_workers_cap_posts_itself_and_connects_once_a_place_is_free(
    one_worker: ProductionServer, in_loop: InLoop, page: Page, gateway: RecordingGateway
):
    full = []
    for n in range(PER_WORKER // 2):
        full += in_loop(open_tabs(one_worker, f"127.0.0.{10 + n}", 2))
    page.goto(f"{url(one_worker)}/subscribe")
    form = page.locator("form[data-app-form]")
    expect(form).to_have_attribute("data-connected", "false")
    expect(page.get_by_role("button", name="Subscribe")).to_be_enabled()
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    page.get_by_role("button", name="Subscribe").click()  # the browser posts it; the server answers
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    assert gateway.bodies == [SUBSCRIBE_BODY]

    page.goto(f"{url(one_worker)}/contact-us")
    expect(page.locator("section[data-hydrated]")).to_have_attribute("data-hydrated", "false")
    in_loop(close_all(full[:1]))  # a place frees: the page, still trying, connects
    expect(page.locator("section[data-hydrated]")).to_have_attribute("data-hydrated", "true", timeout=20_000)
    expect(page.locator("form[data-app-form]")).to_have_attribute("data-connected", "true")
    in_loop(close_all(full[1:]))


def test_a_closed_tab_that_never_submitted_keeps_its_state_briefly_and_one_that_submitted_an_hour(
    two_workers_on_redis: ProductionServer, redis: RedisServer, gateway: RecordingGateway, in_loop: InLoop
):
    server = two_workers_on_redis
    idle, submitting = in_loop(open_tabs(server, "127.0.0.6", 2))

    async def submit(tab: Visitor) -> None:
        await tab.send(
            f"{CONTACT_STATE}.submit",
            {
                "form_data": {
                    "firstName": "Jo",
                    "lastName": "Reader",
                    "email": "jo@example.com",
                    "message": "A perfectly ordinary message.",
                    "answer": str(TOKEN_ANSWER),
                    "website": "",
                    "token": form_token_shown_ago(),  # a form shown past the fill time
                }
            },
        )
        await tab.wait_for(lambda v: v.var(CONTACT_STATE, "status") == "success", 30)

    in_loop(submit(submitting))
    in_loop(close_all([idle, submitting]))

    def ttls(tab: Visitor) -> list[int]:
        with Redis.from_url(redis.url) as client:
            return [client.ttl(key) for key in client.scan_iter(match=f"{tab.token}_*")]

    # The server shortens the idle tab's state once it sees the tab close.
    wait_until(lambda: ttls(idle) and all(0 < ttl <= 180 for ttl in ttls(idle)), 15, "the idle tab's short expiry")
    assert ttls(submitting) and all(ttl > 3000 for ttl in ttls(submitting)), ttls(submitting)
