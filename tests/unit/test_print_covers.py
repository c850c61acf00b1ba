"""Covers as the publisher really has them: print-size JPEGs (2400x3600 px, about 3 MB each).

What a phone downloads of them follows from three things checked here without a browser: the
variants the build writes of such a file, the ``sizes`` the pages give the browser (which picks
the narrowest candidate at least as wide as the slot times the screen's density, per the HTML
standard's srcset selection), and the originals leaving the build.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from publisher.build import image_variants, plugins
from publisher.content import images
from publisher.web.components import book_cards
from tests.print_covers import print_cover

# Home at 375 px on a 2x screen with every cover loaded; 30 KB of it are the page without covers
# (tests/site/test_static_pages.py's budget), the rest is left for the three covers.
HOME_BUDGET = 200 * 1024
HOME_WITHOUT_COVERS = 30 * 1024
PHONE_WIDTH_PX, PHONE_DENSITY = 375, 2


@pytest.fixture
def assets(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(images, "ASSETS_DIR", tmp_path / "assets")
    monkeypatch.setattr(images, "MANIFEST", tmp_path / "backend" / "images.json")
    images._read.cache_clear()
    (tmp_path / "assets" / "covers").mkdir(parents=True)
    yield tmp_path / "assets"
    images._read.cache_clear()


def slot_px(sizes: str, viewport_px: int) -> float:
    """The CSS width a ``sizes`` attribute gives an image at ``viewport_px`` (the forms the site writes)."""
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


def test_a_phone_gets_480_px_covers_on_home_and_640_px_on_a_books_page():
    assert chosen_width(images.COVER_WIDTHS, book_cards.CARD_COVER_SIZES) == 480  # 240 CSS px at 2x
    assert chosen_width(images.COVER_WIDTHS, book_cards.PAGE_COVER_SIZES) == 640  # 320 CSS px at 2x


def test_three_print_covers_at_the_phones_width_keep_home_under_200_kb(assets, tmp_path):
    infos = []
    for seed in range(3):
        print_cover(assets / "covers" / f"print-{seed}.jpg", seed)
        assert (assets / "covers" / f"print-{seed}.jpg").stat().st_size > 2_000_000
        infos.append(images.describe(f"/covers/print-{seed}.jpg"))
    public = tmp_path / "public"
    image_variants.write_variants(public, [images.Wanted(info, (480,), share=True) for info in infos])
    variants = public / "images" / "variants"
    avif = [variants / f"print-{seed}-{info.digest}-480w.avif" for seed, info in enumerate(infos)]
    total = sum(path.stat().st_size for path in avif)
    assert total <= HOME_BUDGET - HOME_WITHOUT_COVERS, f"three 480 px AVIF covers: {total} bytes"
    for seed, info in enumerate(infos):
        share = variants / f"print-{seed}-{info.digest}-share.jpg"
        assert share.stat().st_size > 0


def test_the_originals_leave_the_build_with_their_compressed_twins(tmp_path):
    static = tmp_path / "client"
    (static / "images" / "covers").mkdir(parents=True)
    for name in ("book-print.jpg", "book-print.jpg.gz", "book-print.jpg.br", "other.svg"):
        (static / "images" / "covers" / name).write_bytes(b"x")
    plugins.remove_originals(static, ["/images/covers/book-print.jpg"])
    assert [p.name for p in (static / "images" / "covers").iterdir()] == ["other.svg"]
