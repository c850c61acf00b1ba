"""The text the home page's book search (/?q=...) matches against; the filter itself is tested in the browser."""

from __future__ import annotations

import json

import pytest

from publisher import content
from publisher.web.components import book_cards


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_searchable_text_is_lower_case(book):
    text = book_cards.searchable_text(book)
    assert text == text.lower()
    assert text != ""


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_searchable_text_contains_every_shown_text_field(book):
    text = book_cards.searchable_text(book)
    for field in (book.title, book.subtitle, book.caption, book.description):
        assert field.lower() in text


def test_searchable_text_does_not_run_fields_together():
    """Adjacent fields are separated, so the end of one and start of the next do not form a word."""
    book = content.BOOKS[0]
    text = book_cards.searchable_text(book)
    assert f"{book.title} {book.subtitle}".lower() in text
    assert f"{book.caption} {book.description}".lower() in text


def test_each_card_carries_its_searchable_text_for_the_browser_filter():
    """assets/site.js matches the query against this attribute, card by card."""
    for index, book in enumerate(content.BOOKS):
        rendered = book_cards.book_card(book, index).render()
        assert f'"data-book-search-text":{json.dumps(book_cards.searchable_text(book))}' in "".join(rendered["props"])


def test_the_status_line_carries_its_wording_and_the_query_parameter():
    props = "".join(book_cards.search_status().render()["props"])
    assert f'"data-book-search-status":{json.dumps(book_cards.SEARCH_PARAM)}' in props
    assert f'"data-no-match":{json.dumps(content.books.SEARCH_NO_MATCH)}' in props
    assert f'"data-match":{json.dumps(content.books.SEARCH_MATCH)}' in props
