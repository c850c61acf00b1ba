"""Page metadata (docs/product.md, Page metadata)."""

from __future__ import annotations

import json

import pytest

from publisher.content.authors import AUTHORS
from publisher.content.books import BOOKS
from publisher.content.site import LOGO_IMAGE, SHARE_IMAGE, SHARE_IMAGE_ALT, SOCIAL_LINKS
from publisher.web import seo
from publisher.web.pages import PAGES, about, contact, home, not_found, subscribe
from publisher.web.pages.book import BOOK_PAGES
from publisher.web.pages.registry import SitePage
from tests.unit.conftest import SITE
from tests.unit.test_book_pages import meta

ALL_PAGES = HOME, ABOUT, SUBSCRIBE, CONTACT, NOT_FOUND = (
    home.home,
    about.about,
    subscribe.subscribe,
    contact.contact,
    not_found.not_found,
)
INDEXED_PAGES = tuple(page for page in PAGES.pages() if page.indexed)
SUFFIX = " | Animals We Confuse"
pytestmark = pytest.mark.usefixtures("site")


def page_id(page: SitePage) -> str:
    return page.route if page.has_url else "not-found"


def by_type(graph: list[dict], type_name: str) -> list[dict]:
    return [node for node in graph if node.get("@type") == type_name]


def dict_tags(page: SitePage) -> list[dict[str, str]]:
    return [tag for tag in seo.meta_tags(page) if isinstance(tag, dict)]


def components(page: SitePage, type_name: str) -> list:
    return [tag for tag in seo.meta_tags(page) if not isinstance(tag, dict) and type(tag).__name__ == type_name]


def rendered_props(component) -> dict[str, str]:
    return dict(prop.split(":", 1) for prop in component.render()["props"])


def test_full_title_adds_the_brand_suffix_unless_the_title_names_it():
    assert seo.full_title("Contact Us") == "Contact Us | Animals We Confuse"
    named = ("Animals We Confuse: Books About Look-Alikes", "Welcome to animals we confuse", "ANIMALS WE CONFUSE")
    assert [seo.full_title(title) for title in named] == list(named)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/", f"{SITE}/"),
        ("/about", f"{SITE}/about"),
        ("/images/og-default.png", f"{SITE}/images/og-default.png"),
        ("/#organization", f"{SITE}/#organization"),
        *((path, None) for path in ("about", "", "images/x.png", "https://evil.example.com/x")),  # refused
    ],
)
def test_absolute_url_uses_the_configured_site_and_refuses_a_relative_path(path, expected):
    if expected is None:
        with pytest.raises(ValueError, match="expected a root-relative path"):
            seo.absolute_url(path)
    else:
        assert seo.absolute_url(path) == expected


def test_json_ld_text_round_trips_readable_and_cannot_close_the_script_element():
    data = {"name": "</script><script>alert('x')</script>", "other": "Tom & Jerry <3 >_<", "list": [1, 2.5, True, None]}
    text = seo.json_ld_text({**data, "cafe": "Café “Quote”"})
    assert not set("<>&") & set(text)
    assert "Café “Quote”" in text
    assert json.loads(text) == {**data, "cafe": "Café “Quote”"}


def test_home_has_the_organization_website_and_books():
    data = seo.structured_data(HOME)
    assert data["@context"] == "https://schema.org"
    graph = data["@graph"]
    assert [node["@type"] for node in graph] == ["Organization", "WebSite", "Book", "Book", "Book"]
    [org] = by_type(graph, "Organization")
    assert (org["name"], org["url"], org["logo"]) == ("Animals We Confuse", f"{SITE}/", f"{SITE}{LOGO_IMAGE}")
    assert org["sameAs"] == [str(link.url) for link in SOCIAL_LINKS]
    assert len(org["sameAs"]) == 5
    [site] = by_type(graph, "WebSite")
    assert (site["url"], site["name"], site["publisher"]) == (f"{SITE}/", "Animals We Confuse", {"@id": org["@id"]})
    action = site["potentialAction"]
    assert action["@type"] == "SearchAction"
    assert action["target"]["urlTemplate"] == f"{SITE}/?q={{search_term_string}}"
    assert action["query-input"] == "required name=search_term_string"
    books = by_type(graph, "Book")
    assert [entry["name"] for entry in books] == [book.title for book in BOOKS]
    for entry, book in zip(books, BOOKS, strict=True):
        assert entry["offers"]["url"] == str(book.book_link)
        assert [author["name"] for author in entry["author"]] == list(book.author_names)
        assert entry["description"] == book.description


