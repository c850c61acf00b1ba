"""About: the two author cards."""

from publisher.content import page_copy
from publisher.content.authors import AUTHORS
from publisher.content.models import Author
from publisher.web import seo
from publisher.web.components.author_cards import author_list
from publisher.web.components.layout import page_heading
from publisher.web.pages.registry import site_page


def author_card_path(author: Author) -> str:
    """Where an author's card is: About, at the card's anchor."""
    return f"{about.route}#{author.slug}"


def author_cards() -> dict[str, str]:
    """Each author's name -> their card on About (for a book's credits)."""
    return {author.name: author_card_path(author) for author in AUTHORS}


def _structured_data():
    return [seo.person(author, author_card_path(author)) for author in AUTHORS]


@site_page(route="/about", copy=page_copy.ABOUT, nav_position=2, structured_data=_structured_data)
def about():
    return page_heading(page_copy.ABOUT), author_list()
