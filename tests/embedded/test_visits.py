"""Visits, sources and buy presses counted by publisher-serve on the embedded gateway (issue 42),
from plain HTTP requests, read back from the database as the dashboard and the operator's command
read them (storage/visit_counts.py).

Each wait is on a condition, within two flush intervals and a margin: one worker (no Redis)
flushes its whole tally at once, so when a request sent last shows, every request sent before it
has been judged. Every request sets a desktop browser's user agent: httpx, curl and headless
Chromium are bots (rules/visit_rules.is_bot), counted apart. Each visitor has a browser version
of its own, since all of them come from 127.0.0.1.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest

from publisher import content, visits
from publisher.rules import visit_rules
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


@pytest.fixture
def site(visits_site) -> Iterator[Site]:
    server, db_url = visits_site
    with httpx.Client(base_url=server.base_url, timeout=10, follow_redirects=False) as client:
        yield Site(server.base_url, db_url, client)


class Site:
    """The counting site: requests to it, and its counts as the database holds them."""

    def __init__(self, base_url: str, db_url: str, client: httpx.Client):
        self.base_url = base_url
        self.db_url = db_url
        self.client = client

    def counts(self) -> Counts:
        return counts(self.db_url)

    def get(self, path: str, user_agent: str, method: str = "GET", **headers: str) -> httpx.Response:
        return self.client.request(method, path, headers={"User-Agent": user_agent, **headers})

    def press(self, body: bytes | str, user_agent: str, **headers: str) -> httpx.Response:
        """The beacon as site.js sends it from one of the site's pages, unless ``headers`` say otherwise."""
        sent = {"Origin": self.base_url, "Content-Type": "text/plain;charset=UTF-8", "User-Agent": user_agent}
        answer = self.client.post(buy_beacon.PATH, content=body, headers={**sent, **headers})
        assert answer.status_code == 204 and answer.content == b""
        return answer

    def added_since(self, before: Counts, until_shown: tuple[str, str]) -> Counts:
        return added_since(self.db_url, before, until_shown)


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


def test_page_views_count_visitors_bots_sources_and_campaigns_and_nothing_else(site: Site):
    """Every kind of request in one flush; the views counted are exactly those below."""
    before = site.counts()
    reader, book, landing = desktop_chrome(), content.BOOKS[0].page_path, content.BOOKS[1].page_path
    for _ in range(10):
        assert site.get("/", reader).status_code == 200
    assert site.get("/", desktop_chrome()).status_code == 200  # the same address, another browser
    assert site.get(book, GOOGLEBOT).status_code == 200  # a crawler: a bot only
    # A tagged link typed in, a landing from Instagram, and a move between our own pages (no landing).
    tagged = "/about?utm_source=newsletter&utm_medium=email&utm_campaign=launch"
    assert site.get(tagged, desktop_chrome()).status_code == 200
    assert site.get(landing, desktop_chrome(), Referer="https://l.instagram.com/").status_code == 200
    assert site.get(landing, desktop_chrome(), Referer=site.base_url + "/").status_code == 200
    # What is not a page view.
    browser = desktop_chrome()
    not_views = [
        site.get("/subscribe/thanks", browser, method="HEAD"),
        site.get("/subscribe/thanks", browser, **{"Sec-Purpose": "prefetch"}),
        site.get("/subscribe/thanks", browser, **{"Sec-Purpose": "prefetch;prerender"}),
        site.get("/subscribe/thanks", browser, Purpose="prefetch"),
        site.get("/admin", browser),
        site.get("/site.js", browser),
        site.get("/releases.atom", browser),
        site.get("/_health", browser),
        site.get("/no-such-page", browser),
        site.get(buy_beacon.PATH, browser),
    ]
    assert [answer.status_code for answer in not_views][-2:] == [404, 204]
    assert all(answer.status_code < 400 for answer in not_views[:-2])
    # Last, one view that counts: when it shows, every request before it was judged.
    assert site.get("/contact-us/thanks", browser).status_code == 200
    assert site.added_since(before, ("page", "/contact-us/thanks")) == {
        ("site", ""): (15, 6),
        ("page", "/"): (11, 2),  # ten views by one browser are one visitor
        ("page", "/about"): (1, 1),
        ("page", landing): (2, 2),
        ("page", "/contact-us/thanks"): (1, 1),
        ("source", "(direct)"): (13, 4),  # no Referer: each view a landing
        ("source", "Instagram"): (1, 1),
        ("campaign", "newsletter / email / launch"): (1, 1),
        ("bot", ""): (1, 0),
    }


def test_buy_presses_count_per_book_and_store_and_forged_beacons_nowhere(site: Site):
    reader = desktop_chrome()
    before = site.counts()
    home = buy_buttons(site.get("/", reader).text)
    assert sorted(home) == sorted((book.slug, urlsplit(str(book.book_link)).hostname) for book in content.BOOKS)
    book = content.BOOKS[1]
    [on_book_page] = buy_buttons(site.get(book.page_path, reader).text)
    assert on_book_page[0] == book.slug
    pressed = next(f"{slug} {store}" for slug, store in home if slug == content.BOOKS[0].slug)
    on_book = f"{on_book_page[0]} {on_book_page[1]}"
    site.press(pressed, reader)  # on Home
    site.press(on_book, reader)  # on the book's page
    site.press(on_book, reader)  # again, on another visit of it

    other = content.BOOKS[2]
    genuine = f"{other.slug} {urlsplit(str(other.book_link)).hostname}"
    site.press("no-such-book www.amazon.com", reader)
    site.press(f"{other.slug} evil.example", reader)
    site.press(genuine, reader, Origin="https://evil.example")
    site.press(genuine, reader, Origin="null")
    site.press(genuine, reader, Origin="null", **{"Sec-Fetch-Site": "cross-site"})
    site.press(genuine + " " * visit_rules.BEACON_BODY_MAX, reader)
    site.press(genuine, GOOGLEBOT)
    site.press(genuine, reader, **{"Sec-Purpose": "prefetch"})
    answer = site.client.get(
        buy_beacon.PATH, params={"b": genuine}, headers={"Origin": site.base_url, "User-Agent": reader}
    )
    assert answer.status_code == 204
    # Last, one genuine press: when it shows, every beacon before it was judged.
    site.press(genuine, reader)
    assert site.added_since(before, ("buy", genuine)) == {
        ("site", ""): (2, 1),  # the two pages read, and no beacon among the page views
        ("page", "/"): (1, 1),
        ("page", book.page_path): (1, 1),
        ("source", "(direct)"): (2, 1),
        ("buy", pressed): (1, 1),
        ("buy", on_book): (2, 1),
        ("buy", genuine): (1, 1),
    }
