"""What the production server answers, before any browser is involved."""

from __future__ import annotations

import pytest

from publisher.web.pages import PAGES
from tests.support import BUILD_DIR

ROUTES = [page.route for page in PAGES.pages() if page.in_sitemap]


@pytest.mark.parametrize("path", [*ROUTES, *(route + "/" for route in ROUTES if route != "/")])
def test_each_route_is_served_at_its_canonical_url_and_with_a_trailing_slash_without_redirect(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    canonical = path.removesuffix("/") or "/"
    assert f'<link href="https://books.example.com{canonical}" rel="canonical"/>' in response.text


@pytest.mark.parametrize("path", ["/admin", "/admin/enrol", "/admin/api/sign-in/options"])
def test_the_dashboard_does_not_exist_where_the_cloud_keeps_the_list(client, path):
    assert client.get(path).status_code == 404
    assert client.post(path, json={}, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 404


@pytest.mark.parametrize("path", ["/no-such-page", "/books/unknown/deep", "/__not-found", "/about/extra"])
def test_unknown_paths_get_the_not_found_page_with_status_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "Oops! Page Not Found" in response.text
    assert '<meta content="noindex" name="robots"/>' in response.text


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/sitemap.xml", "application/xml"),
        ("/robots.txt", "text/plain"),
        ("/favicon.ico", "image/"),
        ("/logo.svg", "image/svg+xml"),
        ("/images/og-default.png", "image/png"),
        ("/site.js", "text/javascript"),
    ],
)
def test_site_files_are_served(client, path, content_type):
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(content_type)


def test_no_directory_of_the_build_is_redirected(client):
    """Reflex's static files redirect a directory without its slash to a URL built from the Host header."""
    for directory in sorted(path for path in BUILD_DIR.rglob("*") if path.is_dir()):
        path = "/" + directory.relative_to(BUILD_DIR).as_posix()
        answer = client.get(path, headers={"Host": "evil.example"})
        assert answer.status_code in (200, 404) and "location" not in answer.headers, path
