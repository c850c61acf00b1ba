"""Home: a page header and the latest releases; and Home as it is until each forthcoming book's moment."""

from datetime import datetime

from publisher.content import page_copy
from publisher.content.books import BOOKS, latest_first
from publisher.web import seo
from publisher.web.components.book_cards import latest_releases
from publisher.web.components.layout import page_heading
from publisher.web.page_kinds import ALL_OUT, just_before, variant_route
from publisher.web.pages.about import author_cards
from publisher.web.pages.registry import PAGES, ROOT, PageRegistry, SitePage, site_page


def _structured_data(now: datetime):
    cards = author_cards()
    return [seo.organization(), seo.website(), *(seo.book(item, cards, now) for item in latest_first(BOOKS))]


def declare(now: datetime = ALL_OUT, route: str = ROOT, registry: PageRegistry = PAGES) -> SitePage:
    """Home as it is at ``now``; a variant (``route`` under ``/_before``) is neither listed nor mapped."""

    @site_page(
        route=route,
        copy=page_copy.HOME,
        nav_position=1 if route == ROOT else None,
        active_nav=ROOT,
        in_sitemap=route == ROOT,
        structured_data=lambda: _structured_data(now),
        registry=registry,
    )
    def home():
        return page_heading(page_copy.HOME), latest_releases(now)

    return home


home = declare()
HOME_VARIANTS = tuple(
    declare(just_before(book.release.utc), variant_route(book.slug, ROOT)) for book in BOOKS if book.release
)
