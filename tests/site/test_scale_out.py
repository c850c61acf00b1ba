"""Scale-out on Redis: visitor state shared by every worker and every host.

A real redis-server (Debian package) on a free 127.0.0.1 port; servers started
with the container's command and REFLEX_REDIS_URL, on the session's build.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import Page, expect

from tests.browser import MIN_FILL_TIME_S, fill_contact, open_page, submit_button, wait_for_question
from tests.support import ProductionServer, RecordingGateway, RedisServer, running_server, wait_until
from tests.visitor import ask_here_answer_there, run_async


@pytest.fixture(scope="module")
def redis(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def redis_env(redis: RedisServer, gateway: RecordingGateway, workdir: Path, workers: int) -> dict[str, str]:
    return {
        "REFLEX_REDIS_URL": redis.url,
        "GRANIAN_WORKERS": str(workers),
        "PUBLISHER_GATEWAY_URL": gateway.url,
        "REFLEX_DB_URL": f"sqlite:///{workdir / 'scale.db'}",
    }


@pytest.fixture(scope="module")
def two_workers(built_site, redis, test_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("two-workers")
    with running_server(workdir, redis_env(redis, test_gateway, workdir, workers=2)) as server:
        yield server


@pytest.fixture(scope="module")
def second_host(built_site, redis, test_gateway, tmp_path_factory) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("second-host")
    with running_server(workdir, redis_env(redis, test_gateway, workdir, workers=1)) as server:
        yield server


def test_the_server_runs_two_workers(two_workers: ProductionServer):
    # Ready means one worker answers; the second may still be starting on a busy machine.
    wait_until(lambda: "Started worker-2" in two_workers.log_path.read_text(), 30, "the second worker to start")
    log = two_workers.log_path.read_text()
    assert "Started worker-1" in log and "Started worker-2" in log
    assert len(psutil.Process(two_workers.process.pid).children(recursive=True)) >= 2


def test_forms_work_end_to_end_on_two_workers(page: Page, two_workers: ProductionServer, gateway: RecordingGateway):
    open_page(page, two_workers.base_url, "/subscribe")
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()
    expect(page.locator("#subscribe-success")).to_be_visible()

    open_page(page, two_workers.base_url, "/contact-us")
    _, answer = wait_for_question(page)
    shown_at = time.monotonic()
    fill_contact(page, answer)
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(page.locator("#contact-success")).to_be_visible()
    assert [r["path"] for r in gateway.requests] == ["/prod/subscribe", "/prod/send-email"]


def test_a_question_asked_on_one_host_is_checked_on_another(
    two_workers: ProductionServer, second_host: ProductionServer, gateway: RecordingGateway
):
    sender = {"firstName": "Jo", "lastName": "Reader", "email": "jo@example.com"}
    status, form_error = run_async(
        ask_here_answer_there(
            two_workers.base_url,
            second_host.base_url,
            sender,
            "Asked on one host, answered on another.",
            MIN_FILL_TIME_S,
        )
    )
    assert (status, form_error) == ("success", "")
    assert gateway.bodies[-1]["message"] == "Asked on one host, answered on another."
