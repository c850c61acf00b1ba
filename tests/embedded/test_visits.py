"""Visits, sources and buy presses counted by publisher-serve on the embedded gateway, from plain HTTP
requests, read back from the database. One worker flushes its whole tally at once: when the request
sent last shows, every one before it was judged. Each visitor has a Chrome version of its own."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest

from publisher import content, visits
from publisher.server import buy_beacon
from publisher.storage import visit_counts
from publisher.storage.tables import utc_now
from tests.support import ProductionServer, running_server, wait_until

# One flush of the only worker, and another in case the first had just begun, then a margin.
COUNTED_WITHIN_S = 2 * visits.FLUSH_INTERVAL_S + 10
KINDS = ("site", "page", "source", "campaign", "bot", "buy")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
_versions = itertools.count(100)


def desktop_chrome() -> str:
    """A desktop Chrome's user agent, of a version no other test used: a new visitor from this address."""
    return (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        f"Chrome/131.0.{next(_versions)}.0 Safari/537.36"
    )


Counts = dict[tuple[str, str], tuple[int, int]]


@pytest.fixture(scope="module")
def visits_site(built_site, tmp_path_factory) -> Iterator[tuple[ProductionServer, str]]:
    """publisher-serve keeping the list (so counting is on) on a database of its own, one worker."""
    workdir = tmp_path_factory.mktemp("visits")
    db_url = f"sqlite:///{workdir / 'visits.db'}"
    with running_server(workdir, {"PUBLISHER_GATEWAY_URL": "", "REFLEX_DB_URL": db_url}) as server:
        # The start's own requests (a test client's: a bot) flushed before any test counts its own.
        before = counts(db_url)
        httpx.get(server.base_url + "/about", headers={"User-Agent": GOOGLEBOT}, timeout=10).raise_for_status()
        added_since(db_url, before, ("bot", ""))
        yield server, db_url


def counts(db_url: str) -> Counts:
    """Views and visitors per (kind, key), yesterday and today (a test running over midnight)."""
    today = utc_now().date()
    found: Counts = {}
    for kind in KINDS:
        for row in visit_counts.top(kind, today - timedelta(days=1), today, limit=1000, db_url=db_url):
            found[(kind, row.key)] = (row.views, row.visitors)
    return found


def added_since(db_url: str, before: Counts, until_shown: tuple[str, str]) -> Counts:
    """What was counted since ``before``, once ``until_shown`` (a kind and key counted last) shows."""
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


def buy_buttons(html: str) -> list[tuple[str, str]]:
    """(slug, store host) of each buy button on a served page, as site.js reads them."""
    found = []
    for tag in re.findall(r"<a\b[^>]*\bdata-buy=[^>]*>", html):
        slug = re.search(r'data-buy="([^"]+)"', tag).group(1)  # type: ignore[union-attr]
        href = re.search(r'href="([^"]+)"', tag).group(1)  # type: ignore[union-attr]
        found.append((slug, urlsplit(href.replace("&amp;", "&")).hostname or ""))
    return found


def test_buy_presses_count_per_book_and_store(visits_site):
    server, db_url = visits_site
    before = counts(db_url)
    with httpx.Client(base_url=server.base_url, timeout=10, headers={"User-Agent": desktop_chrome()}) as http:
        home = buy_buttons(http.get("/").text)
        assert sorted(home) == sorted((book.slug, urlsplit(str(book.book_link)).hostname) for book in content.BOOKS)
        book = content.BOOKS[1]
        [on_book_page] = buy_buttons(http.get(book.page_path).text)
        assert on_book_page[0] == book.slug
        pressed = next(f"{slug} {store}" for slug, store in home if slug == content.BOOKS[0].slug)
        on_book = f"{on_book_page[0]} {on_book_page[1]}"
        other = content.BOOKS[2]
        genuine = f"{other.slug} {urlsplit(str(other.book_link)).hostname}"
        # On Home, on the book's page, again on another visit of it, and another book; as site.js sends it.
        for body in (pressed, on_book, on_book, genuine):
            sent = {"Origin": server.base_url, "Content-Type": "text/plain;charset=UTF-8"}
            answer = http.post(buy_beacon.PATH, content=body, headers=sent)
            assert answer.status_code == 204 and answer.content == b""
    assert added_since(db_url, before, ("buy", genuine)) == {
        ("site", ""): (2, 1),  # the two pages read, and no beacon among the page views
        ("page", "/"): (1, 1),
        ("page", book.page_path): (1, 1),
        ("source", "(direct)"): (2, 1),
        ("buy", pressed): (1, 1),
        ("buy", on_book): (2, 1),
        ("buy", genuine): (1, 1),
    }
