"""Page metadata: titles, descriptions, canonical URLs, social tags and JSON-LD.

Everything here lands in the prerendered HTML, so crawlers and link previews see
it before any JavaScript runs. Absolute URLs are built from the configured site
URL (Reflex's ``deploy_url``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import reflex as rx

from publisher import content
from publisher.settings import site_url

INDEX_FOLLOW = "index, follow"
NOINDEX = "noindex"


@dataclass(frozen=True)
class PageMeta:
    """What one page says about itself to search engines and social sites."""

    route: str | None  # None for the not-found page, which has no URL of its own
    title: str
    description: str
    keywords: tuple[str, ...]
    breadcrumb_name: str | None = None
    robots: str = INDEX_FOLLOW
    extra_structured_data: tuple[dict[str, Any], ...] = field(default_factory=tuple)


def full_title(title: str) -> str:
    """Suffix the brand unless the title already names it."""
    if content.BRAND_NAME.lower() in title.lower():
        return title
    return f"{title} | {content.BRAND_NAME}"


def absolute_url(path: str) -> str:
    """An absolute URL on this site for a root-relative path."""
    if not path.startswith("/"):
        raise ValueError(f"expected a root-relative path, got {path!r}")
    return site_url() + path


def organization_id() -> str:
    return absolute_url("/#organization")


def organization() -> dict[str, Any]:
    return {
        "@type": "Organization",
        "@id": organization_id(),
        "name": content.BRAND_NAME,
        "url": absolute_url("/"),
        "logo": absolute_url(content.LOGO_IMAGE),
        "sameAs": [str(link.url) for link in content.SOCIAL_LINKS],
    }


def website() -> dict[str, Any]:
    return {
        "@type": "WebSite",
        "@id": absolute_url("/#website"),
        "name": content.BRAND_NAME,
        "url": absolute_url("/"),
        "publisher": {"@id": organization_id()},
        "potentialAction": {
            "@type": "SearchAction",
            "target": {
                "@type": "EntryPoint",
                "urlTemplate": absolute_url("/?q={search_term_string}"),
            },
            "query-input": "required name=search_term_string",
        },
    }


def person(author: content.Author) -> dict[str, Any]:
    return {
        "@type": "Person",
        "@id": absolute_url(f"/about#{author.slug}"),
        "name": author.name,
        "jobTitle": author.role,
        "description": author.author_bio[0],
        "image": absolute_url(author.author_image),
        "url": str(author.amazon_url),
        "sameAs": [str(author.amazon_url)],
    }


def book(item: content.Book) -> dict[str, Any]:
    return {
        "@type": "Book",
        "@id": absolute_url(f"/#{item.slug}"),
        "name": item.title,
        "alternativeHeadline": item.subtitle,
        "description": item.description,
        "image": absolute_url(item.cover_image),
        "inLanguage": "en",
        "author": [{"@type": "Person", "name": name} for name in item.author_names],
        "publisher": {"@id": organization_id()},
        "offers": {"@type": "Offer", "url": str(item.book_link)},
    }


def breadcrumbs(name: str, route: str) -> dict[str, Any]:
    return {
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": 1, "name": "Home", "item": absolute_url("/")},
            {"@type": "ListItem", "position": 2, "name": name, "item": absolute_url(route)},
        ],
    }


def structured_data(page: PageMeta) -> dict[str, Any]:
    """The page's JSON-LD graph: home describes the publisher, the others their place."""
    graph: list[dict[str, Any]] = []
    if page.route == "/":
        graph += [organization(), website()]
    elif page.route is not None and page.breadcrumb_name:
        graph.append(breadcrumbs(page.breadcrumb_name, page.route))
    graph += list(page.extra_structured_data)
    return {"@context": "https://schema.org", "@graph": graph}


