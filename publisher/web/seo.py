"""Page metadata: titles, canonical URLs, social tags and JSON-LD, in the prerendered HTML."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import reflex as rx

from publisher.config.settings import site_url
from publisher.content import images
from publisher.content.models import Author, Book
from publisher.content.site import BRAND_NAME, LOGO_IMAGE, SHARE_IMAGE, SHARE_IMAGE_ALT, SOCIAL_LINKS
from publisher.rules import release_rules
from publisher.web.page_kinds import ALL_OUT, canonical_route

if TYPE_CHECKING:
    from publisher.web.pages.registry import SitePage


def full_title(title: str) -> str:
    return title if BRAND_NAME.lower() in title.lower() else f"{title} | {BRAND_NAME}"


def absolute_url(path: str) -> str:
    if not path.startswith("/"):
        raise ValueError(f"expected a root-relative path, got {path!r}")
    return site_url() + path


def organization() -> dict[str, Any]:
    return {
        "@type": "Organization",
        "@id": absolute_url("/#organization"),
        "name": BRAND_NAME,
        "url": absolute_url("/"),
        "logo": absolute_url(LOGO_IMAGE),
        "sameAs": [str(link.url) for link in SOCIAL_LINKS],
    }


def website() -> dict[str, Any]:
    return {
        "@type": "WebSite",
        "@id": absolute_url("/#website"),
        "name": BRAND_NAME,
        "url": absolute_url("/"),
        "publisher": {"@id": absolute_url("/#organization")},
        "potentialAction": {
            "@type": "SearchAction",
            "target": {
                "@type": "EntryPoint",
                "urlTemplate": absolute_url("/?q={search_term_string}"),
            },
            "query-input": "required name=search_term_string",
        },
    }


def person(author: Author, card_path: str) -> dict[str, Any]:
    """An author, identified by their card on About ('/about#maya-lindqvist')."""
    return {
        "@type": "Person",
        "@id": absolute_url(card_path),
        "name": author.name,
        "jobTitle": author.role,
        "description": author.author_bio[0],
        "image": absolute_url(author.author_image),
        "url": str(author.amazon_url),
        "sameAs": [str(author.amazon_url)],
    }


BOOK_FORMATS = {  # schema.org's names of the formats a Book may give
    "Paperback": "https://schema.org/Paperback",
    "Hardcover": "https://schema.org/Hardcover",
    "E-book": "https://schema.org/EBook",
    "Audiobook": "https://schema.org/AudiobookFormat",
}


def typical_age_range(age_range: str | None) -> str | None:
    """schema.org's form of an age range: '5 and up' -> '5-', '7-10' -> '7-10'; None when it has no such form."""
    match = re.fullmatch(r"(\d+)\s*(?:and up|\+)|(\d+)\s*[-–]\s*(\d+)", (age_range or "").strip())
    if match is None:
        return None
    return f"{match[1]}-" if match[1] else f"{match[2]}-{match[3]}"


def offer(item: Book, now: datetime) -> dict[str, Any]:
    """Where to buy the book; before its moment (at ``now``), a pre-order from then (UTC)."""
    if item.release is None or release_rules.is_out(item, now):
        return {"@type": "Offer", "url": str(item.book_link)}
    return {
        "@type": "Offer",
        "availability": "https://schema.org/PreOrder",
        "availabilityStarts": f"{item.release.utc:%Y-%m-%dT%H:%M:%SZ}",
        "url": str(item.preorder_link) if item.preorder_link else absolute_url(item.page_path),
    }


