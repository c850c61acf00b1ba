"""The production server as the container starts it: headers, compression, health. (Every
page with no console error or CSP violation in the browser: tests/site/test_browser.py.)"""

from __future__ import annotations

import re

import httpx
import pytest

STATIC_PAGES = ["/", "/about"]
FORM_PAGES = ["/subscribe", "/contact-us"]
STATIC_PAGE_CACHE = "public, max-age=0, s-maxage=300"


def hashed_asset(client: httpx.Client, suffix: str) -> str:
    html = client.get("/subscribe").text  # a page that starts the app
    return re.search(rf'"(/assets/[^"]+-[A-Za-z0-9_-]{{8,}}\.{suffix})"', html).group(1)


def assert_security_headers(response: httpx.Response) -> None:
    """The middleware's headers reached the served response (every value: tests/unit/test_middleware.py)."""
    assert response.headers["x-content-type-options"] == "nosniff"
    policy = response.headers["content-security-policy"]
    if response.headers["content-type"].startswith("text/html"):
        assert "script-src 'self' 'sha256-" in policy  # the build's own inline scripts, by their hashes
    else:
        assert policy == "default-src 'none'; frame-ancestors 'none'"


@pytest.mark.parametrize(
    ("path", "cache"), [*((p, STATIC_PAGE_CACHE) for p in STATIC_PAGES), *((p, "no-store") for p in FORM_PAGES)]
)
def test_pages_are_cached_by_kind_compressed_and_secured(client, path, cache):
    response = client.get(path, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == cache
    assert response.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in response.headers["vary"].lower()  # a shared cache keeps one copy per encoding
    assert "<h1" in response.text  # httpx decoded the gzip body
    assert_security_headers(response)
    plain = client.get(path, headers={"Accept-Encoding": "identity"})  # a client that takes no gzip
    assert "content-encoding" not in plain.headers and "<h1" in plain.text


def test_hashed_assets_are_immutable_and_compressed(client):
    for suffix in ("js", "css"):
        path = hashed_asset(client, suffix)
        response = client.get(path, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["content-encoding"] == "gzip"
        assert_security_headers(response)
        brotli = client.get(path, headers={"Accept-Encoding": "br, gzip"})
        assert brotli.headers["content-encoding"] == "br"
        assert int(brotli.headers["content-length"]) < int(response.headers["content-length"])


@pytest.mark.parametrize("path", ["/", "/about", "/no/such/page"])
def test_head_answers_like_get_without_a_body(client, path):
    get = client.get(path)
    head = client.head(path)
    assert head.status_code == get.status_code
    assert head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.headers["cache-control"] == get.headers["cache-control"]


def test_health_endpoint(client):
    response = client.get("/_health")
    assert response.status_code == 200
    assert response.json()["status"] is True
    assert response.json()["db"] is True
    assert response.headers["cache-control"] == "no-cache"
    assert client.get("/ping").status_code == 200
