"""Page metadata: titles, absolute URLs, meta tags and JSON-LD (docs/product.md, Page metadata)."""

from __future__ import annotations

import json

import pytest

from publisher import content
from publisher.web import seo
from publisher.web.pages import PAGES, about, contact, home, not_found, subscribe
from publisher.web.pages.registry import SitePage

HOME, ABOUT, SUBSCRIBE, CONTACT, NOT_FOUND = (
    home.home,
    about.about,
    subscribe.subscribe,
    contact.contact,
    not_found.not_found,
)

SITE = "https://books.example.com"
ALL_PAGES = (HOME, ABOUT, SUBSCRIBE, CONTACT, NOT_FOUND)
INDEXED_PAGES = tuple(page for page in PAGES.pages() if page.indexed)
SUFFIX = " | Animals We Confuse"


@pytest.fixture(autouse=True)
def site(monkeypatch):
    """Every absolute URL is built from this site address."""
    monkeypatch.setattr("publisher.web.seo.site_url", lambda: SITE)
    return SITE


def page_id(page: SitePage) -> str:
    return page.route if page.has_url else "not-found"


def by_type(graph: list[dict], type_name: str) -> list[dict]:
    return [node for node in graph if node.get("@type") == type_name]


def dict_tags(page: SitePage) -> list[dict[str, str]]:
    return [tag for tag in seo.meta_tags(page) if isinstance(tag, dict)]


def tag_content(page: SitePage, key: str) -> str:
    """The content of the one meta tag whose name or property is ``key``."""
    matches = [tag["content"] for tag in dict_tags(page) if tag.get("name") == key or tag.get("property") == key]
    assert len(matches) == 1, f"expected exactly one {key!r} tag, found {len(matches)}"
    return matches[0]


def components(page: SitePage, type_name: str) -> list:
    return [tag for tag in seo.meta_tags(page) if not isinstance(tag, dict) and type(tag).__name__ == type_name]


def rendered_props(component) -> dict[str, str]:
    """Component props as {name: JS literal}, from ``render()``'s "name:value" strings."""
    props = {}
    for prop in component.render()["props"]:
        key, _, value = prop.partition(":")
        props[key] = value
    return props


# --- full_title -----------------------------------------------------------------------


def test_full_title_adds_the_brand_suffix():
    assert seo.full_title("Contact Us") == "Contact Us | Animals We Confuse"


@pytest.mark.parametrize(
    "title",
    [
        "Animals We Confuse: Books About Look-Alike Animals",
        "Welcome to animals we confuse",
        "ANIMALS WE CONFUSE",
    ],
)
def test_full_title_keeps_titles_that_already_name_the_brand(title):
    assert seo.full_title(title) == title


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_every_page_title_names_the_brand_exactly_once(page):
    title = seo.full_title(page.copy.title)
    assert title.lower().count("animals we confuse") == 1


def test_home_title_is_not_suffixed():
    assert seo.full_title(HOME.copy.title) == HOME.copy.title
    assert not seo.full_title(HOME.copy.title).endswith(SUFFIX)


@pytest.mark.parametrize("page", [ABOUT, SUBSCRIBE, CONTACT, NOT_FOUND], ids=page_id)
def test_other_page_titles_are_suffixed(page):
    assert seo.full_title(page.copy.title) == page.copy.title + SUFFIX


# --- absolute_url ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/", f"{SITE}/"),
        ("/about", f"{SITE}/about"),
        ("/images/og-default.png", f"{SITE}/images/og-default.png"),
        ("/#organization", f"{SITE}/#organization"),
    ],
)
def test_absolute_url_uses_the_configured_site(path, expected):
    assert seo.absolute_url(path) == expected


def test_absolute_url_follows_the_site_setting(monkeypatch):
    monkeypatch.setattr("publisher.web.seo.site_url", lambda: "https://other.example.org")
    assert seo.absolute_url("/about") == "https://other.example.org/about"


@pytest.mark.parametrize("path", ["about", "", "images/x.png", "https://evil.example.com/x"])
def test_absolute_url_rejects_relative_paths(path):
    with pytest.raises(ValueError):
        seo.absolute_url(path)


# --- json_ld_text ---------------------------------------------------------------------


