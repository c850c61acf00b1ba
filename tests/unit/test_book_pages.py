"""A page for every book: the edition's fields, its metadata, its images and the release feed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path

import pytest
import reflex as rx
from PIL import Image
from pydantic import ValidationError

from publisher.build import image_variants, plugins
from publisher.content import books, images
from publisher.content.books import book_page_copy, latest_first
from publisher.content.models import Book
from publisher.web import feed, seo
from publisher.web.components import book_cards, links
from publisher.web.components.pictures import picture
from publisher.web.pages import book
from publisher.web.pages.registry import PageRegistry
from tests.print_covers import print_cover
from tests.unit.conftest import SITE
from tests.unit.test_content import valid_book_kwargs

CARDS = {"Maya Lindqvist": "/about#maya-lindqvist", "Oliver Brandt": "/about#oliver-brandt"}
ATOM = "{http://www.w3.org/2005/Atom}"
pytestmark = pytest.mark.usefixtures("site")


COVER_SVG = books.BOOKS[0].cover_image


def full_book(**overrides) -> Book:
    given = {
        "slug": "full-book",
        "cover_image": COVER_SVG,
        "author_names": ("Maya Lindqvist", "A Guest"),
        "format": "Paperback",
        "isbn13": "978-0-306-40615-7",
        "page_count": 48,
        "age_range": "5 and up",
        "publication_date": date(2026, 3, 12),
    }
    return Book(**valid_book_kwargs(**{**given, **overrides}))


@pytest.mark.parametrize("isbn", ["978-0-306-40615-7", "9780306406157", "979-10-90636-07-1", "978 0 306 40615 7"])
def test_a_valid_isbn13_is_kept_as_written(isbn):
    assert full_book(isbn13=isbn).isbn13 == isbn


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("isbn13", "978-0-306-40615-8", "its check digit should be 7, not 8: a digit is mistyped"),
        ("isbn13", "978-0-360-40615-7", "its check digit should be 5, not 7"),
        ("isbn13", "0-306-40615-2", "an ISBN-13 has 13 digits"),
        ("isbn13", "978-0-306-40615-X", "an ISBN-13 has 13 digits"),
        ("isbn13", "123-0-306-40615-7", "an ISBN-13 starts with 978 or 979"),
        *((field, value, None) for field, value in [("format", "Scroll"), ("page_count", 0), ("language", "tlh")]),
        *((field, value, None) for field, value in [("age_range", ""), ("slug", "Not A Slug")]),
        *((field, value, None) for field, value in [("title", ""), ("title", "   "), ("author_names", ())]),
        *((field, value, None) for field, value in [("book_link", "not a url"), ("price", "9.99")]),
    ],
)
def test_a_bad_field_stops_the_content_from_loading_and_a_bad_isbn13_is_named(field, value, why):
    with pytest.raises(ValidationError) as refused:
        full_book(**{field: value})
    assert why is None or f"{value!r} is not a valid ISBN-13: {why}" in str(refused.value)


def test_latest_releases_are_newest_first_where_dates_are_given():
    undated_a, undated_b = full_book(slug="a", publication_date=None), full_book(slug="b", publication_date=None)
    old, new = full_book(slug="old", publication_date=date(2025, 1, 1)), full_book(slug="new")
    assert [b.slug for b in latest_first((undated_a, old, undated_b, new))] == ["new", "old", "a", "b"]
    assert latest_first(books.BOOKS) == books.BOOKS  # no dates yet: the content's order


def test_a_books_page_describes_it_in_its_own_words():
    copy = book_page_copy(books.BOOKS[2])
    assert copy.title == copy.heading == copy.short_name == "Guinea Pig or Hamster? Word Search"
    assert copy.description == books.BOOKS[2].description.split(". ")[0] + "."
    long = book_page_copy(books.BOOKS[0]).description
    assert len(long) <= 160 and long.endswith("…") and books.BOOKS[0].description.startswith(long[:-1])


@pytest.mark.parametrize(
    ("text", "expected"), [("5 and up", "5-"), ("7+", "7-"), ("7-10", "7-10"), ("8 – 12", "8-12"), ("teens", None)]
)
def test_age_ranges_in_schema_orgs_form(text, expected):
    assert seo.typical_age_range(text) == expected


def meta(page, key: str) -> list[str]:
    return [
        tag["content"]
        for tag in seo.meta_tags(page)
        if isinstance(tag, dict) and key in (tag.get("property"), tag.get("name"))
    ]


def book_node(page) -> dict:
    [node] = [node for node in seo.structured_data(page)["@graph"] if node["@type"] == "Book"]
    return node


def test_the_json_ld_and_open_graph_of_a_book_give_what_is_known_and_invent_nothing():
    page = book.declare(full_book(), PageRegistry())
    node, url = book_node(page), f"{SITE}/books/full-book"
    assert node["@id"] == f"{url}#book"
    assert (node["name"], node["url"], node["inLanguage"]) == ("A Title", url, "en")
    assert node["author"] == [
        {"@type": "Person", "name": "Maya Lindqvist", "url": f"{SITE}/about#maya-lindqvist"},
        {"@type": "Person", "name": "A Guest"},
    ]
    assert node["typicalAgeRange"] == "5-"
    assert node["workExample"] == [
        {
            "@type": "Book",
            "inLanguage": "en",
            "isbn": "9780306406157",
            "bookFormat": "https://schema.org/Paperback",
            "datePublished": "2026-03-12",
            "numberOfPages": 48,
        }
    ]
    assert meta(page, "og:type") == ["book"]
    assert meta(page, "book:author") == [f"{SITE}/about#maya-lindqvist"]  # an author with a card on About
    assert meta(page, "book:isbn") == ["9780306406157"]
    assert meta(page, "book:release_date") == ["2026-03-12"]
    assert meta(page, "og:url") == [url]
    assert seo.page_args(page)["image"] == f"{SITE}{images.describe(COVER_SVG).share_url}"
    assert (meta(page, "og:image:width"), meta(page, "og:image:height")) == (["1200"], ["630"])
    assert meta(page, "og:image:alt") == ["Cover of A Title"]
    page = book.declare(Book(**valid_book_kwargs(cover_image=COVER_SVG, author_names=CARDS.keys())), PageRegistry())
    assert "workExample" not in book_node(page) and "typicalAgeRange" not in book_node(page)
    assert not {"isbn", "datePublished", "numberOfPages", "bookFormat"} & set(json.dumps(book_node(page)).split('"'))
    assert meta(page, "og:type") == ["book"]
    assert meta(page, "book:isbn") == meta(page, "book:release_date") == []
    assert meta(page, "book:author") == [f"{SITE}/about#maya-lindqvist", f"{SITE}/about#oliver-brandt"]


def rendered(component) -> str:
    return json.dumps(component.render())


def test_the_page_shows_edition_details_only_when_given_and_links_each_author_to_their_card():
    full = rendered(book_cards.edition_details(full_book()))
    labels = ("Format", "ISBN-13", "Pages", "Ages", "Published", "Language")
    values = ("Paperback", "978-0-306-40615-7", "48", "5 and up", "12 March 2026", "English")
    for label, value in zip(labels, values, strict=True):
        assert f'\\"{label}\\"' in full and f'\\"{value}\\"' in full, label
    bare = rendered(book_cards.edition_details(Book(**valid_book_kwargs())))
    assert all(f'\\"{label}\\"' not in bare for label in labels[:-1])
    assert '\\"Language\\"' in bare
    credits = rendered(book_cards.credits(full_book(author_names=("Maya Lindqvist", "A Guest")), CARDS))
    assert 'href:\\"/about#maya-lindqvist\\"' in credits and '\\" and \\"' in credits and "A Guest" in credits


@pytest.fixture
def assets(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(images, "ASSETS_DIR", tmp_path / "assets")
    monkeypatch.setattr(images, "MANIFEST", tmp_path / "backend" / "images.json")
    images._read.cache_clear()
    (tmp_path / "assets" / "covers").mkdir(parents=True)
    yield tmp_path / "assets"
    images._read.cache_clear()


def photo(path: Path, size=(1200, 1800), mode="RGB", **save) -> None:
    Image.new(mode, size, (180, 90, 40) if mode == "RGB" else (180, 90, 40, 128)).save(path, **save)


def test_a_raster_cover_is_a_picture_with_srcset_its_feed_enclosure_a_jpeg_and_an_svg_one_img(assets, monkeypatch):
    photo(assets / "covers" / "big.jpg")
    info = images.describe("/covers/big.jpg")
    assert (info.width, info.height, info.alpha, info.fallback) == (1200, 1800, False, "jpg")
    assert info.widths(images.COVER_WIDTHS) == (240, 320, 480, 640)
    monkeypatch.setattr(books, "BOOKS", (full_book(cover_image="/covers/big.jpg"),))  # the largest JPEG
    enclosure = ET.fromstring(feed.release_feed(SITE)).find(f"{ATOM}entry/{ATOM}link[@rel='enclosure']")
    assert (enclosure.get("href"), enclosure.get("type")) == (f"{SITE}{info.variant_url(640, 'jpg')}", "image/jpeg")
    photo(assets / "covers" / "small.jpg", size=(300, 450))
    assert images.describe("/covers/small.jpg").widths(images.COVER_WIDTHS) == (240,)  # never enlarged
    photo(assets / "covers" / "tiny.jpg", size=(100, 150))
    assert images.describe("/covers/tiny.jpg").widths(images.COVER_WIDTHS) == (100,)
    markup = rendered(
        picture("/covers/big.jpg", "A cover", widths=images.COVER_WIDTHS, sizes="240px", class_name="c", priority=True)
    )
    for fmt in ("avif", "webp", "jpg"):
        srcset = ", ".join(f"/images/variants/big-{info.digest}-{w}w.{fmt} {w}w" for w in (240, 320, 480, 640))
        assert json.dumps(srcset) in markup.replace('\\"', '"')
    assert '\\"image/avif\\"' in markup and '\\"image/webp\\"' in markup
    assert 'width:\\"640\\"' in markup and 'height:\\"960\\"' in markup
    assert 'fetchPriority:\\"high\\"' in markup and 'loading:\\"eager\\"' in markup
    lazy = rendered(picture("/covers/big.jpg", "A cover", widths=(240,), sizes="240px", class_name="c"))
    assert 'loading:\\"lazy\\"' in lazy and 'fetchPriority:\\"auto\\"' in lazy
    (assets / "covers" / "art.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 600"/>')
    markup = rendered(picture("/covers/art.svg", "Art", widths=images.COVER_WIDTHS, sizes="240px", class_name="c"))
    assert '\\"picture\\"' not in markup and '\\"img\\"' in markup
    assert 'src:\\"/covers/art.svg\\"' in markup and 'width:\\"400\\"' in markup and 'height:\\"600\\"' in markup


def test_the_build_makes_each_variant_once_and_drops_the_ones_no_longer_named(assets, tmp_path):
    photo(assets / "covers" / "big.jpg", quality=95)
    photo(assets / "covers" / "clear.png", mode="RGBA")
    public = tmp_path / "public"
    wanted = [
        images.Wanted(images.describe("/covers/big.jpg"), images.COVER_WIDTHS, share=True),
        images.Wanted(images.describe("/covers/clear.png"), (160,)),
    ]
    assert image_variants.write_variants(public, wanted) == (16, 0)  # 4 widths x 3 formats + share; 1 x 3
    made = {path.name: path for path in (public / "images" / "variants").iterdir()}
    digest = wanted[0].info.digest
    for width in images.COVER_WIDTHS:
        for fmt, kind in (("avif", "AVIF"), ("webp", "WEBP"), ("jpg", "JPEG")):
            with Image.open(made[f"big-{digest}-{width}w.{fmt}"]) as variant:
                assert (variant.format, variant.size) == (kind, (width, width * 3 // 2))
    with Image.open(made[f"big-{digest}-share.jpg"]) as share:
        assert (share.format, share.size) == ("JPEG", (1200, 630))
    with Image.open(made[f"clear-{wanted[1].info.digest}-160w.png"]) as transparent:
        assert transparent.mode == "RGBA"  # a PNG with transparency keeps it
    before = {name: path.stat().st_mtime_ns for name, path in made.items()}

    assert image_variants.write_variants(public, wanted) == (0, 16)  # unchanged: nothing encoded again
    assert {p.name: p.stat().st_mtime_ns for p in (public / "images" / "variants").iterdir()} == before

    photo(assets / "covers" / "big.jpg", size=(1200, 1800), quality=60)  # the maintainer replaced it
    images._read.cache_clear()
    wanted[0] = images.Wanted(images.describe("/covers/big.jpg"), images.COVER_WIDTHS, share=True)
    assert wanted[0].info.digest != digest
    assert image_variants.write_variants(public, wanted) == (13, 3)
    assert not any(digest in name for name in (p.name for p in (public / "images" / "variants").iterdir()))


def test_a_print_file_in_cmyk_turned_sideways_comes_out_srgb_and_upright(assets, tmp_path):
    sideways = Image.new("CMYK", (1800, 1200), (0, 120, 200, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees to show upright
    sideways.save(assets / "covers" / "print.jpg", "JPEG", exif=exif)
    info = images.describe("/covers/print.jpg")
    assert (info.width, info.height) == (1200, 1800)
    image_variants.write_variants(tmp_path / "public", [images.Wanted(info, (240,))])
    with Image.open(tmp_path / "public" / "images" / "variants" / f"print-{info.digest}-240w.jpg") as variant:
        assert (variant.mode, variant.size) == ("RGB", (240, 360))
        assert "exif" not in variant.info  # no metadata leaves with a variant


def test_without_the_file_the_size_and_hash_come_from_the_builds_manifest(assets):
    photo(assets / "covers" / "big.jpg")
    info = images.describe("/covers/big.jpg")
    images.write_manifest([info])
    (assets / "covers" / "big.jpg").unlink()  # the container image has no assets/
    images._read.cache_clear()
    assert images.describe("/covers/big.jpg") == info
    with pytest.raises(images.ImageProblem, match="'/covers/other.jpg': no such file under"):
        images.describe("/covers/other.jpg")


def test_a_command_run_from_another_folder_finds_the_projects_own_images(tmp_path, monkeypatch):
    """`publisher-gateway announce` from $HOME: the release email's cover is the project's."""
    covers = [book.cover_image for book in books.BOOKS]
    in_the_project = [images.describe(cover) for cover in covers]
    monkeypatch.chdir(tmp_path)
    images._read.cache_clear()
    try:
        assert [images.describe(cover) for cover in covers] == in_the_project
    finally:
        images._read.cache_clear()


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [("text.jpg", b"not a jpeg", "not an image Pillow can read"), ("anim.gif", b"GIF89a", "use a JPEG, PNG")],
)
def test_an_image_the_build_cannot_use_is_named_with_why(assets, name, data, why):
    (assets / "covers" / name).write_bytes(data)
    with pytest.raises(images.ImageProblem, match=f"'/covers/{name}': {why}"):
        images.describe(f"/covers/{name}")


def test_the_feed_has_one_entry_per_book_with_its_page_summary_cover_and_date(monkeypatch):
    dated = full_book(slug="newest", cover_image=COVER_SVG)
    monkeypatch.setattr(books, "BOOKS", (*books.BOOKS, dated))
    root = ET.fromstring(feed.release_feed(SITE))
    assert root.tag == f"{ATOM}feed"
    assert root.find(f"{ATOM}link[@rel='self']").get("href") == f"{SITE}/releases.atom"
    entries = root.findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}title").text for e in entries] == ["A Title", *(b.title for b in books.BOOKS[:3])]
    newest = entries[0]
    assert newest.find(f"{ATOM}id").text == f"{SITE}/books/newest"
    assert newest.find(f"{ATOM}link[@rel='alternate']").get("href") == f"{SITE}/books/newest"
    enclosure = newest.find(f"{ATOM}link[@rel='enclosure']")
    assert (enclosure.get("href"), enclosure.get("type")) == (f"{SITE}{COVER_SVG}", "image/svg+xml")
    assert newest.find(f"{ATOM}summary").text.startswith("A Subtitle. A description.")
    assert newest.find(f"{ATOM}published").text == newest.find(f"{ATOM}updated").text == "2026-03-12T00:00:00+00:00"
    undated = entries[1]
    assert undated.find(f"{ATOM}published") is None  # no publication date is made up
    assert undated.find(f"{ATOM}updated").text == "2026-11-23T00:00:00+00:00"  # the list's last change
    assert root.find(f"{ATOM}updated").text == "2026-11-23T00:00:00+00:00"


def test_each_card_carries_its_search_text_every_shown_field_lower_cased_and_the_status_line_its_wording():
    for index, book_item in enumerate(books.BOOKS):  # the filter itself is tested in the browser
        text = book_cards.searchable_text(book_item)
        assert text == text.lower() and f"{book_item.title} {book_item.subtitle}".lower() in text
        assert f"{book_item.caption} {book_item.description}".lower() in text
        card = book_cards.book_card(book_item, index).render()
        assert f'"data-book-search-text":{json.dumps(text)}' in "".join(card["props"])
    props = "".join(book_cards.search_status().render()["props"])
    assert f'"data-book-search-status":{json.dumps(book_cards.SEARCH_PARAM)}' in props
    assert f'"data-no-match":{json.dumps(books.SEARCH_NO_MATCH)}' in props
    assert f'"data-match":{json.dumps(books.SEARCH_MATCH)}' in props


def test_both_buy_buttons_name_their_book_for_the_press_count_and_stay_plain_store_links():
    book_item = books.BOOKS[0]
    card = rendered(book_cards.book_card(book_item, 0))
    whole_page = rendered(rx.fragment(*book_cards.book_page(book_item, CARDS)))
    for shown in (card, whole_page):
        assert shown.count('\\"data-buy\\":\\"' + book_item.slug + '\\"') == 1
        assert shown.count('href:\\"' + str(book_item.book_link) + '\\"') == 1
        assert 'target:\\"_blank\\"' in shown
    other = rendered(links.external_button("Elsewhere", "https://example.org/", "a page"))
    assert "data-buy" not in other  # only a buy button is counted


# Covers as the publisher has them (print-size JPEGs, ~3 MB): what a 375 px, 2x phone downloads of
# Home (the page without covers: tests/site/test_static_pages.py's budget) picks by srcset's rule.
HOME_BUDGET = 200 * 1024
HOME_WITHOUT_COVERS = 30 * 1024
PHONE_WIDTH_PX, PHONE_DENSITY = 375, 2


def slot_px(sizes: str, viewport_px: int) -> float:
    for entry in (part.strip() for part in sizes.split(",")):
        condition = re.match(r"\(max-width: (\d+)px\) (.+)", entry)
        if condition and viewport_px > int(condition.group(1)):
            continue
        length = condition.group(2) if condition else entry
        if length.endswith("px") and length[:-2].isdigit():
            return float(length[:-2])
        vw_minus_rem = re.fullmatch(r"calc\(100vw - (\d+)rem\)", length)
        assert vw_minus_rem, f"a length this check cannot read: {length!r}"
        return viewport_px - 16 * int(vw_minus_rem.group(1))
    raise AssertionError(f"no entry of {sizes!r} applies at {viewport_px} px")


def chosen_width(widths: tuple[int, ...], sizes: str) -> int:
    needed = slot_px(sizes, PHONE_WIDTH_PX) * PHONE_DENSITY
    return min((w for w in widths if w >= needed), default=max(widths))


def test_a_phone_gets_480_px_covers_on_home_and_640_px_on_a_books_page_and_three_keep_home_under_200_kb(
    assets, tmp_path
):
    assert chosen_width(images.COVER_WIDTHS, book_cards.CARD_COVER_SIZES) == 480  # 240 CSS px at 2x
    assert chosen_width(images.COVER_WIDTHS, book_cards.PAGE_COVER_SIZES) == 640  # 320 CSS px at 2x
    infos = []
    for seed in range(3):
        print_cover(assets / "covers" / f"print-{seed}.jpg", seed)
        assert (assets / "covers" / f"print-{seed}.jpg").stat().st_size > 2_000_000
        infos.append(images.describe(f"/covers/print-{seed}.jpg"))
    public = tmp_path / "public"
    image_variants.write_variants(public, [images.Wanted(info, (480,)) for info in infos])
    variants = public / "images" / "variants"
    avif = [variants / f"print-{seed}-{info.digest}-480w.avif" for seed, info in enumerate(infos)]
    total = sum(path.stat().st_size for path in avif)
    assert total <= HOME_BUDGET - HOME_WITHOUT_COVERS, f"three 480 px AVIF covers: {total} bytes"


def test_the_originals_leave_the_build_with_their_compressed_twins(tmp_path):
    static = tmp_path / "client"
    (static / "images" / "covers").mkdir(parents=True)
    for name in ("book-print.jpg", "book-print.jpg.gz", "book-print.jpg.br", "other.svg"):
        (static / "images" / "covers" / name).write_bytes(b"x")
    plugins.remove_originals(static, ["/images/covers/book-print.jpg"])
    assert [p.name for p in (static / "images" / "covers").iterdir()] == ["other.svg"]
