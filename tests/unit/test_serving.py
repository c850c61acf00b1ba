"""CanonicalRouteRewrite: slash-less page URLs are served in place, without a redirect."""

from __future__ import annotations

import asyncio
import copy

import pytest

from publisher import content, serving
from publisher.serving import CanonicalRouteRewrite

ROUTES = ("/", "/about", "/subscribe", "/contact-us")


class RecordingApp:
    """A fake inner ASGI app that remembers the scopes it was called with."""

    def __init__(self):
        self.scopes: list[dict] = []

    async def __call__(self, scope, receive, send):
        self.scopes.append(scope)
        await send({"type": "test.called"})


def http_scope(path: str, **extra) -> dict:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"books.example.com")],
        **extra,
    }


def call(middleware, scope: dict) -> tuple[dict, list[dict]]:
    """Run one request through ``middleware``; return what the inner app saw and what was sent."""
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    [seen] = middleware.app.scopes
    return seen, sent


@pytest.fixture
def middleware():
    return CanonicalRouteRewrite(RecordingApp(), ROUTES)


@pytest.mark.parametrize("route", ["/about", "/subscribe", "/contact-us"])
def test_slashless_routes_are_rewritten_in_place(middleware, route):
    seen, sent = call(middleware, http_scope(route))
    assert seen["path"] == route + "/"
    assert seen["raw_path"] == (route + "/").encode()
    assert sent == [{"type": "test.called"}]  # passed through, no redirect response


def test_rewrite_keeps_the_rest_of_the_request(middleware):
    scope = http_scope("/about", query_string=b"ref=newsletter", method="HEAD")
    seen, _ = call(middleware, scope)
    assert seen["query_string"] == b"ref=newsletter"
    assert seen["method"] == "HEAD"
    assert seen["headers"] == scope["headers"]
    assert {k: v for k, v in seen.items() if k not in ("path", "raw_path")} == {
        k: v for k, v in scope.items() if k not in ("path", "raw_path")
    }


def test_rewrite_does_not_mutate_the_callers_scope(middleware):
    scope = http_scope("/about")
    original = copy.deepcopy(scope)
    seen, _ = call(middleware, scope)
    assert scope == original
    assert seen is not scope


@pytest.mark.parametrize("path", ["/", "/about/", "/unknown", "/about/extra", "/About", "/_event"])
def test_other_paths_pass_unchanged(middleware, path):
    scope = http_scope(path)
    seen, _ = call(middleware, scope)
    assert seen is scope
    assert seen["path"] == path
    assert seen["raw_path"] == path.encode()


def test_websocket_scopes_pass_unchanged(middleware):
    scope = {"type": "websocket", "path": "/about", "raw_path": b"/about", "query_string": b"", "headers": []}
    original = copy.deepcopy(scope)
    seen, _ = call(middleware, scope)
    assert seen is scope
    assert seen == original


def test_lifespan_scopes_pass_unchanged(middleware):
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
    seen, _ = call(middleware, scope)
    assert seen is scope


def test_root_route_is_never_rewritten():
    assert CanonicalRouteRewrite(RecordingApp(), ROUTES).routes == frozenset({"/about", "/subscribe", "/contact-us"})


@pytest.mark.asyncio
async def test_middleware_works_inside_a_running_event_loop():
    app = RecordingApp()
    sent = []

    async def receive():
        return {"type": "http.request"}

    async def send(message):
        sent.append(message)

    await CanonicalRouteRewrite(app, ROUTES)(http_scope("/contact-us"), receive, send)
    assert app.scopes[0]["path"] == "/contact-us/"
    assert sent == [{"type": "test.called"}]


def test_transform_covers_exactly_the_non_root_nav_routes():
    inner = RecordingApp()
    wrapped = serving.transform(inner)
    assert isinstance(wrapped, CanonicalRouteRewrite)
    assert wrapped.app is inner
    assert wrapped.routes == frozenset(item.route for item in content.NAV_ITEMS if item.route != "/")
    assert wrapped.routes == frozenset({"/about", "/subscribe", "/contact-us"})
