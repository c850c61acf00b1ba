"""Book cards and the home page's book search (``/?q=term``): assets/site.js hides the cards that do
not match, with the wording and each card's text given here as data attributes."""

from __future__ import annotations

from datetime import datetime

import reflex as rx

from publisher.content import books, images, page_copy
from publisher.content.models import LANGUAGES, Book
from publisher.rules import release_rules
from publisher.web.components import forms
from publisher.web.components.links import external_button, site_link
from publisher.web.components.pictures import picture
from publisher.web.page_kinds import ALL_OUT

SEARCH_PARAM = "q"
_TEXT_LINK = "font-semibold text-amber-900 underline underline-offset-4 hover:text-amber-700"


def searchable_text(book: Book) -> str:
    return " ".join((book.title, book.subtitle, book.caption, book.description)).lower()


def search_status() -> rx.Component:
    """What the search shows, and the way back: a live region from the start, so screen readers announce it."""
    return rx.el.div(
        rx.el.div(
            rx.el.p(custom_attrs={"data-book-search-message": ""}, class_name="font-semibold text-stone-900"),
            site_link(books.SEARCH_SHOW_ALL, href="/", class_name=_TEXT_LINK),
            hidden=True,
            custom_attrs={"data-book-search-result": ""},
            class_name="flex flex-wrap items-center gap-x-4 gap-y-2 rounded-lg bg-amber-50 px-4 py-3",
        ),
        role="status",
        custom_attrs={
            "data-book-search-status": SEARCH_PARAM,
            "data-no-match": books.SEARCH_NO_MATCH,
            "data-match": books.SEARCH_MATCH,
        },
        class_name="mb-6",
    )


CARD_COVER_SIZES = "240px"  # max-w-[240px] below
_TITLE_LINK = "rounded-sm hover:text-amber-900 hover:underline underline-offset-4"


class ReleaseSwitch(rx.Component):
    """Its first child until ``at`` (ms since 1970), then its second, without a reload: for `reflex run`,
    which renders pages in the browser; a prerender (the production build's) shows the second."""

    library = "$/public/release_switch.js"
    tag = "ReleaseSwitch"
    at: rx.Var[int]


def buy_part(book: Book, now: datetime = ALL_OUT, waitlist: bool = False) -> rx.Component:
    """The buy button once ``book`` is out at ``now``; before, when it comes, a pre-order button if the
    publisher gives a link and, on its page (``waitlist``), the waitlist form."""
    out = external_button(books.GET_YOUR_COPY, str(book.book_link), book.title, buy=book.slug)
    if book.release is None or (now != ALL_OUT and release_rules.is_out(book, now)):
        return out
    link = book.preorder_link
    coming = rx.el.div(
        rx.el.p(release_rules.coming_words(book), class_name="mt-4 font-semibold text-amber-900"),
        *([external_button(books.PREORDER, str(link), book.title, buy=book.slug)] if link else []),
        *([forms.waitlist_form(book)] if waitlist else []),
    )
    at_ms = int(book.release.utc.timestamp() * 1000)
    return ReleaseSwitch.create(coming, out, at=at_ms) if now == ALL_OUT else coming


def book_card(book: Book, index: int, now: datetime = ALL_OUT) -> rx.Component:
    heading_id = f"book-{book.slug}-title"
    cover = picture(
        book.cover_image,
        book.image_alt,
        widths=images.COVER_WIDTHS,
        sizes=CARD_COVER_SIZES,
        priority=index == 0,
        class_name="h-auto w-full rounded-md shadow-md",
    )
    return rx.el.article(
        # The cover's link repeats the title's for a pointer: out of the tab order.
        site_link(cover, href=book.page_path, tab_index=-1, class_name="mx-auto block w-full max-w-[240px]"),
        rx.el.div(
            rx.el.p(book.caption, class_name="text-sm font-semibold uppercase tracking-wide text-amber-900"),
            rx.el.h3(
                site_link(book.title, href=book.page_path, class_name=_TITLE_LINK),
                id=heading_id,
                class_name="mt-1 font-serif text-2xl font-bold text-stone-900",
            ),
            rx.el.p(book.subtitle, class_name="mt-1 text-lg font-medium text-stone-700"),
            rx.el.p(book.description, class_name="mt-3 text-base leading-relaxed text-stone-700"),
            buy_part(book, now),
            class_name="flex flex-1 flex-col",
        ),
        id=book.slug,
        aria_labelledby=heading_id,
        custom_attrs={"data-book-search-text": searchable_text(book)},
        class_name="flex flex-col gap-5 rounded-xl border border-amber-200 bg-white p-5 shadow-sm",
    )


