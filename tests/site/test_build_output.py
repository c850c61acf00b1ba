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
    # Where the list's emails lead: not for search engines.
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
    """The session server built the site; these tests read its output files."""
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
def test_title_description_keywords_robots(built, page: Expected):
    soup = soup_of(page)
    assert soup.html["lang"] == "en"
    assert [t.string for t in soup.find_all("title")] == [page.title]
    assert page.title.endswith(f"| {BRAND}") or page.title.startswith(BRAND)
    assert len(meta(soup, name="description")) > 40
    assert meta(soup, name="keywords").strip()
    assert meta(soup, name="robots") == page.robots


@pytest.mark.parametrize("page", [p for p in PAGES if p.route], ids=lambda p: p.file)
def test_canonical_and_open_graph_urls_are_absolute(built, page: Expected):
    soup = soup_of(page)
    expected_url = TEST_SITE_URL + page.route
    canonicals = soup.find_all("link", rel="canonical")
    assert [link["href"] for link in canonicals] == [expected_url]
    assert meta(soup, property="og:url") == expected_url


def test_not_found_page_has_no_canonical(built):
    soup = soup_of(PAGES[4])
    assert soup.find_all("link", rel="canonical") == []
    assert soup.find("meta", property="og:url") is None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.file)
def test_social_sharing_tags(built, page: Expected):
    soup = soup_of(page)
    assert meta(soup, property="og:title") == page.title
    assert meta(soup, property="og:description") == meta(soup, name="description")
    assert meta(soup, property="og:image") == SHARE_IMAGE_URL
    assert meta(soup, property="og:image:alt") == content.SHARE_IMAGE_ALT
    assert meta(soup, property="og:type") == "website"
    assert meta(soup, property="og:site_name") == BRAND
    assert meta(soup, name="twitter:card") == "summary_large_image"
    assert meta(soup, name="twitter:title") == page.title
    assert meta(soup, name="twitter:image") == SHARE_IMAGE_URL


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.file)
def test_structured_data_types(built, page: Expected):
    graph = json_ld_graph(soup_of(page))
    assert tuple(item["@type"] for item in graph) == page.graph_types


def test_home_structured_data_describes_publisher_search_and_books(built):
    nodes = json_ld_graph(soup_of(PAGES[0]))
    graph = {item["@type"]: item for item in nodes}
    organization, website = graph["Organization"], graph["WebSite"]
    assert organization["name"] == BRAND
    assert organization["url"] == f"{TEST_SITE_URL}/"
    assert organization["logo"] == f"{TEST_SITE_URL}/logo.svg"
    assert organization["sameAs"] == [str(link.url) for link in content.SOCIAL_LINKS]
    action = website["potentialAction"]
    assert action["@type"] == "SearchAction"
    assert action["target"]["urlTemplate"] == f"{TEST_SITE_URL}/?q={{search_term_string}}"
    assert action["query-input"] == "required name=search_term_string"
    books = [item for item in nodes if item["@type"] == "Book"]
    assert [b["name"] for b in books] == [b.title for b in content.BOOKS]
    assert [b["offers"]["url"] for b in books] == [str(b.book_link) for b in content.BOOKS]
    assert all(b["image"].startswith(f"{TEST_SITE_URL}/images/covers/") for b in books)
    assert all(b["author"] and b["author"][0]["@type"] == "Person" for b in books)


def test_breadcrumbs_point_home_then_page(built):
    for page in PAGES[1:4]:
        crumbs = json_ld_graph(soup_of(page))[0]["itemListElement"]
        assert [(c["position"], c["item"]) for c in crumbs] == [
            (1, f"{TEST_SITE_URL}/"),
            (2, TEST_SITE_URL + page.route),
        ]


def test_about_describes_each_author_as_a_person(built):
    people = [item for item in json_ld_graph(soup_of(PAGES[1])) if item["@type"] == "Person"]
    assert [p["name"] for p in people] == [a.name for a in content.AUTHORS]
    assert [p["url"] for p in people] == [str(a.amazon_url) for a in content.AUTHORS]


@pytest.mark.parametrize(
    ("page", "active"),
    [(PAGES[0], "Home"), (PAGES[1], "About"), (PAGES[2], "Subscribe"), (PAGES[3], "Contact Us"), (PAGES[4], None)],
    ids=lambda v: getattr(v, "file", v),
)
def test_active_navigation_item_is_in_the_served_html(built, page: Expected, active: str | None):
    soup = soup_of(page)
    for nav in (soup.find("nav", attrs={"aria-label": "Main"}), soup.find("nav", attrs={"aria-label": "Main menu"})):
        labels = [a.get_text() for a in nav.find_all("a")]
        assert labels == ["Home", "About", "Subscribe", "Contact Us"]
        current = [a.get_text() for a in nav.find_all("a", attrs={"aria-current": "page"})]
        assert current == ([active] if active else [])


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


def test_sitemap_lists_every_page_with_absolute_urls(built):
    tree = ET.parse(BUILD_DIR / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [loc.text for loc in tree.getroot().findall("s:url/s:loc", ns)]
    assert sorted(locs) == sorted(TEST_SITE_URL + page.route for page in registry.PAGES.pages() if page.in_sitemap)
    books = [f"{TEST_SITE_URL}/books/{book.slug}" for book in content.BOOKS]
    assert sorted(locs) == sorted([TEST_SITE_URL + item.route for item in registry.PAGES.navigation()] + books)


def test_robots_txt_points_to_the_sitemap(built):
    text = (BUILD_DIR / "robots.txt").read_text()
    assert "User-agent: *" in text
    assert f"Sitemap: {TEST_SITE_URL}/sitemap.xml" in text.splitlines()


def test_no_radix_themes_stylesheet(built):
    """Radix Themes would add ~80 KB of render-blocking CSS; ours stays small."""
    css_files = list((BUILD_DIR / "assets").glob("*.css"))
    assert css_files, "no stylesheet built"
    total = sum(f.stat().st_size for f in css_files)
    assert total < 40_000, f"global CSS is {total} bytes: did a Radix component slip in?"
    assert not any("radix" in f.read_text().lower() for f in css_files)
