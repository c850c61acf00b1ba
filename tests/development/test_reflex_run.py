"""A bare `reflex run --frontend-port X --backend-port Y`, as a maintainer with the venv active types
it, on a database nobody migrated: it listens on loopback, its page reaches the backend on the
backend's own port, and a subscribe is stored. Every other journey runs on `make run`
(test_dev_server.py), whose Reflex this is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from publisher.storage import subscribers
from tests.browser import assert_no_console_errors, subscribe
from tests.development.conftest import DevServer
from tests.development.test_dev_server import listening_addresses
from tests.smtp import SmtpServer


@pytest.fixture(scope="module")
def reflex_run(tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer) -> Iterator[DevServer]:
    server = DevServer(tmp_path_factory.mktemp("reflex-run"), "reflex run", extra_env=smtp.mail_env())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_on_a_database_nobody_migrated_it_listens_on_loopback_and_stores_a_subscribe(page: Page, reflex_run: DevServer):
    assert listening_addresses(reflex_run.frontend_port) == {"127.0.0.1"}
    assert listening_addresses(reflex_run.backend_port) == {"127.0.0.1"}
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    subscribe(page, reflex_run.base_url, "Bare Reader", "bare.reader@example.com")
    expect(page.locator("#subscribe-success")).to_be_visible()
    app_sockets = [url for url in sockets if "/_event" in url]
    assert app_sockets and all(
        url.startswith(f"ws://127.0.0.1:{reflex_run.backend_port}/_event/") for url in app_sockets
    ), sockets
    stored = [(s.email, s.name) for s in subscribers.list_subscribers(db_url=reflex_run.db_url)]
    assert stored == [("bare.reader@example.com", "Bare Reader")]
    assert_no_console_errors(page)
