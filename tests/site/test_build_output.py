"""The prerendered HTML carries every page's metadata before any JavaScript runs (the values each
page declares: tests/unit/test_seo.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from bs4 import BeautifulSoup

from publisher.web import seo
from publisher.web.pages import PAGES
from publisher.web.pages.registry import SitePage
from tests.support import BUILD_DIR, TEST_SITE_URL


def prerendered(page: SitePage) -> BeautifulSoup:
    name = (page.route.strip("/") or "index") if page.has_url else "404"
    return BeautifulSoup((BUILD_DIR / f"{name}.html").read_text(encoding="utf-8"), "html.parser")


def named(tag) -> str | None:
    return tag.get("name") or tag.get("property")


@pytest.mark.parametrize("page", PAGES.pages(), ids=lambda page: page.route)
def test_each_page_carries_exactly_its_declared_metadata_and_sized_images_in_its_prerendered_html(
    built_site, page, monkeypatch
):
    monkeypatch.setattr(seo, "site_url", lambda: TEST_SITE_URL)  # the site the build was made for
    args = seo.page_args(page)
    declared = [(named(tag), tag["content"]) for tag in args["meta"] if isinstance(tag, dict)]
    declared += [("description", args["description"]), ("og:image", args["image"])]
    soup = prerendered(page)
    assert soup.html["lang"] == "en"
    assert [title.string for title in soup.find_all("title")] == [args["title"]]
    keys = {key for key, _ in declared}
    found = [(named(tag), tag["content"]) for tag in soup.head.find_all("meta") if named(tag) in keys]
    assert sorted(found) == sorted(declared)  # each once, none written twice by Reflex
    canonical = [TEST_SITE_URL + page.route] if page.has_url else []
    assert [link["href"] for link in soup.find_all("link", rel="canonical")] == canonical
    [feed] = soup.head.find_all("link", rel="alternate")
    assert (feed["type"], feed["href"]) == ("application/atom+xml", "/releases.atom")
    [script] = soup.find_all("script", attrs={"type": "application/ld+json"})
    assert json.loads(script.string) == seo.structured_data(page)
    for img in soup.find_all("img"):  # the layout holds while it loads (an alt: the Nu checker)
        assert img.get("width") and img.get("height"), img


def test_sitemap_lists_every_page_with_absolute_urls_and_robots_txt_points_to_it(built_site):
    tree = ET.parse(BUILD_DIR / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [loc.text for loc in tree.getroot().findall("s:url/s:loc", ns)]
    assert sorted(locs) == sorted(TEST_SITE_URL + page.route for page in PAGES.pages() if page.in_sitemap)
    assert f"Sitemap: {TEST_SITE_URL}/sitemap.xml" in (BUILD_DIR / "robots.txt").read_text().splitlines()


def test_no_radix_themes_stylesheet(built_site):
    css_files = list((BUILD_DIR / "assets").glob("*.css"))
    assert css_files, "no stylesheet built"
    total = sum(f.stat().st_size for f in css_files)
    assert total < 40_000, f"global CSS is {total} bytes: did a Radix component slip in?"
    assert not any("radix" in f.read_text().lower() for f in css_files)
