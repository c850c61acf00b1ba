"""Integrity of the static site content (docs/product.md, Pages and Content)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pydantic import ValidationError

from publisher.content import books, images
from publisher.content.authors import AUTHORS
from publisher.content.models import Author
from publisher.content.site import LOGO_IMAGE, SHARE_IMAGE, SOCIAL_LINKS, TAGLINE
from tests.support import ASSETS_DIR

SVG_NS = "{http://www.w3.org/2000/svg}"

BOOK_TEXT_FIELDS = ("slug", "title", "subtitle", "caption", "description", "cover_image", "image_alt")
AUTHOR_TEXT_FIELDS = ("slug", "name", "role", "author_image", "image_alt")


def asset_path(url_path: str) -> Path:
    assert url_path.startswith("/"), f"{url_path!r} is not root-relative"
    return ASSETS_DIR / url_path.lstrip("/")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR", f"{path} has no IHDR chunk first"
    return struct.unpack(">II", data[16:24])


def svg_root(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg", f"{path} root element is {root.tag}"
    return root


def valid_book_kwargs(**overrides):
    kwargs = {
        "slug": "test-book",
        "title": "A Title",
        "subtitle": "A Subtitle",
        "caption": "A caption",
        "description": "A description.",
        "book_link": "https://www.example.com/book",
        "cover_image": "/images/covers/test.svg",
        "image_alt": "Cover of a test book",
        "author_names": ("Maya Lindqvist",),
    }
    kwargs.update(overrides)
    return kwargs


def test_three_books_in_the_specs_order_and_two_authors():
    assert len(AUTHORS) == 2
    coloring, main, word_search = books.BOOKS
    for text in (coloring.caption.lower(), coloring.subtitle.lower()):
        assert "coloring" in text and "adults" in text and "kids" in text
    assert "illustrated" in f"{main.caption} {main.subtitle}".lower()
    text = f"{main.title} {main.description}".lower()
    assert "guinea pig" in text and "hamster" in text
    assert "coloring" not in main.title.lower() and "word search" not in main.title.lower()
    assert "word search" in word_search.title.lower() and "word search" in word_search.caption.lower()
    assert "inspired by the illustrated book" in word_search.subtitle.lower()
    assert main.title in word_search.description


@pytest.mark.parametrize("book", books.BOOKS, ids=lambda b: b.slug)
def test_every_book_field_is_filled_and_its_link_https(book):
    for name in BOOK_TEXT_FIELDS:
        value = getattr(book, name)
        assert isinstance(value, str) and value.strip(), f"{book.slug}.{name} is empty"
    assert str(book.book_link).startswith("https://")
    assert book.author_names and all(name.strip() for name in book.author_names)
    for name in book.author_names:
        assert name in {author.name for author in AUTHORS}, f"{name!r} on {book.slug} is not in AUTHORS"


@pytest.mark.parametrize("author", AUTHORS, ids=lambda a: a.slug)
def test_every_author_field_is_filled_and_their_link_https(author):
    for name in AUTHOR_TEXT_FIELDS:
        value = getattr(author, name)
        assert isinstance(value, str) and value.strip(), f"{author.slug}.{name} is empty"
    assert author.author_bio and all(paragraph.strip() for paragraph in author.author_bio)
    assert str(author.amazon_url).startswith("https://")


def test_slugs_and_titles_are_unique():
    for values in (
        [book.slug for book in books.BOOKS],
        [author.slug for author in AUTHORS],
        [book.title for book in books.BOOKS],
    ):
        assert len(set(values)) == len(values)


def test_social_links_are_the_five_sites_in_order_over_https():
    assert [link.name for link in SOCIAL_LINKS] == ["Facebook", "Instagram", "YouTube", "TikTok", "X"]
    assert all(str(link.url).startswith("https://") for link in SOCIAL_LINKS)


def test_the_tagline_matches_spec():
    assert TAGLINE == "Animals We Confuse!"


IMAGE_PATHS = sorted(
    {book.cover_image for book in books.BOOKS}
    | {author.author_image for author in AUTHORS}
    | {LOGO_IMAGE, SHARE_IMAGE, "/favicon.ico", "/favicon.svg", "/apple-touch-icon.png"}
)


@pytest.mark.parametrize("url_path", IMAGE_PATHS)
def test_image_exists_under_assets_and_an_svg_parses(url_path):
    path = asset_path(url_path)
    assert path.is_file(), f"{url_path} -> {path} is missing"
    assert path.stat().st_size > 0
    if url_path.endswith(".svg"):
        svg_root(path)


@pytest.mark.parametrize("src", [b.cover_image for b in books.BOOKS] + [a.author_image for a in AUTHORS])
def test_the_size_the_pages_declare_is_the_images_own(src):
    info = images.describe(src)
    root = svg_root(asset_path(src))
    assert (str(info.width), str(info.height)) == (root.get("width"), root.get("height"))


def test_the_share_image_is_a_1200x630_png_and_the_icons_a_square_png_and_an_ico():
    assert SHARE_IMAGE.endswith(".png")
    assert png_size(asset_path(SHARE_IMAGE)) == (1200, 630)
    assert (images.SHARE_WIDTH, images.SHARE_HEIGHT) == (1200, 630)
    width, height = png_size(asset_path("/apple-touch-icon.png"))
    assert width == height and width >= 180
    data = asset_path("/favicon.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    assert count >= 1


def test_an_author_without_a_bio_is_refused_and_the_content_is_immutable():
    with pytest.raises(ValidationError):
        Author(
            slug="a",
            name="A",
            role="Author",
            author_bio=(),
            author_image="/a.svg",
            image_alt="A",
            amazon_url="https://www.amazon.com/author/a",
        )
    with pytest.raises(ValidationError):
        books.BOOKS[0].title = "Changed"