@pytest.mark.parametrize(
    ("page", "name", "types"),
    [
        (ABOUT, "About", ["BreadcrumbList", "Person", "Person"]),
        (SUBSCRIBE, "Subscribe", ["BreadcrumbList"]),
        (CONTACT, "Contact Us", ["BreadcrumbList"]),
        (NOT_FOUND, None, []),
        *((page, book.title, ["BreadcrumbList", "Book"]) for page, book in zip(BOOK_PAGES, BOOKS, strict=False)),
    ],
    ids=lambda value: page_id(value) if isinstance(value, SitePage) else None,
)
def test_inner_pages_and_each_books_page_have_breadcrumbs_home_then_page(page, name, types):
    graph = seo.structured_data(page)["@graph"]
    assert [node["@type"] for node in graph] == types
    for crumbs in by_type(graph, "BreadcrumbList"):
        items = crumbs["itemListElement"]
        assert [(i["@type"], i["position"], i["name"], i["item"]) for i in items] == [
            ("ListItem", 1, "Home", f"{SITE}/"),
            ("ListItem", 2, name, f"{SITE}{page.route}"),
        ]


def test_about_has_one_person_per_author():
    people = by_type(seo.structured_data(ABOUT)["@graph"], "Person")
    assert [p["name"] for p in people] == [author.name for author in AUTHORS]
    for entry, author in zip(people, AUTHORS, strict=True):
        assert entry["url"] == str(author.amazon_url)
        assert entry["jobTitle"] == author.role


def test_the_indexed_pages_are_the_four_nav_routes_and_the_books_pages_index_follow_and_the_not_found_page_noindex():
    books = [f"/books/{book.slug}" for book in BOOKS]
    assert [page.route for page in INDEXED_PAGES] == [item.route for item in PAGES.navigation()] + books
    assert [page.route for page in PAGES.pages() if page.in_sitemap] == [page.route for page in INDEXED_PAGES]
    for page in (*INDEXED_PAGES, NOT_FOUND):
        assert meta(page, "robots") == ["index, follow" if page.indexed else "noindex"], page.route
    assert {page.active_nav for page in BOOK_PAGES} == {"/"}  # a book belongs to Home's list
    assert not NOT_FOUND.indexed


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_meta_tags_title_social_and_search_entries_canonical_url_the_structured_data_and_the_page_args(page):
    title = seo.full_title(page.copy.title)
    assert title.lower().count("animals we confuse") == 1  # the brand named exactly once
    assert title == (page.copy.title if page is HOME else page.copy.title + SUFFIX)
    url = [f"{SITE}{page.route}"] if page is not NOT_FOUND else []  # absolute, slash-less; none for not-found
    assert [tag["content"] for tag in dict_tags(page) if tag.get("property") == "og:url"] == url
    links = [rendered_props(link) for link in components(page, "Link")]
    assert [(json.loads(props["rel"]), json.loads(props["href"])) for props in links] == [("canonical", u) for u in url]
    keys = [tag.get("name") or tag.get("property") for tag in dict_tags(page)]
    assert len(keys) == len(set(keys))
    assert meta(page, "keywords") == [", ".join(page.copy.keywords)]
    assert page.copy.keywords
    assert meta(page, "og:title") == meta(page, "twitter:title") == [title]
    assert meta(page, "og:description") == meta(page, "twitter:description") == [page.copy.description]
    assert meta(page, "og:type") == ["website"]
    assert meta(page, "og:site_name") == ["Animals We Confuse"]
    assert meta(page, "og:image:alt") == [SHARE_IMAGE_ALT]
    assert meta(page, "og:image:width") == ["1200"]
    assert meta(page, "og:image:height") == ["630"]
    assert meta(page, "twitter:card") == ["summary_large_image"]
    assert meta(page, "twitter:image") == [f"{SITE}{SHARE_IMAGE}"]
    [script] = components(page, "Script")
    assert json.loads(rendered_props(script)["type"]) == "application/ld+json"
    [child] = script.render()["children"]
    text = json.loads(child["contents"])  # a JS string literal holding the JSON-LD text
    assert text == seo.json_ld_text(seo.structured_data(page))
    args = seo.page_args(page)
    assert set(args) == {"title", "description", "image", "meta"}
    assert (args["title"], args["description"]) == (title, page.copy.description)
    assert args["image"] == f"{SITE}/images/og-default.png"
    assert [tag for tag in args["meta"] if isinstance(tag, dict)] == dict_tags(page)
    assert len(args["meta"]) == len(seo.meta_tags(page))
