"""Home: a page header and the latest releases."""

from publisher import content
from publisher.content import page_copy
from publisher.content.books import latest_first
from publisher.web import seo
from publisher.web.components.book_cards import latest_releases
from publisher.web.components.layout import page_heading
from publisher.web.pages.about import author_cards
from publisher.web.pages.registry import ROOT, site_page


def _structured_data():
    """The publisher, the site with its book search, and every book."""
    cards = author_cards()
    return [seo.organization(), seo.website(), *(seo.book(item, cards) for item in latest_first(content.BOOKS))]


@site_page(route=ROOT, copy=page_copy.HOME, nav_position=1, structured_data=_structured_data)
def home():
    return page_heading(page_copy.HOME), latest_releases()
