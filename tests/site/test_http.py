"""What the production server answers, before any browser is involved."""

from __future__ import annotations

import httpx
import pytest

from publisher.server.middleware import is_admin_path
from publisher.web.pages import PAGES
from tests.support import BUILD_DIR

ROUTES = [page.route for page in PAGES.pages() if page.in_sitemap]
OUTSIDE_THE_SITEMAP = [
    page.route for page in PAGES.pages() if page.has_url and not page.in_sitemap and not is_admin_path(page.route)
]
SENT_PAGES = ["/subscribe/thanks", "/contact-us/thanks"]
LINK_PAGES = [route for route in OUTSIDE_THE_SITEMAP if route not in SENT_PAGES]


@pytest.fixture(scope="module")
def client(base_url: str):
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=10) as http:
        yield http


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_is_served_at_its_canonical_url_without_redirect(client, route):
    response = client.get(route)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert f'<link href="https://books.example.com{route}" rel="canonical"/>' in response.text


@pytest.mark.parametrize("route", ROUTES[1:])
def test_trailing_slash_form_is_served_too(client, route):
    response = client.get(route + "/")
    assert response.status_code == 200
    assert f'href="https://books.example.com{route}" rel="canonical"' in response.text


def test_the_list_pages_and_the_forms_sent_pages_are_declared_outside_the_sitemap():
    assert sorted(OUTSIDE_THE_SITEMAP) == sorted(["/subscribe/confirm", "/unsubscribe", *SENT_PAGES])


@pytest.mark.parametrize("path", ["/admin", "/admin/enrol", "/admin/api/sign-in/options"])
def test_the_dashboard_does_not_exist_where_the_cloud_keeps_the_list(client, path):
    assert client.get(path).status_code == 404
    assert client.post(path, json={}, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 404


@pytest.mark.parametrize("route", LINK_PAGES)
@pytest.mark.parametrize("query", ["", "?token=not-a-token"])
def test_a_list_page_without_a_working_link_answers_404_in_place_without_redirect(client, route, query):
    response = client.get(route + query)
    assert response.status_code == 404
    assert f'<link href="https://books.example.com{route}" rel="canonical"/>' in response.text
    assert '<meta content="noindex" name="robots"/>' in response.text


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