def book(item: Book, author_cards: Mapping[str, str], now: datetime = ALL_OUT) -> dict[str, Any]:
    """A book, identified by its page; its edition as ``workExample``."""
    url = absolute_url(item.page_path)
    node: dict[str, Any] = {
        "@type": "Book",
        "@id": f"{url}#book",
        "name": item.title,
        "alternativeHeadline": item.subtitle,
        "description": item.description,
        "url": url,
        "image": absolute_url(images.largest_url(item.cover_image)),
        "inLanguage": item.language,
        "author": [
            {
                "@type": "Person",
                "name": name,
                **({"url": absolute_url(author_cards[name])} if name in author_cards else {}),
            }
            for name in item.author_names
        ],
        "publisher": {"@id": absolute_url("/#organization")},
        "offers": offer(item, now),
    }
    if age := typical_age_range(item.age_range):
        node["typicalAgeRange"] = age
    edition = {
        key: value
        for key, value in (
            ("isbn", item.isbn13_digits),
            ("bookFormat", BOOK_FORMATS.get(item.format or "")),
            ("datePublished", item.publication_date.isoformat() if item.publication_date else None),
            ("numberOfPages", item.page_count),
        )
        if value is not None
    }
    if edition:
        node["workExample"] = [{"@type": "Book", "inLanguage": item.language, **edition}]
    return node


def structured_data(page: SitePage) -> dict[str, Any]:
    """The page's JSON-LD graph: every page with a URL below Home has its breadcrumbs, then its own nodes."""
    graph: list[dict[str, Any]] = []
    if page.has_url and (route := canonical_route(page.route)) != "/":
        home = {"@type": "ListItem", "position": 1, "name": "Home", "item": absolute_url("/")}
        here = {"@type": "ListItem", "position": 2, "name": page.copy.short_name, "item": absolute_url(route)}
        graph.append({"@type": "BreadcrumbList", "itemListElement": [home, here]})
    graph += list(page.structured_data())
    return {"@context": "https://schema.org", "@graph": graph}


def json_ld_text(data: dict[str, Any]) -> str:
    """JSON safe to embed in a <script> element (no '</script>' can close it early)."""
    return (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


def share_image(page: SitePage) -> tuple[str, str]:
    """The picture a link preview shows, (root-relative path, text); each is SHARE_WIDTH x SHARE_HEIGHT."""
    return page.share_image() if page.share_image else (SHARE_IMAGE, SHARE_IMAGE_ALT)


def meta_tags(page: SitePage) -> list[dict[str, str] | rx.Component]:
    """Meta entries for ``app.add_page(meta=...)``; title, description and og:image go separately."""
    title, description = full_title(page.copy.title), page.copy.description
    picture, picture_alt = share_image(page)
    tags: list[dict[str, str] | rx.Component] = [
        {"name": "keywords", "content": ", ".join(page.copy.keywords)},
        {"name": "robots", "content": "index, follow" if page.indexed else "noindex"},
        {"property": "og:type", "content": page.og_type},
        {"property": "og:site_name", "content": BRAND_NAME},
        {"property": "og:locale", "content": "en_US"},
        {"property": "og:title", "content": title},
        {"property": "og:description", "content": description},
        {"property": "og:image:alt", "content": picture_alt},
        {"property": "og:image:width", "content": str(images.SHARE_WIDTH)},
        {"property": "og:image:height", "content": str(images.SHARE_HEIGHT)},
        *({"property": name, "content": value} for name, value in page.open_graph()),
        {"name": "twitter:card", "content": "summary_large_image"},
        {"name": "twitter:title", "content": title},
        {"name": "twitter:description", "content": description},
        {"name": "twitter:image", "content": absolute_url(picture)},
        {"name": "twitter:image:alt", "content": picture_alt},
    ]
    if page.has_url:
        url = absolute_url(canonical_route(page.route))  # a variant's is the page it is served as
        tags.append({"property": "og:url", "content": url})
        tags.append(rx.el.link(rel="canonical", href=url))
    tags.append(rx.el.script(json_ld_text(structured_data(page)), type="application/ld+json"))
    return tags


def page_args(page: SitePage) -> dict[str, Any]:
    return {
        "title": full_title(page.copy.title),
        "description": page.copy.description,
        "image": absolute_url(share_image(page)[0]),
        "meta": meta_tags(page),
    }
