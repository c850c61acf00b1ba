"""Book cards and the home page's book search (the target of the site's SearchAction).

``/?q=term`` shows only the books whose text contains every word of the term.
The filter runs in the browser from the URL: the prerendered page lists every
book (what crawlers and a first paint need), then an effect applies the query
after hydration, so server and client markup always agree.
"""

from __future__ import annotations

import json

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import VarData

from publisher import content
from publisher.components.links import external_button

SEARCH_PARAM = "q"


def searchable_text(book: content.Book) -> str:
    """The lower-cased text a search term is matched against."""
    return " ".join((book.title, book.subtitle, book.caption, book.description)).lower()


_HAYSTACKS = json.dumps([searchable_text(book) for book in content.BOOKS])

# Declared once as a hook of the page component; every var below depends on it.
_SEARCH_HOOK = f"""
const bookSearchLocation = useLocation();
const [bookQuery, setBookQuery] = useState("");
useEffect(() => {{
  setBookQuery((new URLSearchParams(bookSearchLocation.search).get({json.dumps(SEARCH_PARAM)}) ?? "").trim());
}}, [bookSearchLocation.search]);
const bookQueryTerms = bookQuery.toLowerCase().split(/\\s+/).filter(Boolean);
const bookMatches = {_HAYSTACKS}.map((text) => bookQueryTerms.every((term) => text.includes(term)));
const bookMatchCount = bookMatches.filter(Boolean).length;
"""

_SEARCH_DATA = VarData(
    imports={
        "react": [ImportVar(tag="useState"), ImportVar(tag="useEffect")],
        "react-router": [ImportVar(tag="useLocation")],
    },
    hooks={_SEARCH_HOOK: None},
)


def _search_var(js: str, var_type: type) -> rx.Var:
    return rx.Var(js, _var_type=var_type, _var_data=_SEARCH_DATA)


QUERY = _search_var("bookQuery", str)
HAS_QUERY = _search_var("(bookQuery !== '')", bool)
MATCH_COUNT = _search_var("bookMatchCount", int)


def book_is_hidden(index: int) -> rx.Var:
    return _search_var(f"!bookMatches[{index}]", bool)


def search_status() -> rx.Component:
    """Says what the search shows and offers the way back to every book."""
    return rx.el.div(
        rx.cond(
            HAS_QUERY,
            rx.el.div(
                rx.el.p(
                    rx.cond(
                        MATCH_COUNT == 0,
                        rx.el.span("No books match “", QUERY, "”."),
                        rx.el.span(
                            "Showing ",
                            MATCH_COUNT.to_string(),
                            f" of {len(content.BOOKS)} books matching “",
                            QUERY,
                            "”.",
                        ),
                    ),
                    class_name="font-semibold text-stone-900",
                ),
                rx.el.a(
                    "Show all books",
                    href="/",
                    class_name="font-semibold text-amber-900 underline underline-offset-4 hover:text-amber-700",
                ),
                class_name="flex flex-wrap items-center gap-x-4 gap-y-2 rounded-lg bg-amber-50 px-4 py-3",
            ),
        ),
        role="status",
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
            external_button("Get Your Copy Today", str(book.book_link), book.title),
            class_name="flex flex-1 flex-col",
        ),
        id=book.slug,
        aria_labelledby=heading_id,
        hidden=book_is_hidden(index),
        class_name="flex flex-col gap-5 rounded-xl border border-amber-200 bg-white p-5 shadow-sm",
    )


def latest_releases() -> rx.Component:
    return rx.el.section(
        rx.el.h2("Latest Releases", id="latest-releases", class_name="mb-4 font-serif text-3xl font-bold text-stone-900"),
        search_status(),
        rx.el.div(
            *[book_card(book, index) for index, book in enumerate(content.BOOKS)],
            class_name="grid gap-6 md:grid-cols-2 lg:grid-cols-3",
        ),
        aria_labelledby="latest-releases",
    )
