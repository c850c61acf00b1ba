"""Counting as a visitor's browser sees it, in Chromium against publisher-serve counting on: no page
stores anything in the browser or reads it, and no request leaves but the page's own and one beacon
per book pressed; a press opens the store (answered by the test)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, expect

from publisher import visits
from publisher.content import books
from publisher.server import buy_beacon
from publisher.storage import visit_counts
from publisher.storage.tables import utc_now
from tests.browser import DESKTOP, ConsoleRecorder, subscribe
from tests.support import ProductionServer, running_server, wait_until

BOOK_PAGES = [book.page_path for book in books.BOOKS]
# Every public page that has no form; then the ones that start the app (the forms' and the list links').
PAGES_WITHOUT_A_FORM = ["/", "/about", *BOOK_PAGES, "/subscribe/thanks", "/contact-us/thanks", "/no-such-page"]
PAGES_WITH_A_FORM = ["/subscribe", "/contact-us", "/subscribe/confirm", "/unsubscribe"]
STORE_HOSTS = sorted({urlsplit(str(book.book_link)).hostname or "" for book in books.BOOKS})
STORE_PAGE = "<!doctype html><title>The store</title><p>The store's page for this book."


# One flush of the only worker, and another in case the first had just begun, then a margin.
COUNTED_WITHIN_S = 2 * visits.FLUSH_INTERVAL_S + 10
_versions = itertools.count(100)


def desktop_chrome() -> str:
    """A desktop Chrome's user agent, of a version no other test used: a new visitor from this address."""
    return (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        f"Chrome/131.0.{next(_versions)}.0 Safari/537.36"
    )


Counts = dict[tuple[str, str], tuple[int, int]]


def counts(db_url: str) -> Counts:
    """Buy presses and their people per key, yesterday and today (a test running over midnight)."""
    today = utc_now().date()
    rows = visit_counts.top("buy", today - timedelta(days=1), today, limit=1000, db_url=db_url)
    return {("buy", row.key): (row.views, row.visitors) for row in rows}


def added_since(db_url: str, before: Counts, until_shown: tuple[str, str]) -> Counts:
    """What was counted since ``before``, once ``until_shown`` (a key counted last) shows."""
    wait_until(
        lambda: counts(db_url).get(until_shown, (0, 0))[0] > before.get(until_shown, (0, 0))[0],
        COUNTED_WITHIN_S,
        f"{until_shown} counted",
    )
    return {
        key: (views - before.get(key, (0, 0))[0], visitors - before.get(key, (0, 0))[1])
        for key, (views, visitors) in counts(db_url).items()
        if (views, visitors) != before.get(key, (0, 0))
    }


@pytest.fixture(scope="module")
def counting_site(built_site, tmp_path_factory) -> Iterator[tuple[ProductionServer, str]]:
    """publisher-serve keeping the list (so counting is on) on a database of its own, one worker."""
    workdir = tmp_path_factory.mktemp("visits-in-browser")
    db_url = f"sqlite:///{workdir / 'visits.db'}"
    with running_server(workdir, {"PUBLISHER_GATEWAY_URL": "", "REFLEX_DB_URL": db_url}) as server:
        yield server, db_url


@pytest.fixture
def visitor(browser: Browser) -> Iterator[tuple[BrowserContext, list[str]]]:
    """A desktop browser of its own; the stores' pages answered by the test, and the URLs asked of them."""
    context = browser.new_context(viewport=DESKTOP, user_agent=desktop_chrome())
    context.set_default_timeout(15_000)
    context.add_init_script(STORAGE_WATCH)
    asked: list[str] = []

    def answer(route):
        asked.append(route.request.url)
        route.fulfill(status=200, content_type="text/html; charset=utf-8", body=STORE_PAGE)

    for host in STORE_HOSTS:
        context.route(f"https://{host}/**", answer)
        context.route(f"http://{host}/**", answer)
    yield context, asked
    context.close()


class NetworkLog:
    """Every request one tab made."""

    def __init__(self, page: Page):
        self.requests: list[Request] = []
        page.on("request", lambda request: self.requests.append(request))

    def beacons(self) -> list[Request]:
        return [request for request in self.requests if urlsplit(request.url).path == buy_beacon.PATH]

    def others_than(self, base_url: str) -> list[str]:
        own = urlsplit(base_url).netloc
        return [request.url for request in self.requests if urlsplit(request.url).netloc != own]


# Every write a page makes to its local or session storage, kept in the page's memory. (React
# Router reads its view transitions' entry as it starts, and writes it only after one: the site has none.)
STORAGE_WATCH = """
window.storageCalls = [];
for (const name of ["setItem", "removeItem", "clear"]) {
  const original = Storage.prototype[name];
  Storage.prototype[name] = function (...args) {
    window.storageCalls.push(`${name}(${args[0] ?? ""})`);
    return original.apply(this, args);
  };
}
"""
NOTHING_STORED = {"local": [], "session": [], "calls": []}