def json_ld_text(data: dict[str, Any]) -> str:
    """JSON safe to embed in a <script> element (no '</script>' can close it early)."""
    return (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


def meta_tags(page: PageMeta) -> list[dict[str, str] | rx.Component]:
    """Meta entries for ``app.add_page(meta=...)``; title, description and og:image go separately."""
    title = full_title(page.title)
    image = absolute_url(content.SHARE_IMAGE)
    tags: list[dict[str, str] | rx.Component] = [
        {"name": "keywords", "content": ", ".join(page.keywords)},
        {"name": "robots", "content": page.robots},
        {"property": "og:type", "content": "website"},
        {"property": "og:site_name", "content": content.BRAND_NAME},
        {"property": "og:locale", "content": "en_US"},
        {"property": "og:title", "content": title},
        {"property": "og:description", "content": page.description},
        {"property": "og:image:alt", "content": content.SHARE_IMAGE_ALT},
        {"property": "og:image:width", "content": str(content.SHARE_IMAGE_WIDTH)},
        {"property": "og:image:height", "content": str(content.SHARE_IMAGE_HEIGHT)},
        {"name": "twitter:card", "content": "summary_large_image"},
        {"name": "twitter:title", "content": title},
        {"name": "twitter:description", "content": page.description},
        {"name": "twitter:image", "content": image},
        {"name": "twitter:image:alt", "content": content.SHARE_IMAGE_ALT},
    ]
    if page.route is not None:
        url = absolute_url(page.route)
        tags.append({"property": "og:url", "content": url})
        tags.append(rx.el.link(rel="canonical", href=url))
    tags.append(rx.el.script(json_ld_text(structured_data(page)), type="application/ld+json"))
    return tags


def page_args(page: PageMeta) -> dict[str, Any]:
    """Keyword arguments for ``app.add_page`` carrying all of the page's metadata."""
    return {
        "title": full_title(page.title),
        "description": page.description,
        "image": absolute_url(content.SHARE_IMAGE),
        "meta": meta_tags(page),
    }


# --- The pages ----------------------------------------------------------------------

HOME = PageMeta(
    route="/",
    title=f"{content.BRAND_NAME}: Books About Look-Alike Animals",
    description=(
        "Picture books, coloring books and word search puzzles about the animals "
        "people confuse, starting with Guinea Pig or Hamster? Get your copy today."
    ),
    keywords=(
        "guinea pig or hamster",
        "children's books",
        "look-alike animals",
        "coloring book for adults and kids",
        "word search book",
        "animal picture book",
    ),
    extra_structured_data=tuple(book(item) for item in content.BOOKS),
)

ABOUT = PageMeta(
    route="/about",
    title="About the Authors",
    description=(
        "Meet author Maya Lindqvist and illustrator Oliver Brandt, the team behind "
        "Guinea Pig or Hamster? and the Animals We Confuse books."
    ),
    keywords=("Maya Lindqvist", "Oliver Brandt", "children's book author", "illustrator"),
    breadcrumb_name="About",
    extra_structured_data=tuple(person(author) for author in content.AUTHORS),
)

SUBSCRIBE = PageMeta(
    route="/subscribe",
    title="Subscribe to New Releases",
    description=(
        "Join the Animals We Confuse email list and be the first to hear about new "
        "books in the series."
    ),
    keywords=("new book releases", "email newsletter", "children's book series"),
    breadcrumb_name="Subscribe",
)

CONTACT = PageMeta(
    route="/contact-us",
    title="Contact Us",
    description=(
        "Questions about our books, school visits or bulk orders? Send the Animals "
        "We Confuse team a message; we usually reply within 24-48 hours on business days."
    ),
    keywords=("contact publisher", "school visits", "bulk book orders"),
    breadcrumb_name="Contact Us",
)

NOT_FOUND = PageMeta(
    route=None,
    title="Page Not Found",
    description="The page you were looking for could not be found.",
    keywords=("page not found",),
    robots=NOINDEX,
)

INDEXED_PAGES: tuple[PageMeta, ...] = (HOME, ABOUT, SUBSCRIBE, CONTACT)
