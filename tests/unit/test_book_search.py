"""The text the home page's book search (/?q=...) matches against; the filter itself is tested in the browser."""

from __future__ import annotations

import json

import pytest

from publisher import content
from publisher.web.components import book_cards


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_searchable_text_is_every_shown_field_lower_cased_and_kept_apart(book):
    text = book_cards.searchable_text(book)
    assert text == text.lower()
    assert f"{book.title} {book.subtitle}".lower() in text
    assert f"{book.caption} {book.description}".lower() in text


def test_each_card_carries_its_searchable_text_and_the_status_line_its_wording_for_the_browser_filter():
    for index, book in enumerate(content.BOOKS):
        rendered = book_cards.book_card(book, index).render()
        assert f'"data-book-search-text":{json.dumps(book_cards.searchable_text(book))}' in "".join(rendered["props"])
    props = "".join(book_cards.search_status().render()["props"])
    assert f'"data-book-search-status":{json.dumps(book_cards.SEARCH_PARAM)}' in props
    assert f'"data-no-match":{json.dumps(content.books.SEARCH_NO_MATCH)}' in props
    assert f'"data-match":{json.dumps(content.books.SEARCH_MATCH)}' in props