def latest_releases(now: datetime = ALL_OUT) -> rx.Component:
    return rx.el.section(
        rx.el.h2(
            books.LATEST_RELEASES, id="latest-releases", class_name="mb-4 font-serif text-3xl font-bold text-stone-900"
        ),
        search_status(),
        rx.el.div(
            *[book_card(book, index, now) for index, book in enumerate(books.latest_first(books.BOOKS))],
            class_name="grid gap-6 md:grid-cols-2 lg:grid-cols-3",
        ),
        aria_labelledby="latest-releases",
    )


PAGE_COVER_SIZES = "(max-width: 352px) calc(100vw - 2rem), 320px"  # w-80, or the screen's width


def breadcrumb(book: Book) -> rx.Component:
    return rx.el.nav(
        rx.el.ol(
            rx.el.li(site_link(page_copy.HOME.short_name, href="/", class_name="hover:underline")),
            rx.el.li("›", aria_hidden="true"),
            rx.el.li(book.title, aria_current="page", class_name="font-semibold text-stone-800"),
            class_name="flex flex-wrap gap-2 text-sm text-stone-700",
        ),
        aria_label=books.BREADCRUMB_LABEL,
        class_name="mb-6",
    )


def credits(book: Book, author_cards: dict[str, str]) -> rx.Component:
    names = list(book.author_names)
    parts: list[rx.Component | str] = [f"{books.BY} "]
    for name, separator in zip(names, [*books.joined(names), ""], strict=True):
        card = author_cards.get(name)
        parts.append(site_link(name, href=card, class_name=_TEXT_LINK) if card else name)
        if separator:
            parts.append(separator)
    return rx.el.p(*parts, class_name="mt-4 text-base text-stone-800")


def edition_details(book: Book) -> rx.Component:
    """The edition as far as the content gives it: nothing made up, nothing left blank."""
    given = [
        (books.FORMAT, book.format),
        (books.ISBN13, book.isbn13),
        (books.PAGES, str(book.page_count) if book.page_count else None),
        (books.AGES, book.age_range),
        (books.PUBLISHED, book.publication_date.strftime(books.DATE_FORMAT) if book.publication_date else None),
        (books.LANGUAGE, LANGUAGES[book.language]),
    ]
    return rx.el.section(
        rx.el.h2(books.DETAILS, id="book-details", class_name="font-serif text-xl font-bold text-stone-900"),
        rx.el.dl(
            *[
                rx.el.div(
                    rx.el.dt(label, class_name="font-semibold text-stone-900"),
                    rx.el.dd(value, class_name="text-stone-700"),
                    class_name="flex gap-2",
                )
                for label, value in given
                if value
            ],
            class_name="mt-3 grid gap-1",
        ),
        aria_labelledby="book-details",
        class_name="mt-8 border-t border-amber-200 pt-6",
    )


def book_page(book: Book, author_cards: dict[str, str], now: datetime = ALL_OUT) -> tuple[rx.Component, ...]:
    return (
        breadcrumb(book),
        rx.el.article(
            picture(
                book.cover_image,
                book.image_alt,
                widths=images.COVER_WIDTHS,
                sizes=PAGE_COVER_SIZES,
                priority=True,
                class_name="mx-auto h-auto w-full max-w-80 rounded-md shadow-lg",
            ),
            rx.el.div(
                rx.el.p(book.caption, class_name="text-sm font-semibold uppercase tracking-wide text-amber-900"),
                rx.el.h1(book.title, class_name="mt-1 font-serif text-3xl font-bold text-stone-900 sm:text-4xl"),
                rx.el.p(book.subtitle, class_name="mt-2 text-xl font-medium text-stone-700"),
                credits(book, author_cards),
                rx.el.p(book.description, class_name="mt-4 max-w-prose text-lg leading-relaxed text-stone-700"),
                buy_part(book, now, waitlist=True),
                edition_details(book),
            ),
            class_name="grid items-start gap-8 md:grid-cols-[20rem_1fr]",
        ),
    )
