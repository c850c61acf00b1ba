"""Every book's page in the browser, and the release feed (a book page's metadata: tests/unit/test_book_pages.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import httpx
import pytest
from bs4 import BeautifulSoup
from playwright.sync_api import Browser, Page, expect

from publisher import content
from tests.browser import DESKTOP, MOBILE, assert_no_console_errors, axe_violations, expect_new_tab_link, new_page
from tests.support import BUILD_DIR, TEST_SITE_URL

BOOKS = content.BOOKS
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(params=[MOBILE, DESKTOP], ids=["375px", "1280px"])
def viewer(browser: Browser, request) -> Page:
    yield from new_page(browser, request.param)


def test_homes_links_lead_to_each_books_page_showing_the_book_its_authors_and_the_buy_button(viewer: Page, base_url):
    authors = {author.name: author for author in content.AUTHORS}
    for book in BOOKS:
        viewer.goto(base_url + "/", wait_until="networkidle")
        card = viewer.locator(f"article#{book.slug}")
        expect(card.locator("a[tabindex='-1']")).to_have_attribute("href", f"/books/{book.slug}")  # the cover
        card.get_by_role("heading", level=3).get_by_role("link", name=book.title).click()
        expect(viewer).to_have_url(f"{base_url}/books/{book.slug}")
        viewer.wait_for_load_state("networkidle")
        expect(viewer.locator("h1")).to_have_count(1)
        expect(viewer.locator("h1")).to_have_text(book.title)
        main = viewer.locator("main")
        for text in (book.subtitle, book.caption, book.description):
            expect(main).to_contain_text(text)
        cover = main.get_by_role("img", name=book.image_alt)
        expect(cover).to_be_visible()
        assert cover.evaluate("image => image.complete && image.naturalWidth > 0")
        for name in book.author_names:
            expect(main.get_by_role("link", name=name, exact=True)).to_have_attribute(
                "href", f"/about#{authors[name].slug}"
            )
        expect_new_tab_link(main.get_by_role("link", name=re.compile("^Get Your Copy Today")), str(book.book_link))
        details = main.get_by_role("region", name="Book details")
        expect(details.locator("dt")).to_have_text(["Ages", "Language"] if book.age_range else ["Language"])
        expect(viewer.get_by_role("navigation", name="Breadcrumb")).to_have_text(
            re.compile(f"Home.*{re.escape(book.title)}")
        )
        if viewer.viewport_size["width"] > 768:  # the header's navigation: Home is where a book belongs
            nav = viewer.get_by_role("navigation", name="Main", exact=True)
            expect(nav.locator("a[aria-current=page]")).to_have_text(["Home"])
        assert axe_violations(viewer) == []
        assert_no_console_errors(viewer)

    viewer.goto(f"{base_url}/books/{BOOKS[1].slug}", wait_until="networkidle")  # an author's link
    viewer.locator("main").get_by_role("link", name="Oliver Brandt", exact=True).click()
    expect(viewer).to_have_url(f"{base_url}/about#oliver-brandt")
    expect(viewer.locator("article#oliver-brandt h2")).to_be_in_viewport()


def test_the_release_feed_is_served_as_atom_and_parses(base_url):
    answer = httpx.get(f"{base_url}/releases.atom", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/atom+xml")
    root = ET.fromstring(answer.content)
    entries = root.findall(f"{ATOM}entry")
    assert [entry.find(f"{ATOM}id").text for entry in entries] == [
        f"{TEST_SITE_URL}/books/{book.slug}" for book in BOOKS
    ]
    for entry in entries:  # each entry's page and cover are on this site
        for link in entry.findall(f"{ATOM}link"):
            path = link.get("href").removeprefix(TEST_SITE_URL)
            assert httpx.get(base_url + path, timeout=10).status_code == 200, path


def test_every_page_announces_the_feed(built_site):
    pages = sorted(BUILD_DIR.rglob("*.html"))
    found = {page.relative_to(BUILD_DIR).as_posix() for page in pages}
    assert {"index.html", "about/index.html", "404.html"} | {f"books/{b.slug}/index.html" for b in BOOKS} <= found
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        [link] = soup.head.find_all("link", rel="alternate")
        assert (link["type"], link["href"]) == ("application/atom+xml", "/releases.atom"), page
