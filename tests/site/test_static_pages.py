"""Pages without a form never start the app (no app script, no websocket, a small first load), seen
from a phone's requests in Chromium; the form pages, the control, do."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, WebSocket, expect

from publisher.content import books
from tests.browser import assert_no_console_errors, axe_violations, open_page
from tests.support import BUILD_DIR

BOOK_PAGES = [f"/books/{book.slug}" for book in books.BOOKS]
STATIC_PAGES = ["/", "/about", "/no-such-page", *BOOK_PAGES]
FORM_PAGES = ["/subscribe", "/contact-us"]
# Document, CSS, scripts and images of a first load, compressed, headers included: a book's
# page shows its cover large, and may take up to 60 KB with the committed covers.
BYTE_BUDGET = {path: 60 * 1024 if path in BOOK_PAGES else 30 * 1024 for path in STATIC_PAGES}
APP_SCRIPT = re.compile(r"/assets/[^/]+\.m?js$")


class Traffic:
    def __init__(self, page: Page):
        self.requests: list[Request] = []
        self.websockets: list[WebSocket] = []
        page.on("requestfinished", lambda request: self.requests.append(request))  # a bound builtin is refused
        page.on("websocket", lambda socket: self.websockets.append(socket))

    def app_scripts(self) -> list[str]:
        return [r.url for r in self.requests if APP_SCRIPT.search(r.url.split("?")[0])]

    def transferred_bytes(self) -> int:
        return sum(size["responseBodySize"] + size["responseHeadersSize"] for size in map(Request.sizes, self.requests))


@pytest.mark.parametrize("path", [*STATIC_PAGES, *FORM_PAGES])
def test_only_a_form_page_starts_the_app_a_static_page_fits_its_byte_budget_and_axe_passes_at_a_phones_width(
    mobile_page: Page, base_url, path
):
    """A first visit with an empty cache; a form page, the control, until it has the visitor's state."""
    traffic = Traffic(mobile_page)
    open_page(mobile_page, base_url, path)
    starts_app = path in FORM_PAGES
    assert bool(traffic.app_scripts()) is starts_app
    channel = [f"{base_url.replace('http', 'ws')}/_event/"] if starts_app else []
    assert [socket.url.split("?")[0] for socket in traffic.websockets] == channel
    if not starts_app:
        assert mobile_page.locator("script[type=module], script[data-app-boot], link[rel*=modulepreload]").count() == 0
        total = traffic.transferred_bytes()
        assert total <= BYTE_BUDGET[path], f"{path}: {total} bytes on a first load, over {BYTE_BUDGET[path]}"
    assert_no_console_errors(mobile_page, allow_document_404=path == "/no-such-page")
    assert axe_violations(mobile_page) == []


def test_a_reader_searches_browses_and_goes_back_without_the_app(mobile_page: Page, base_url):
    """The book search, the drawer, links and the not-found page's Go Back, all static (their words and
    the visitor's year: tests/site/test_browser.py)."""
    traffic = Traffic(mobile_page)
    mobile_page.goto(base_url + "/?q=guinea%20PIG%20coloring", wait_until="networkidle")
    expect(mobile_page.locator("article:visible")).to_have_count(1)
    assert mobile_page.evaluate("document.activeElement === document.body")  # nothing focused was hidden
    assert axe_violations(mobile_page) == []  # with the search's status shown

    mobile_page.get_by_role("button", name="Menu").click()
    mobile_page.get_by_role("dialog", name="Menu").get_by_role("link", name="About").click()
    expect(mobile_page).to_have_url(base_url + "/about")

    mobile_page.goto(base_url + "/no-such-page", wait_until="networkidle")
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