def test_json_ld_text_round_trips():
    data = {"@context": "https://schema.org", "name": "Guinea Pig or Hamster?", "list": [1, 2.5, True, None]}
    assert json.loads(seo.json_ld_text(data)) == data


def test_json_ld_text_cannot_close_the_script_element():
    data = {"name": "</script><script>alert('x')</script>", "other": "Tom & Jerry <3 >_<"}
    text = seo.json_ld_text(data)
    for char in "<>&":
        assert char not in text
    assert json.loads(text) == data


def test_json_ld_text_keeps_non_ascii_readable():
    data = {"name": "Café “Quote”"}
    text = seo.json_ld_text(data)
    assert "Café “Quote”" in text
    assert json.loads(text) == data


# --- structured_data ------------------------------------------------------------------


def test_home_structured_data_context():
    data = seo.structured_data(HOME)
    assert data["@context"] == "https://schema.org"
    assert isinstance(data["@graph"], list)


def test_home_has_the_organization():
    graph = seo.structured_data(HOME)["@graph"]
    [org] = by_type(graph, "Organization")
    assert org["name"] == "Animals We Confuse"
    assert org["url"] == f"{SITE}/"
    assert org["logo"] == f"{SITE}{content.LOGO_IMAGE}"
    assert org["sameAs"] == [str(link.url) for link in content.SOCIAL_LINKS]
    assert len(org["sameAs"]) == 5


def test_home_has_the_website_with_a_search_action():
    graph = seo.structured_data(HOME)["@graph"]
    [site] = by_type(graph, "WebSite")
    assert site["url"] == f"{SITE}/"
    assert site["name"] == "Animals We Confuse"
    action = site["potentialAction"]
    assert action["@type"] == "SearchAction"
    assert action["target"]["urlTemplate"] == f"{SITE}/?q={{search_term_string}}"
    assert action["query-input"] == "required name=search_term_string"


def test_website_publisher_refers_to_the_organization():
    graph = seo.structured_data(HOME)["@graph"]
    [org] = by_type(graph, "Organization")
    [site] = by_type(graph, "WebSite")
    assert site["publisher"] == {"@id": org["@id"]}


def test_home_has_the_three_books_in_order():
    graph = seo.structured_data(HOME)["@graph"]
    books = by_type(graph, "Book")
    assert [entry["name"] for entry in books] == [book.title for book in content.BOOKS]
    for entry, book in zip(books, content.BOOKS, strict=True):
        assert entry["offers"]["url"] == str(book.book_link)
        assert [author["name"] for author in entry["author"]] == list(book.author_names)
        assert entry["description"] == book.description


def test_home_has_no_breadcrumbs_or_people():
    graph = seo.structured_data(HOME)["@graph"]
    assert by_type(graph, "BreadcrumbList") == []
    assert by_type(graph, "Person") == []


def test_about_has_breadcrumbs_home_then_about():
    graph = seo.structured_data(ABOUT)["@graph"]
    [crumbs] = by_type(graph, "BreadcrumbList")
    items = crumbs["itemListElement"]
    assert [(i["position"], i["name"], i["item"]) for i in items] == [
        (1, "Home", f"{SITE}/"),
        (2, "About", f"{SITE}/about"),
    ]
    assert all(i["@type"] == "ListItem" for i in items)


def test_about_has_one_person_per_author():
    graph = seo.structured_data(ABOUT)["@graph"]
    people = by_type(graph, "Person")
    assert [p["name"] for p in people] == [author.name for author in content.AUTHORS]
    assert len(people) == 2
    for entry, author in zip(people, content.AUTHORS, strict=True):
        assert entry["url"] == str(author.amazon_url)
        assert entry["jobTitle"] == author.role


def test_about_has_no_organization_or_website():
    graph = seo.structured_data(ABOUT)["@graph"]
    assert by_type(graph, "Organization") == []
    assert by_type(graph, "WebSite") == []


@pytest.mark.parametrize(
    ("page", "name", "route"),
    [(SUBSCRIBE, "Subscribe", "/subscribe"), (CONTACT, "Contact Us", "/contact-us")],
    ids=["subscribe", "contact"],
)
def test_subscribe_and_contact_have_only_a_breadcrumb_list(page, name, route):
    graph = seo.structured_data(page)["@graph"]
    assert [node["@type"] for node in graph] == ["BreadcrumbList"]
    items = graph[0]["itemListElement"]
    assert [(i["position"], i["name"], i["item"]) for i in items] == [
        (1, "Home", f"{SITE}/"),
        (2, name, f"{SITE}{route}"),
    ]


