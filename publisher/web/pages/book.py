"""A page for every book in the content: /books/<slug>, static like Home (docs/product.md, Pages); a
forthcoming book's also as it is until its moment (``/_before/<slug>/books/<slug>``)."""

from datetime import datetime

from publisher.content import books, images
from publisher.content.books import COVER_ALT_PREFIX, book_page_copy
from publisher.content.models import Book
from publisher.web import seo
from publisher.web.components.book_cards import book_page
from publisher.web.page_kinds import ALL_OUT, just_before, variant_route
from publisher.web.pages.about import author_cards
from publisher.web.pages.registry import PAGES, ROOT, PageRegistry, SitePage, site_page


def _open_graph(book: Book):
    cards = author_cards()
    tags = [("book:author", seo.absolute_url(cards[name])) for name in book.author_names if name in cards]
    if book.isbn13_digits:
        tags.append(("book:isbn", book.isbn13_digits))
    if book.publication_date:
        tags.append(("book:release_date", book.publication_date.isoformat()))
    return tags


def declare(book: Book, registry: PageRegistry = PAGES, now: datetime = ALL_OUT) -> SitePage:
    """The book's page as it is at ``now``: before its moment, its variant (out of the sitemap)."""
    before = now != ALL_OUT

    @site_page(
        route=variant_route(book.slug, book.page_path) if before else book.page_path,
        copy=book_page_copy(book),
        active_nav=ROOT,  # a book belongs to Home's list
        in_sitemap=not before,
        structured_data=lambda: [seo.book(book, author_cards(), now)],
        og_type="book",
        open_graph=lambda: _open_graph(book),
        share_image=lambda: (images.describe(book.cover_image).share_url, f"{COVER_ALT_PREFIX}{book.title}"),
        registry=registry,
    )
    def book_content():
        return book_page(book, author_cards(), now)

    return book_content


BOOK_PAGES = (
    *(declare(book) for book in books.BOOKS),
    *(declare(book, now=just_before(book.release.utc)) for book in books.BOOKS if book.release),
)
