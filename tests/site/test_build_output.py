"""The prerendered HTML carries every page's metadata before any JavaScript runs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest
from bs4 import BeautifulSoup

from publisher import content
from publisher.web.pages import registry
from tests.support import BUILD_DIR, TEST_SITE_URL

BRAND = "Animals We Confuse"
SHARE_IMAGE_URL = f"{TEST_SITE_URL}/images/og-default.png"


@dataclass(frozen=True)
class Expected:
    file: str
    route: str | None
    title: str
    graph_types: tuple[str, ...]
    robots: str = "index, follow"


PAGES = (
    Expected(
        "index.html",
        "/",
        "Animals We Confuse: Books About Look-Alike Animals",
        ("Organization", "WebSite", "Book", "Book", "Book"),
    ),
    Expected("about/index.html", "/about", f"About the Authors | {BRAND}", ("BreadcrumbList", "Person", "Person")),
    Expected("subscribe/index.html", "/subscribe", f"Subscribe to New Releases | {BRAND}", ("BreadcrumbList",)),
    Expected("contact-us/index.html", "/contact-us", f"Contact Us | {BRAND}", ("BreadcrumbList",)),
    Expected("404.html", None, f"Page Not Found | {BRAND}", (), robots="noindex"),
    Expected(
        "subscribe/confirm/index.html",
        "/subscribe/confirm",
        f"Confirm Your Subscription | {BRAND}",
        ("BreadcrumbList",),
        robots="noindex",
    ),
    Expected("unsubscribe/index.html", "/unsubscribe", f"Unsubscribe | {BRAND}", ("BreadcrumbList",), robots="noindex"),
)


@pytest.fixture(scope="module")
def built(server) -> None:
    assert (BUILD_DIR / "index.html").is_file()


def soup_of(page: Expected) -> BeautifulSoup:
    return BeautifulSoup((BUILD_DIR / page.file).read_text(encoding="utf-8"), "html.parser")


def meta(soup: BeautifulSoup, **attrs: str) -> str:
    tags = soup.head.find_all("meta", attrs=attrs)
    assert len(tags) == 1, f"expected exactly one meta {attrs}, found {len(tags)}"
    return tags[0]["content"]


def json_ld_graph(soup: BeautifulSoup) -> list[dict]:
    scripts = soup.find_all("script", attrs={"type": "application/ld+json"})
    assert len(scripts) == 1
    data = json.loads(scripts[0].string)
    assert data["@context"] == "https://schema.org"
    return data["@graph"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.file)
def test_each_pages_metadata_is_in_its_prerendered_html(built, page: Expected):
    soup = soup_of(page)
    assert soup.html["lang"] == "en"
    assert [t.string for t in soup.find_all("title")] == [page.title]
    assert len(meta(soup, name="description")) > 40
    assert meta(soup, name="keywords").strip()
    assert meta(soup, name="robots") == page.robots
    canonical = [TEST_SITE_URL + page.route] if page.route else []
    assert [link["href"] for link in soup.find_all("link", rel="canonical")] == canonical
    assert [tag["content"] for tag in soup.find_all("meta", property="og:url")] == canonical
    assert meta(soup, property="og:title") == meta(soup, name="twitter:title") == page.title
    assert meta(soup, property="og:description") == meta(soup, name="description")
    assert meta(soup, property="og:image") == meta(soup, name="twitter:image") == SHARE_IMAGE_URL
    assert meta(soup, property="og:image:alt") == content.SHARE_IMAGE_ALT
    assert meta(soup, name="twitter:card") == "summary_large_image"
    assert tuple(item["@type"] for item in json_ld_graph(soup)) == page.graph_types


def test_content_is_prerendered(built):
    home = soup_of(PAGES[0]).get_text(" ")
    for book in content.BOOKS:
        assert book.title in home and book.description in home
    about = soup_of(PAGES[1]).get_text(" ")
    for author in content.AUTHORS:
        assert author.name in about and author.author_bio[-1] in about
    not_found = soup_of(PAGES[4]).get_text(" ")
    assert "Oops! Page Not Found" in not_found and "404" in not_found


def test_images_declare_their_size(built):
    for page in PAGES:
        for img in soup_of(page).find_all("img"):
            assert img.get("width") and img.get("height"), img
            assert img.has_attr("alt"), img


def test_sitemap_lists_every_page_with_absolute_urls_and_robots_txt_points_to_it(built):
    tree = ET.parse(BUILD_DIR / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [loc.text for loc in tree.getroot().findall("s:url/s:loc", ns)]
    assert sorted(locs) == sorted(TEST_SITE_URL + page.route for page in registry.PAGES.pages() if page.in_sitemap)
    books = [f"{TEST_SITE_URL}/books/{book.slug}" for book in content.BOOKS]
    assert sorted(locs) == sorted([TEST_SITE_URL + item.route for item in registry.PAGES.navigation()] + books)
    assert f"Sitemap: {TEST_SITE_URL}/sitemap.xml" in (BUILD_DIR / "robots.txt").read_text().splitlines()


def test_no_radix_themes_stylesheet(built):
    css_files = list((BUILD_DIR / "assets").glob("*.css"))
    assert css_files, "no stylesheet built"
    total = sum(f.stat().st_size for f in css_files)
    assert total < 40_000, f"global CSS is {total} bytes: did a Radix component slip in?"
    assert not any("radix" in f.read_text().lower() for f in css_files)
