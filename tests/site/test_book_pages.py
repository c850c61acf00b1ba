"""Every book's page in the browser, and the release feed (a book page's metadata: tests/unit/test_book_pages.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from publisher.content.books import BOOKS
from tests.browser import DESKTOP, MOBILE, assert_no_console_errors, axe_violations, new_page
from tests.support import TEST_SITE_URL

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(params=[MOBILE, DESKTOP], ids=["375px", "1280px"])
def viewer(browser: Browser, request) -> Page:
    yield from new_page(browser, request.param)


def test_homes_links_lead_to_each_books_page_showing_the_book_its_cover_and_breadcrumb(viewer: Page, base_url):
    """(What the page holds, its buy button and its links: tests/unit/test_book_pages.py.)"""
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
        expect(viewer.get_by_role("navigation", name="Breadcrumb")).to_have_text(
            re.compile(f"Home.*{re.escape(book.title)}")
        )
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
