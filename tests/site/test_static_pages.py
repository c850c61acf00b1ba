"""Pages without a form never start the app (no app script, no websocket, a small first load), seen
from a phone's requests in Chromium; the form pages, the control, do."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Page, Request, WebSocket, expect

from publisher import content
from tests.browser import assert_no_console_errors, open_page
from tests.support import BUILD_DIR

BOOK_PAGES = [f"/books/{book.slug}" for book in content.BOOKS]
STATIC_PAGES = ["/", "/about", "/no-such-page", *BOOK_PAGES]
FORM_PAGES = ["/subscribe", "/contact-us"]
# Document, CSS, scripts and images of a first load, compressed, headers included: a book's
# page shows its cover large, and may take up to 60 KB with the committed covers.
BYTE_BUDGET = {path: 60 * 1024 if path in BOOK_PAGES else 30 * 1024 for path in STATIC_PAGES}
APP_SCRIPT = re.compile(r"/assets/[^/]+\.m?js$")


@dataclass
class Traffic:
    requests: list[Request] = field(default_factory=list)
    websockets: list[WebSocket] = field(default_factory=list)

    def app_scripts(self) -> list[str]:
        return [r.url for r in self.requests if APP_SCRIPT.search(r.url.split("?")[0])]

    def transferred_bytes(self) -> int:
        total = 0
        for request in self.requests:
            sizes = request.sizes()
            total += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        return total


def watch(page: Page) -> Traffic:
    traffic = Traffic()
    page.on("requestfinished", lambda request: traffic.requests.append(request))
    page.on("websocket", lambda socket: traffic.websockets.append(socket))
    return traffic


def first_load(page: Page, base_url: str, path: str) -> Traffic:
    """A first visit with an empty cache, until the network has been idle (site.js has run)."""
    traffic = watch(page)
    page.goto(base_url + path, wait_until="networkidle")
    expect(page.locator("h1")).to_have_count(1)
    return traffic


@pytest.mark.parametrize("path", STATIC_PAGES)
def test_a_static_page_requests_no_app_script_opens_no_websocket_and_fits_the_budget(mobile_page: Page, base_url, path):
    traffic = first_load(mobile_page, base_url, path)
    assert traffic.app_scripts() == []
    assert traffic.websockets == []
    assert mobile_page.locator("script[type=module], script[data-app-boot], link[rel*=modulepreload]").count() == 0
    total = traffic.transferred_bytes()
    assert total <= BYTE_BUDGET[path], f"{path}: {total} bytes on a first load, over {BYTE_BUDGET[path]}"
    assert_no_console_errors(mobile_page, allow_document_404=path == "/no-such-page")


@pytest.mark.parametrize("path", FORM_PAGES)
def test_a_form_page_starts_the_app_and_connects(mobile_page: Page, base_url, path):
    traffic = watch(mobile_page)
    open_page(mobile_page, base_url, path)  # waits until the form has the visitor's state
    assert traffic.app_scripts() != []
    assert [socket.url.split("?")[0] for socket in traffic.websockets] == [f"{base_url.replace('http', 'ws')}/_event/"]
    expect(mobile_page.locator("form button[type=submit]")).to_be_enabled()


def test_a_reader_searches_browses_and_goes_back_without_the_app(mobile_page: Page, base_url):
    """The book search, the drawer, links, the not-found page's Go Back and the year, all static."""
    traffic = watch(mobile_page)
    mobile_page.goto(base_url + "/?q=guinea%20PIG%20coloring", wait_until="networkidle")
    status = mobile_page.get_by_role("status")
    expect(status).to_have_text(
        "Showing 1 of 3 books matching “guinea PIG coloring”.Show all books", use_inner_text=False
    )
    expect(mobile_page.locator("article:visible")).to_have_count(1)
    assert mobile_page.evaluate("document.activeElement === document.body")  # nothing focused was hidden

    mobile_page.get_by_role("button", name="Menu").click()
    menu = mobile_page.get_by_role("dialog", name="Menu")
    expect(menu).to_be_visible()
    menu.get_by_role("link", name="About").click()
    expect(mobile_page).to_have_url(base_url + "/about")
    expect(mobile_page.locator("[aria-current=page]").first).to_have_text("About")

    mobile_page.goto(base_url + "/no-such-page", wait_until="networkidle")
    expect(mobile_page.locator("footer [data-current-year]")).to_have_text(
        str(mobile_page.evaluate("new Date().getFullYear()"))
    )
    mobile_page.get_by_role("button", name="Go Back").click()
    expect(mobile_page).to_have_url(base_url + "/about")

    assert traffic.app_scripts() == []
    assert traffic.websockets == []


# Brotli bytes as served (the build's .br files) before issue 42 counted buy presses: site.js and
# each public page's document, measured 2026-11-27 on main at 52541c0 in this suite's build.
BROTLI_BYTES_BEFORE_COUNTING = {
    "site.js": 1_931,
    "index.html": 3_968,
    "about.html": 3_268,
    "books/coloring-book.html": 2_938,
    "books/guinea-pig-or-hamster.html": 3_005,
    "books/word-search-book.html": 2_906,
    "subscribe.html": 3_907,
    "contact-us.html": 4_089,
    "subscribe/thanks.html": 2_414,
    "contact-us/thanks.html": 2_365,
    "subscribe/confirm.html": 3_308,
    "unsubscribe.html": 3_280,
    "404.html": 2_275,
}
# What counting may add to a public page and its site.js together (issue 42).
COUNTING_BUDGET_BYTES = 300


def brotli_bytes(name: str) -> int:
    return (BUILD_DIR / f"{name}.br").stat().st_size


@pytest.mark.parametrize("page", [name for name in BROTLI_BYTES_BEFORE_COUNTING if name != "site.js"])
def test_counting_adds_at_most_300_brotli_bytes_to_a_page_and_its_site_js(built_site, page):
    before = BROTLI_BYTES_BEFORE_COUNTING["site.js"] + BROTLI_BYTES_BEFORE_COUNTING[page]
    now = brotli_bytes("site.js") + brotli_bytes(page)
    assert now - before <= COUNTING_BUDGET_BYTES, f"{page} with site.js: {now} bytes, {now - before} over {before}"
