"""Integrity of the static site content (docs/product.md, Pages and Content)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pydantic import ValidationError

from publisher import content
from publisher.content import images
from publisher.web.pages import PAGES

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
SVG_NS = "{http://www.w3.org/2000/svg}"

BOOK_TEXT_FIELDS = ("slug", "title", "subtitle", "caption", "description", "cover_image", "image_alt")
AUTHOR_TEXT_FIELDS = ("slug", "name", "role", "author_image", "image_alt")


def asset_path(url_path: str) -> Path:
    """Root-relative URL path ("/images/x.svg") -> file under assets/."""
    assert url_path.startswith("/"), f"{url_path!r} is not root-relative"
    return ASSETS_DIR / url_path.lstrip("/")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
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


# --- Counts and order -----------------------------------------------------------------


def test_exactly_three_books_and_two_authors():
    assert len(content.BOOKS) == 3
    assert len(content.AUTHORS) == 2


def test_first_book_is_the_coloring_book_for_adults_and_kids():
    book = content.BOOKS[0]
    for text in (book.caption.lower(), book.subtitle.lower()):
        assert "coloring" in text
        assert "adults" in text
        assert "kids" in text


def test_second_book_is_the_illustrated_guinea_pig_and_hamster_book():
    book = content.BOOKS[1]
    assert "illustrated" in f"{book.caption} {book.subtitle}".lower()
    text = f"{book.title} {book.description}".lower()
    assert "guinea pig" in text
    assert "hamster" in text
    # The main book is neither of the companion books.
    assert "coloring" not in book.title.lower()
    assert "word search" not in book.title.lower()


def test_third_book_is_the_word_search_book():
    book = content.BOOKS[2]
    assert "word search" in book.title.lower()
    assert "word search" in book.caption.lower()


def test_word_search_book_is_inspired_by_the_illustrated_book():
    main, word_search = content.BOOKS[1], content.BOOKS[2]
    assert "inspired by the illustrated book" in word_search.subtitle.lower()
    assert main.title in word_search.description


# --- Every field filled ---------------------------------------------------------------


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_every_book_field_is_filled(book):
    for name in BOOK_TEXT_FIELDS:
        value = getattr(book, name)
        assert isinstance(value, str) and value.strip(), f"{book.slug}.{name} is empty"
    assert str(book.book_link).strip()
    assert book.author_names and all(name.strip() for name in book.author_names)


@pytest.mark.parametrize("author", content.AUTHORS, ids=lambda a: a.slug)
def test_every_author_field_is_filled(author):
    for name in AUTHOR_TEXT_FIELDS:
        value = getattr(author, name)
        assert isinstance(value, str) and value.strip(), f"{author.slug}.{name} is empty"
    assert author.author_bio, "author_bio has no paragraphs"
    assert all(paragraph.strip() for paragraph in author.author_bio)
    assert str(author.amazon_url).strip()


def test_book_and_author_slugs_are_unique():
    book_slugs = [book.slug for book in content.BOOKS]
    author_slugs = [author.slug for author in content.AUTHORS]
    assert len(set(book_slugs)) == len(book_slugs)
    assert len(set(author_slugs)) == len(author_slugs)


def test_book_titles_are_unique():
    titles = [book.title for book in content.BOOKS]
    assert len(set(titles)) == len(titles)


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_every_credited_author_has_an_author_card(book):
    for name in book.author_names:
        author = content.author_by_name(name)
        assert author is not None, f"{name!r} on {book.slug} is not in AUTHORS"
        assert author.name == name


def test_author_by_name_returns_none_for_unknown_names():
    assert content.author_by_name("Nobody Atall") is None
    assert content.author_by_name("") is None


# --- Links ----------------------------------------------------------------------------


@pytest.mark.parametrize("book", content.BOOKS, ids=lambda b: b.slug)
def test_book_links_are_https(book):
    assert str(book.book_link).startswith("https://")


@pytest.mark.parametrize("author", content.AUTHORS, ids=lambda a: a.slug)
def test_author_store_links_are_https(author):
    assert str(author.amazon_url).startswith("https://")


def test_social_links_are_the_five_sites_in_order():
    assert [link.name for link in content.SOCIAL_LINKS] == ["Facebook", "Instagram", "YouTube", "TikTok", "X"]


@pytest.mark.parametrize("link", content.SOCIAL_LINKS, ids=lambda link: link.name)
def test_social_links_are_https(link):
    assert str(link.url).startswith("https://")


def test_nav_items_match_spec():
    assert [(item.label, item.route) for item in PAGES.navigation()] == [
        ("Home", "/"),
        ("About", "/about"),
        ("Subscribe", "/subscribe"),
        ("Contact Us", "/contact-us"),
    ]


def test_tagline_is_exact():
    assert content.TAGLINE == "Animals We Confuse!"


# --- Images ---------------------------------------------------------------------------

IMAGE_PATHS = sorted(
    {book.cover_image for book in content.BOOKS}
    | {author.author_image for author in content.AUTHORS}
    | {content.LOGO_IMAGE, content.SHARE_IMAGE, "/favicon.ico", "/favicon.svg", "/apple-touch-icon.png"}
)


@pytest.mark.parametrize("url_path", IMAGE_PATHS)
def test_image_exists_under_assets(url_path):
    path = asset_path(url_path)
    assert path.is_file(), f"{url_path} -> {path} is missing"
    assert path.stat().st_size > 0


@pytest.mark.parametrize("url_path", [p for p in IMAGE_PATHS if p.endswith(".svg")])
def test_svg_images_parse_as_svg(url_path):
    svg_root(asset_path(url_path))


@pytest.mark.parametrize("src", [b.cover_image for b in content.BOOKS] + [a.author_image for a in content.AUTHORS])
def test_the_size_the_pages_declare_is_the_images_own(src):
    """Width and height come from the file (content/images.py), not from numbers typed beside it."""
    info = images.describe(src)
    root = svg_root(asset_path(src))
    assert (str(info.width), str(info.height)) == (root.get("width"), root.get("height"))


def test_share_image_is_a_1200x630_png():
    assert content.SHARE_IMAGE.endswith(".png")
    assert png_size(asset_path(content.SHARE_IMAGE)) == (1200, 630)
    assert (content.SHARE_IMAGE_WIDTH, content.SHARE_IMAGE_HEIGHT) == (1200, 630)


def test_apple_touch_icon_is_a_png():
    width, height = png_size(asset_path("/apple-touch-icon.png"))
    assert width == height and width >= 180


def test_favicon_ico_has_an_icon_header():
    data = asset_path("/favicon.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    assert count >= 1


# --- Model validation -----------------------------------------------------------------


def test_valid_book_kwargs_are_accepted():
    """Guards the rejection tests below: only the overridden field makes them fail."""
    assert content.Book(**valid_book_kwargs()).title == "A Title"


@pytest.mark.parametrize("title", ["", "   "])
def test_book_rejects_an_empty_title(title):
    with pytest.raises(ValidationError):
        content.Book(**valid_book_kwargs(title=title))


def test_book_rejects_no_authors():
    with pytest.raises(ValidationError):
        content.Book(**valid_book_kwargs(author_names=()))


def test_book_rejects_a_malformed_link():
    with pytest.raises(ValidationError):
        content.Book(**valid_book_kwargs(book_link="not a url"))


def test_book_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        content.Book(**valid_book_kwargs(price="9.99"))


def test_author_rejects_an_empty_bio():
    with pytest.raises(ValidationError):
        content.Author(
            slug="a",
            name="A",
            role="Author",
            author_bio=(),
            author_image="/a.svg",
            image_alt="A",
            amazon_url="https://www.amazon.com/author/a",
        )


def test_content_is_immutable():
    with pytest.raises(ValidationError):
        content.BOOKS[0].title = "Changed"
