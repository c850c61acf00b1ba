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
    return {
        "slug": "test-book",
        "title": "A Title",
        "subtitle": "A Subtitle",
        "caption": "A caption",
        "description": "A description.",
        "book_link": "https://www.example.com/book",
        "cover_image": "/images/covers/test.svg",
        "image_alt": "Cover of a test book",
        "author_names": ("Maya Lindqvist",),
        **overrides,
    }


def test_three_books_in_the_specs_order_two_authors_five_social_links_and_the_tagline():
    assert len(AUTHORS) == 2
    assert [link.name for link in SOCIAL_LINKS] == ["Facebook", "Instagram", "YouTube", "TikTok", "X"]
    assert TAGLINE == "Animals We Confuse!"
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


def test_every_link_is_https_and_every_book_names_authors_of_the_content():
    """Empty fields never load: the models refuse them (test_an_author_without_a_bio_is_refused...)."""
    links = [book.book_link for book in books.BOOKS] + [author.amazon_url for author in AUTHORS]
    assert all(str(link).startswith("https://") for link in [*links, *(link.url for link in SOCIAL_LINKS)])
    known = {author.name for author in AUTHORS}
    assert [name for book in books.BOOKS for name in book.author_names if name not in known] == []


def test_slugs_and_titles_are_unique():
    for values in (
        [book.slug for book in books.BOOKS],
        [author.slug for author in AUTHORS],
        [book.title for book in books.BOOKS],
    ):
        assert len(set(values)) == len(values)


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
    assert png_size(asset_path(SHARE_IMAGE)) == (images.SHARE_WIDTH, images.SHARE_HEIGHT) == (1200, 630)
    width, height = png_size(asset_path("/apple-touch-icon.png"))
    assert width == height and width >= 180
    reserved, kind, count = struct.unpack("<HHH", asset_path("/favicon.ico").read_bytes()[:6])
    assert (reserved, kind) == (0, 1) and count >= 1  # an icon file holding at least one image


def test_an_author_without_a_bio_is_refused_and_the_content_is_immutable():
    with pytest.raises(ValidationError):
        Author(**{**AUTHORS[0].model_dump(), "author_bio": ()})
    with pytest.raises(ValidationError):
        books.BOOKS[0].title = "Changed"
