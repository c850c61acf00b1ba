"""Covers as the publisher really has them: three print-size JPEGs (2400x3600 px, about 3 MB each).

A copy of the project whose books point at covers this test makes (tests/print_covers.py),
built and served like the real site. A phone at 375 px on a 2x screen gets AVIF variants
sized for it, and Home with every cover loaded stays under 200 KB.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser, Request, expect

from publisher import content
from publisher.content import images
from tests.print_covers import make_project
from tests.support import ProductionServer, RecordingGateway, build_site, running_server

HOME_BUDGET = 200 * 1024


@pytest.fixture(scope="module")
def print_site(tmp_path_factory, test_gateway: RecordingGateway) -> Iterator[tuple[ProductionServer, Path]]:
    root = make_project(tmp_path_factory.mktemp("print-covers"))
    build_site(root / "build.log", root=root)
    workdir = tmp_path_factory.mktemp("print-server")
    env = {"PUBLISHER_GATEWAY_URL": test_gateway.url, "REFLEX_DB_URL": f"sqlite:///{workdir / 'site.db'}"}
    with running_server(workdir, env, root=root) as server:
        yield server, root


@dataclass(frozen=True)
class Fetched:
    url: str
    content_type: str
    size: int  # body and headers, as transferred


def on_a_phone(browser: Browser, url: str) -> list[Fetched]:
    """Load ``url`` at 375 px on a 2x screen, scrolled to the end so every lazy image loads."""
    context = browser.new_context(viewport={"width": 375, "height": 740}, device_scale_factor=2)
    page = context.new_page()
    finished: list[Request] = []
    page.on("requestfinished", lambda request: finished.append(request))
    page.goto(url, wait_until="networkidle")
    for image in page.locator("main img").all():
        image.scroll_into_view_if_needed()
        expect(image).to_have_js_property("complete", True)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("[...document.querySelectorAll('main img')].every(i => i.naturalWidth > 0)")
    fetched = []
    for request in finished:
        sizes = request.sizes()
        kind = request.response().headers.get("content-type", "")
        fetched.append(Fetched(request.url, kind, sizes["responseBodySize"] + sizes["responseHeadersSize"]))
    context.close()
    return fetched


def covers(fetched: list[Fetched]) -> list[Fetched]:
    return [f for f in fetched if "/images/variants/" in f.url]


def test_home_on_a_phone_gets_small_avif_covers_and_stays_under_200_kb(browser: Browser, print_site):
    server, _root = print_site
    fetched = on_a_phone(browser, server.base_url + "/")
    loaded = covers(fetched)
    assert len(loaded) == len(content.BOOKS)  # every cover, once
    assert {f.content_type for f in loaded} == {"image/avif"}
    assert all(f.url.endswith("-480w.avif") for f in loaded)  # 240 CSS px on a 2x screen
    assert not [f.url for f in fetched if f.url.endswith("-print.jpg")]  # never the print file
    total = sum(f.size for f in fetched)
    print(
        f"\nHome at 375 px, 2x: {total / 1024:.1f} KB in {len(fetched)} requests, "
        f"covers {sum(f.size for f in loaded) / 1024:.1f} KB"
    )
    assert total < HOME_BUDGET, f"Home took {total} bytes at 375 px on a 2x screen"


def test_a_books_page_on_a_phone_gets_its_cover_sized_for_its_width(browser: Browser, print_site):
    server, _root = print_site
    book = content.BOOKS[1]
    [cover] = covers(on_a_phone(browser, f"{server.base_url}/books/{book.slug}"))
    assert cover.url.endswith("-640w.avif")  # 320 CSS px on a 2x screen
    assert cover.content_type == "image/avif"


def test_the_build_serves_variants_not_originals_and_a_share_image_of_each_cover(print_site):
    server, root = print_site
    client = root / ".web" / "build" / "client"
    assert not list((client / "images" / "covers").glob("*-print.jpg*"))  # the originals stay in assets/
    for book in content.BOOKS:
        jpeg = f"/images/covers/{book.slug}-print.jpg"
        assert (root / "assets" / jpeg.lstrip("/")).stat().st_size > 2_000_000
    variants = {
        path.name for path in (client / "images" / "variants").iterdir() if not path.name.endswith((".gz", ".br"))
    }
    for book in content.BOOKS:
        digest = next(name for name in variants if name.startswith(f"{book.slug}-print-")).split("-")[-2]
        for width in images.COVER_WIDTHS:
            for fmt in ("avif", "webp", "jpg"):
                assert f"{book.slug}-print-{digest}-{width}w.{fmt}" in variants
        with Image.open(client / "images" / "variants" / f"{book.slug}-print-{digest}-share.jpg") as share:
            assert share.size == (1200, 630)
