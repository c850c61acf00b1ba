"""One production build and server for the whole site suite (build output, HTTP, browser)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support import ProductionServer, free_port

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 900}
MOBILE = {"width": 375, "height": 740}


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProductionServer]:
    log_path = tmp_path_factory.mktemp("server") / "reflex.log"
    prod = ProductionServer(free_port(), log_path)
    prod.start()
    yield prod
    prod.stop()


@pytest.fixture(scope="session")
def base_url(server: ProductionServer) -> str:
    return server.base_url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


class ConsoleRecorder:
    """Collects console errors and page errors so a test can assert there were none."""

    def __init__(self, page: Page):
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))


def _new_page(browser: Browser, viewport: dict[str, int]) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport, base_url=None)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.console = ConsoleRecorder(page)  # type: ignore[attr-defined]
    yield page
    context.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from _new_page(browser, DESKTOP)


@pytest.fixture
def mobile_page(browser: Browser) -> Iterator[Page]:
    yield from _new_page(browser, MOBILE)
