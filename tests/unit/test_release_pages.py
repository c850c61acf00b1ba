"""A forthcoming book before and at its moment: card, page, JSON-LD, feed, and the file the server picks."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import reflex as rx
from pydantic import ValidationError
from reflex.utils.precompressed_staticfiles import PrecompressedStaticFiles

from publisher.build import plugins
from publisher.content import books
from publisher.content.models import Book, Release
from publisher.rules import release_rules, visit_rules
from publisher.server import buy_beacon, middleware
from publisher.web import feed, page_kinds, seo
from publisher.web.components import book_cards
from publisher.web.pages import PAGES, book, home
from publisher.web.pages.registry import PageRegistry
from tests.unit.test_book_pages import ATOM, CARDS, COVER_SVG, SITE, full_book, meta, rendered

LONDON = Release(at=datetime(2027, 3, 28, 9, 0), zone="Europe/London")  # the day the clocks go forward
KIRITIMATI = Release(at=datetime(2027, 1, 1, 0, 0), zone="Pacific/Kiritimati")  # UTC+14
PREORDER = "https://preorder.example.org/coming"
pytestmark = pytest.mark.usefixtures("site")


def coming(release: Release = LONDON, **extra) -> Book:
    given = {"slug": "coming", "cover_image": COVER_SVG, "publication_date": release.at.date()}
    return full_book(release=release, **{**given, **extra})


@pytest.mark.parametrize(
    ("at", "zone", "refusal"),
    [
        (datetime(2027, 3, 28, 1, 30), "Europe/London", "does not exist in Europe/London"),
        (datetime(2027, 10, 31, 1, 30), "Europe/London", "happens twice in Europe/London"),
        (datetime(2027, 3, 28, 9, 0), "Europe/Atlantis", "'Europe/Atlantis' is not a time zone name"),
        (datetime(2027, 3, 28, 9, 0, tzinfo=UTC), "Europe/London", "without an offset"),
    ],
)
def test_a_release_moment_that_is_not_one_real_moment_is_refused_naming_why(at, zone, refusal):
    with pytest.raises(ValidationError, match=refusal):
        Release(at=at, zone=zone)


def test_a_preorder_link_needs_a_release_and_the_publication_date_is_the_release_day():
    with pytest.raises(ValidationError, match="a pre-order link needs a release moment"):
        full_book(preorder_link=PREORDER)
    with pytest.raises(ValidationError, match="the publication date is not the release moment's date"):
        full_book(release=LONDON)  # published 2026-03-12


def test_the_moment_across_daylight_saving_and_far_from_utc_in_the_books_own_words():
    assert LONDON.utc == datetime(2027, 3, 28, 8, 0, tzinfo=UTC)
    assert KIRITIMATI.utc == datetime(2026, 12, 31, 10, 0, tzinfo=UTC)
    assert release_rules.coming_words(coming()) == "Coming 28 March 2027 at 09:00 BST (Europe/London)"
    assert release_rules.coming_words(coming(KIRITIMATI)) == "Coming 1 January 2027 at 00:00 +14 (Pacific/Kiritimati)"
    before, at = LONDON.utc - timedelta(seconds=1), LONDON.utc
    assert not release_rules.is_out(coming(), before) and release_rules.is_out(coming(), at)
    assert [b.slug for b in release_rules.forthcoming((coming(), full_book()), before)] == ["coming"]


def test_before_its_moment_the_card_and_page_say_when_it_comes_without_a_buy_button():
    item, before = coming(), page_kinds.just_before(LONDON.utc)
    card = rendered(book_cards.book_card(item, 0, before))
    page = rendered(rx.fragment(*book_cards.book_page(item, CARDS, before)))
    for shown in (card, page):
        assert "Coming 28 March 2027 at 09:00 BST (Europe/London)" in shown
        assert books.GET_YOUR_COPY not in shown and "data-buy" not in shown
    assert 'id:\\"waitlist-form\\"' in page and 'action:\\"/books/coming\\"' in page  # the waitlist's form
    assert "waitlist-form" not in card  # on its page only
    out = rendered(book_cards.book_card(item, 0, LONDON.utc))
    assert books.GET_YOUR_COPY in out and "Coming" not in out


def test_a_preorder_link_is_its_button_counted_as_a_buy_press(monkeypatch):
    item = coming(preorder_link=PREORDER)
    shown = rendered(book_cards.book_card(item, 0, page_kinds.just_before(LONDON.utc)))
    assert f'\\"{books.PREORDER}\\"' in shown and f'href:\\"{PREORDER}\\"' in shown
    assert shown.count('\\"data-buy\\":\\"coming\\"') == 1
    monkeypatch.setattr(books, "BOOKS", (*books.BOOKS, item))
    for host in ("preorder.example.org", "www.example.com"):  # either link's press counts
        assert visit_rules.buy_target(f"coming {host}".encode(), buy_beacon._books()) == ("coming", host)


def test_the_structured_data_is_a_preorder_from_the_moment_in_utc_then_the_store():
    offer = seo.book(coming(), CARDS, page_kinds.just_before(LONDON.utc))["offers"]
    assert offer == {
        "@type": "Offer",
        "availability": "https://schema.org/PreOrder",
        "availabilityStarts": "2027-03-28T08:00:00Z",
        "url": f"{SITE}/books/coming",
    }
    assert seo.book(coming(preorder_link=PREORDER), CARDS, LONDON.utc - timedelta(days=9))["offers"]["url"] == PREORDER
    assert seo.book(coming(), CARDS)["offers"] == {"@type": "Offer", "url": "https://www.example.com/book"}


def test_the_variant_is_the_canonical_pages_state_before_out_of_the_sitemap_and_static():
    registry = PageRegistry()
    canonical = book.declare(coming(), registry)
    variant = book.declare(coming(), registry, page_kinds.just_before(LONDON.utc))
    assert variant.route == "/_before/coming/books/coming" and not variant.in_sitemap
    assert registry.slashless_routes() == {"/books/coming"}
    assert meta(variant, "og:url") == meta(canonical, "og:url") == [f"{SITE}/books/coming"]
    crumbs = seo.structured_data(variant)["@graph"][0]["itemListElement"]
    assert crumbs[1]["item"] == f"{SITE}/books/coming"
    assert page_kinds.app_reasons(canonical()) == page_kinds.app_reasons(variant()) == ()
    switch = rendered(canonical())  # in `reflex run`, the page switches at the moment
    assert f"at:{int(LONDON.utc.timestamp() * 1000)}" in switch and "ReleaseSwitch" in switch
    home_variant = home.declare(page_kinds.just_before(LONDON.utc), "/_before/coming", PageRegistry())
    assert home_variant.nav_position is None and not home_variant.in_sitemap
    assert not any(page.route.startswith("/_before") for page in PAGES.pages())  # the real books are all out


def test_the_feed_lists_a_book_from_its_moment_dated_by_it(monkeypatch):
    monkeypatch.setattr(books, "BOOKS", (*books.BOOKS, coming()))

    def entries(now: datetime = page_kinds.ALL_OUT) -> dict[str, str]:
        root = ET.fromstring(feed.release_feed(SITE, now))
        return {e.find(f"{ATOM}id").text: e.findtext(f"{ATOM}published") for e in root.findall(f"{ATOM}entry")}

    assert f"{SITE}/books/coming" not in entries(page_kinds.just_before(LONDON.utc))
    assert entries()[f"{SITE}/books/coming"] == "2027-03-28T08:00:00+00:00"


def built(tmp_path, item: Book) -> PrecompressedStaticFiles:
    """The build's files: the canonical ones (every book out) and the variants before ``item``'s moment."""
    canonical = {"index.html": "home", f"books/{item.slug}/index.html": "page", "releases.atom": "feed"}
    files = {path: f"{what}: out" for path, what in canonical.items()}
    files |= {f"_before/{item.slug}/{path}": f"{what}: coming" for path, what in canonical.items()}
    files |= {
        f"books/{item.slug}/index.html.br": "page: out, its Brotli twin",
        "releases.atom.gz": "feed: out, its gzip twin",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return PrecompressedStaticFiles(directory=tmp_path, html=True)


async def served(tmp_path, item: Book, now: datetime, paths: list[str], method: str = "GET"):
    registry = PageRegistry()
    book.declare(item, registry)
    table = middleware.route_table(built(tmp_path, item), registry, clock=lambda: now, books=(item,))
    app = middleware.ResponseHeaders(table, (), {"/": False, item.page_path: False})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=SITE) as http:
        return [await http.request(method, path) for path in paths]


PATHS = ["/", "/books/coming", "/books/coming/", "/releases.atom"]
# A variant's own paths, and a canonical file's compressed twin asked for by name: never served.
VARIANT_PATHS = ["/_before/coming/books/coming", "/_before/coming/", "/_before/coming/releases.atom", "/_BEFORE/coming"]
TWIN_PATHS = ["/books/coming/index.html.br", "/releases.atom.gz"]


@pytest.mark.asyncio
@pytest.mark.parametrize("release", [LONDON, KIRITIMATI], ids=["across-dst", "utc+14"])
async def test_the_server_serves_the_coming_files_until_the_moment_and_the_built_ones_from_it(tmp_path, release):
    item = coming(release)
    before = await served(tmp_path, item, release.utc - timedelta(seconds=1), PATHS + VARIANT_PATHS + TWIN_PATHS)
    assert [r.text for r in before[:4]] == ["home: coming", "page: coming", "page: coming", "feed: coming"]
    assert [r.status_code for r in before[4:]] == [404] * 6  # a variant's own path, a twin by name: not found
    at = await served(tmp_path, item, release.utc, PATHS)
    assert [r.text for r in at] == ["home: out", "page: out", "page: out", "feed: out"]
    heads = await served(tmp_path, item, release.utc - timedelta(seconds=1), PATHS[:2], "HEAD")
    assert [r.status_code for r in heads] == [200, 200]
    assert heads[1].headers["content-length"] == str(len("page: coming"))


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("left", "kept"), [(timedelta(hours=1), 300), (timedelta(seconds=120.5), 120), (timedelta(seconds=1), 1)]
)
async def test_a_cdn_keeps_a_page_no_longer_than_until_its_flip(tmp_path, left, kept):
    page, home_page = await served(tmp_path, coming(), LONDON.utc - left, ["/books/coming", "/"])
    assert page.headers["cache-control"] == home_page.headers["cache-control"] == f"public, max-age=0, s-maxage={kept}"
    (after,) = await served(tmp_path, coming(), LONDON.utc, ["/books/coming"])
    assert after.headers["cache-control"] == middleware.STATIC_PAGE_CACHE


def test_the_build_refuses_a_variant_that_would_start_the_app(tmp_path):
    """React Router would hydrate the canonical route, the one in the address bar, over the variant."""
    (tmp_path / "_before" / "coming").mkdir(parents=True)
    (tmp_path / "_before" / "coming" / "index.html").write_text("<html><body>coming</body></html>")
    kinds = {"/_before/coming": page_kinds.PageKind("/_before/coming", ("<button> handles on_click",))}
    with pytest.raises(RuntimeError, match="/_before/coming is a release variant, so it must not start the app"):
        plugins.finish_pages(tmp_path, kinds)