def storage_entries(page: Page) -> dict[str, list[str]]:
    """What the page's origin keeps in the browser's storage, and what the page asked of it."""
    return page.evaluate(
        "() => ({local: Object.keys(localStorage), session: Object.keys(sessionStorage), calls: window.storageCalls})"
    )


class AppChannel:
    """What the page's event channel received: the app has the page's state once a delta came."""

    def __init__(self, page: Page):
        self.page, self.received = page, []
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: self.received.append(frame)))

    def wait_for_the_state(self, path: str) -> None:
        deadline = time.monotonic() + 15  # a guard against a hang, far above what it waits for
        while not any('"delta"' in str(frame) for frame in self.received):
            assert time.monotonic() < deadline, f"{path}: the app never got its state"
            self.page.wait_for_timeout(50)  # lets Playwright hand over the frames meanwhile


def test_a_visit_of_every_public_page_stores_nothing_and_asks_nothing_but_its_own(visitor, counting_site):
    """The pages that start the app first: what a page stores as it is left (React Router's
    scroll positions) shows on the next one, which shares its session storage."""
    context, _ = visitor
    server, _ = counting_site
    page = context.new_page()
    log = NetworkLog(page)
    for path in [*PAGES_WITH_A_FORM, *PAGES_WITHOUT_A_FORM]:
        channel = AppChannel(page)
        page.goto(server.base_url + path, wait_until="networkidle")
        expect(page.locator("h1")).to_have_count(1)
        if path in PAGES_WITH_A_FORM:
            channel.wait_for_the_state(path)
        else:
            assert page.locator("form").count() == 0, path
        assert context.cookies() == [], path
        assert storage_entries(page) == NOTHING_STORED, path
    assert log.others_than(server.base_url) == []
    assert log.beacons() == []  # no press, no beacon


def test_a_form_sent_with_the_app_leaves_nothing_in_the_browser(visitor, counting_site):
    """The form's success, its toast, a reload of the page and leaving it: nothing stored."""
    context, _ = visitor
    server, _ = counting_site
    page = context.new_page()
    subscribe(page, server.base_url, "Stored Nothing", "stored.nothing@example.com")
    assert storage_entries(page) == NOTHING_STORED
    page.reload(wait_until="networkidle")
    expect(page.locator('[data-hydrated="true"]')).to_have_count(1)
    assert storage_entries(page) == NOTHING_STORED
    page.goto(server.base_url + "/about")
    assert storage_entries(page) == NOTHING_STORED
    assert context.cookies() == []


def press_buy(page: Page, slug: str) -> Page:
    """Press a book's buy button as a reader does; the store's page it opens in a new tab."""
    with page.context.expect_page() as opened:
        page.locator(f'a[data-buy="{slug}"]').click()
    store = opened.value
    store.wait_for_load_state()
    return store


def test_a_press_on_home_and_on_a_book_page_sends_one_beacon_each_counted_with_its_book_and_store(
    visitor, counting_site
):
    context, asked = visitor
    server, db_url = counting_site
    before = counts(db_url)
    home_book, page_book = books.BOOKS[0], books.BOOKS[1]

    home = context.new_page()
    home_log = NetworkLog(home)
    home_console = ConsoleRecorder(home)  # a beacon the page's policy refused would show here
    home.goto(server.base_url + "/", wait_until="networkidle")
    store = press_buy(home, home_book.slug)
    assert store.url == str(home_book.book_link)
    expect(store.locator("body")).to_contain_text("The store's page for this book.")
    wait_until(lambda: len(home_log.beacons()) == 1, 10, "the press's beacon")
    [beacon] = home_log.beacons()
    home_store = urlsplit(str(home_book.book_link)).hostname
    assert beacon.method == "POST" and beacon.post_data == f"{home_book.slug} {home_store}"
    # A second press of the same book on this page opens the store again and sends nothing.
    again = press_buy(home, home_book.slug)
    assert again.url == str(home_book.book_link)
    assert len(home_log.beacons()) == 1
    assert home_log.others_than(server.base_url) == []  # the store's pages opened in their own tabs

    book_page = context.new_page()
    book_log = NetworkLog(book_page)
    book_console = ConsoleRecorder(book_page)
    book_page.goto(server.base_url + page_book.page_path, wait_until="networkidle")
    store = press_buy(book_page, page_book.slug)
    assert store.url == str(page_book.book_link)
    wait_until(lambda: len(book_log.beacons()) == 1, 10, "the press's beacon")
    assert book_log.others_than(server.base_url) == []
    assert asked == [str(home_book.book_link)] * 2 + [str(page_book.book_link)]

    page_store = urlsplit(str(page_book.book_link)).hostname
    last = ("buy", f"{page_book.slug} {page_store}")
    added = added_since(db_url, before, last)
    assert added == {("buy", f"{home_book.slug} {home_store}"): (1, 1), last: (1, 1)}
    assert context.cookies() == []
    assert home_console.errors == [] and book_console.errors == []  # connect-src 'self' lets it go
