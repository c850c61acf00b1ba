"""Book cards and the home page's book search (the target of the site's SearchAction).

``/?q=term`` shows only the books whose text contains every word of the term.
The page is prerendered with every book (what crawlers and a first paint need)
and runs no app: ``assets/site.js`` reads the query from the URL, hides the
cards that do not match and fills the status line, whose wording and each
card's searchable text come from here as data attributes.
"""

from __future__ import annotations

import reflex as rx

from publisher import content
from publisher.components.links import external_button, site_link
from publisher.content import books as words

SEARCH_PARAM = "q"


def searchable_text(book: content.Book) -> str:
    """The lower-cased text a search term is matched against."""
    return " ".join((book.title, book.subtitle, book.caption, book.description)).lower()


def search_status() -> rx.Component:
    """Says what the search shows and offers the way back to every book.

    The live region is in the page from the start, empty, so screen readers
    announce the line when the browser fills it in.
    """
    return rx.el.div(
        rx.el.div(
            rx.el.p(custom_attrs={"data-book-search-message": ""}, class_name="font-semibold text-stone-900"),
            site_link(
                words.SEARCH_SHOW_ALL,
                href="/",
                class_name="font-semibold text-amber-900 underline underline-offset-4 hover:text-amber-700",
            ),
            hidden=True,
            custom_attrs={"data-book-search-result": ""},
            class_name="flex flex-wrap items-center gap-x-4 gap-y-2 rounded-lg bg-amber-50 px-4 py-3",
        ),
        role="status",
        custom_attrs={
            "data-book-search-status": SEARCH_PARAM,
            "data-no-match": words.SEARCH_NO_MATCH,
            "data-match": words.SEARCH_MATCH,
        },
        class_name="mb-6",
    )


def book_card(book: content.Book, index: int) -> rx.Component:
    heading_id = f"book-{book.slug}-title"
    return rx.el.article(
        rx.el.img(
            src=book.cover_image,
            alt=book.image_alt,
            custom_attrs={
                "width": str(book.cover_width),
                "height": str(book.cover_height),
                "fetchPriority": "high" if index == 0 else "auto",
            },
            loading="eager" if index == 0 else "lazy",
            decoding="async",
            class_name="mx-auto h-auto w-full max-w-[240px] rounded-md shadow-md",
        ),
        rx.el.div(
            rx.el.p(book.caption, class_name="text-sm font-semibold uppercase tracking-wide text-amber-900"),
            rx.el.h3(book.title, id=heading_id, class_name="mt-1 font-serif text-2xl font-bold text-stone-900"),
            rx.el.p(book.subtitle, class_name="mt-1 text-lg font-medium text-stone-700"),
            rx.el.p(book.description, class_name="mt-3 text-base leading-relaxed text-stone-700"),
            external_button(words.GET_YOUR_COPY, str(book.book_link), book.title),
            class_name="flex flex-1 flex-col",
        ),
        id=book.slug,
        aria_labelledby=heading_id,
        custom_attrs={"data-book-search-text": searchable_text(book)},
        class_name="flex flex-col gap-5 rounded-xl border border-amber-200 bg-white p-5 shadow-sm",
    )


def latest_releases() -> rx.Component:
    return rx.el.section(
        rx.el.h2(
            words.LATEST_RELEASES, id="latest-releases", class_name="mb-4 font-serif text-3xl font-bold text-stone-900"
        ),
        search_status(),
        rx.el.div(
            *[book_card(book, index) for index, book in enumerate(content.BOOKS)],
            class_name="grid gap-6 md:grid-cols-2 lg:grid-cols-3",
        ),
        aria_labelledby="latest-releases",
    )
