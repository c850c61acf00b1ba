"""The text the home page's book search (/?q=...) matches against."""

from __future__ import annotations

import json

import pytest

from publisher import content
from publisher.components import books


def matching_titles(query: str) -> list[str]:
    """Python mirror of the browser filter: every word of the query must occur."""
    terms = query.lower().split()
    return [book.title for book in content.BOOKS if all(term in books.searchable_text(book) for term in terms)]


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_searchable_text_is_lower_case(book):
    text = books.searchable_text(book)
    assert text == text.lower()
    assert text != ""


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_searchable_text_contains_every_shown_text_field(book):
    text = books.searchable_text(book)
    for field in (book.title, book.subtitle, book.caption, book.description):
        assert field.lower() in text


def test_searchable_text_does_not_run_fields_together():
    """Adjacent fields are separated, so the end of one and start of the next do not form a word."""
    book = content.BOOKS[0]
    text = books.searchable_text(book)
    assert f"{book.title} {book.subtitle}".lower() in text
    assert f"{book.caption} {book.description}".lower() in text


def test_browser_haystacks_match_the_cards_in_order():
    """The JS filter hides card i by haystack i, so the order must be the cards' order."""
    assert json.loads(books._HAYSTACKS) == [books.searchable_text(book) for book in content.BOOKS]


@pytest.mark.parametrize(
    ("query", "expected_slugs"),
    [
        ("coloring", ["coloring-book"]),
        ("word search", ["word-search-book"]),
        ("Hamster", ["coloring-book", "guinea-pig-or-hamster", "word-search-book"]),
        ("illustrated guide", ["guinea-pig-or-hamster"]),
        ("dinosaur", []),
    ],
)
def test_search_terms_find_the_expected_books(query, expected_slugs):
    by_title = {book.title: book.slug for book in content.BOOKS}
    assert [by_title[title] for title in matching_titles(query)] == expected_slugs