def test_not_found_has_no_breadcrumb():
    graph = seo.structured_data(NOT_FOUND)["@graph"]
    assert by_type(graph, "BreadcrumbList") == []


# --- Robots ---------------------------------------------------------------------------


@pytest.mark.parametrize("page", INDEXED_PAGES, ids=page_id)
def test_indexed_pages_are_index_follow(page):
    assert tag_content(page, "robots") == "index, follow"


def test_not_found_is_noindex():
    assert not NOT_FOUND.indexed
    assert tag_content(NOT_FOUND, "robots") == "noindex"


def test_indexed_pages_are_the_four_nav_routes_and_the_books_pages():
    books = [f"/books/{book.slug}" for book in content.BOOKS]
    assert [page.route for page in INDEXED_PAGES] == [item.route for item in PAGES.navigation()] + books


# --- meta_tags ------------------------------------------------------------------------


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_meta_tags_social_and_search_entries(page):
    assert tag_content(page, "keywords") == ", ".join(page.copy.keywords)
    assert page.copy.keywords
    assert tag_content(page, "og:title") == seo.full_title(page.copy.title)
    assert tag_content(page, "og:description") == page.copy.description
    assert tag_content(page, "og:type") == "website"
    assert tag_content(page, "og:site_name") == "Animals We Confuse"
    assert tag_content(page, "og:image:alt") == content.SHARE_IMAGE_ALT
    assert tag_content(page, "og:image:width") == "1200"
    assert tag_content(page, "og:image:height") == "630"
    assert tag_content(page, "twitter:card") == "summary_large_image"
    assert tag_content(page, "twitter:title") == seo.full_title(page.copy.title)
    assert tag_content(page, "twitter:description") == page.copy.description
    assert tag_content(page, "twitter:image") == f"{SITE}{content.SHARE_IMAGE}"


@pytest.mark.parametrize(
    ("page", "url"),
    [
        (HOME, f"{SITE}/"),
        (ABOUT, f"{SITE}/about"),
        (SUBSCRIBE, f"{SITE}/subscribe"),
        (CONTACT, f"{SITE}/contact-us"),
    ],
    ids=["home", "about", "subscribe", "contact"],
)
def test_og_url_and_canonical_are_the_absolute_slashless_url(page, url):
    assert tag_content(page, "og:url") == url
    [link] = components(page, "Link")
    props = rendered_props(link)
    assert json.loads(props["rel"]) == "canonical"
    assert json.loads(props["href"]) == url


def test_not_found_has_no_url_of_its_own():
    tags = dict_tags(NOT_FOUND)
    assert not [tag for tag in tags if tag.get("property") == "og:url"]
    assert components(NOT_FOUND, "Link") == []


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_meta_tags_embed_the_structured_data(page):
    [script] = components(page, "Script")
    rendered = script.render()
    assert json.loads(rendered_props(script)["type"]) == "application/ld+json"
    [child] = rendered["children"]
    text = json.loads(child["contents"])  # a JS string literal holding the JSON-LD text
    assert text == seo.json_ld_text(seo.structured_data(page))
    assert json.loads(text) == seo.structured_data(page)


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_each_meta_key_appears_once(page):
    keys = [tag.get("name") or tag.get("property") for tag in dict_tags(page)]
    assert len(keys) == len(set(keys))


# --- page_args ------------------------------------------------------------------------


@pytest.mark.parametrize("page", ALL_PAGES, ids=page_id)
def test_page_args(page):
    args = seo.page_args(page)
    assert set(args) == {"title", "description", "image", "meta"}
    assert args["title"] == seo.full_title(page.copy.title)
    assert args["description"] == page.copy.description
    assert args["image"] == f"{SITE}/images/og-default.png"
    meta = args["meta"]
    assert [tag for tag in meta if isinstance(tag, dict)] == dict_tags(page)
    assert len(meta) == len(seo.meta_tags(page))
