"""The serving middleware and the route table: slash-less page URLs served in place; security and cache headers."""

from __future__ import annotations

import asyncio
import copy
import logging

import httpx
import pytest
from reflex.app import App
from reflex.utils.precompressed_staticfiles import PrecompressedStaticFiles
from reflex_base import config as reflex_config
from starlette.applications import Starlette
from starlette.routing import Match, Mount, Route, Router

from publisher import content, visits
from publisher.limits import tabs
from publisher.rules import admin_access
from publisher.seldom_log import SeldomLog
from publisher.server import event_channel, middleware, requests, routes
from publisher.server.admin_downloads import AdminDownloads
from publisher.server.admin_sign_in import AdminSignIn
from publisher.server.bounce_hook import BounceHook
from publisher.server.buy_beacon import BuyBeacon
from publisher.server.event_channel import EventChannelDoor
from publisher.server.link_pages import ListLinks
from publisher.server.routes import PageInPlace
from publisher.web import page_kinds
from publisher.web.pages import PAGES

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


def call(asgi_app, scope: dict, inner: RecordingApp | None = None) -> tuple[dict, list[dict]]:
    """Run one request through ``asgi_app``; return what the inner app (``inner``, else ``asgi_app.app``)
    saw and what was sent."""
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(asgi_app(scope, receive, send))
    [seen] = (inner or asgi_app.app).scopes
    return seen, sent


@pytest.fixture
def rewrite():
    return PageInPlace(RecordingApp(), ROUTES)


@pytest.mark.parametrize("route", ["/about", "/subscribe", "/contact-us"])
def test_slashless_routes_are_rewritten_in_place(rewrite, route):
    seen, sent = call(rewrite, http_scope(route))
    assert seen["path"] == route + "/"
    assert seen["raw_path"] == (route + "/").encode()
    assert sent == [{"type": "test.called"}]  # passed through, no redirect response


def test_rewrite_keeps_the_rest_of_the_request(rewrite):
    scope = http_scope("/about", query_string=b"ref=newsletter", method="HEAD")
    seen, _ = call(rewrite, scope)
    assert seen["query_string"] == b"ref=newsletter"
    assert seen["method"] == "HEAD"
    assert seen["headers"] == scope["headers"]
    assert {k: v for k, v in seen.items() if k not in ("path", "raw_path")} == {
        k: v for k, v in scope.items() if k not in ("path", "raw_path")
    }


def test_rewrite_does_not_mutate_the_callers_scope(rewrite):
    scope = http_scope("/about")
    original = copy.deepcopy(scope)
    seen, _ = call(rewrite, scope)
    assert scope == original
    assert seen is not scope


@pytest.mark.parametrize("path", ["/", "/about/", "/unknown", "/about/extra", "/About", "/_event"])
def test_other_paths_pass_unchanged(rewrite, path):
    scope = http_scope(path)
    seen, _ = call(rewrite, scope)
    assert seen is scope
    assert seen["path"] == path
    assert seen["raw_path"] == path.encode()


def test_websocket_scopes_pass_unchanged(rewrite):
    scope = {"type": "websocket", "path": "/about", "raw_path": b"/about", "query_string": b"", "headers": []}
    original = copy.deepcopy(scope)
    seen, _ = call(rewrite, scope)
    assert seen is scope
    assert seen == original


def test_lifespan_scopes_pass_unchanged(rewrite):
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
    seen, _ = call(rewrite, scope)
    assert seen is scope


def test_root_route_is_never_rewritten():
    assert PageInPlace(RecordingApp(), ROUTES).routes == frozenset({"/about", "/subscribe", "/contact-us"})


@pytest.mark.asyncio
async def test_middleware_works_inside_a_running_event_loop():
    app = RecordingApp()
    sent = []

    async def receive():
        return {"type": "http.request"}

    async def send(message):
        sent.append(message)

    await PageInPlace(app, ROUTES)(http_scope("/contact-us"), receive, send)
    assert app.scopes[0]["path"] == "/contact-us/"
    assert sent == [{"type": "test.called"}]


def wrappers_passed(asgi_app, scope: dict) -> list[str]:
    """The ASGI callables a request passes before it reaches the app (a ``RecordingApp``), outermost
    first: a router hands it to the endpoint of the first route that claims it, else to its default."""
    passed: list[str] = []
    current = asgi_app
    while not isinstance(current, RecordingApp):
        passed.append(type(current).__name__)
        if isinstance(current, Router):
            claims = [route for route in current.routes if route.matches(copy.deepcopy(scope))[0] is Match.FULL]
            current = claims[0].endpoint if claims else current.default
        else:
            current = current.app
    return passed


def test_a_page_request_passes_two_wrappers_the_headers_and_the_route_table():
    inner = RecordingApp()
    outer = middleware.transform(inner)
    assert wrappers_passed(outer, http_scope("/")) == ["ResponseHeaders", "Router"]
    # A declared page at its slash-less URL: the table's route for it serves the page in place.
    assert wrappers_passed(outer, http_scope("/about")) == ["ResponseHeaders", "Router", "PageInPlace"]
    seen, _ = call(outer.app, http_scope("/"), inner)
    assert seen["path"] == "/" and seen["raw_path"] == b"/"  # the table's default: the app, as the request came


def test_every_endpoint_that_is_not_reflexs_own_is_in_the_route_table_around_the_app():
    inner = RecordingApp()
    outer = middleware.transform(inner)
    assert isinstance(outer, middleware.ResponseHeaders)
    table = outer.app
    assert isinstance(table, Router) and table.default is inner and not table.redirect_slashes
    endpoints = {route.path: type(route.endpoint) for route in table.routes if isinstance(route, Route)}
    assert endpoints["/admin/api/export.csv"] is AdminDownloads
    assert endpoints["/admin/api/{ceremony:path}"] is AdminSignIn
    assert endpoints["/hooks/bounce{trailing:slashes}"] is BounceHook
    assert endpoints["/count/buy{trailing:slashes}"] is BuyBeacon
    assert endpoints["/subscribe/confirm{trailing:slashes}"] is ListLinks
    assert endpoints["/unsubscribe{trailing:slashes}"] is ListLinks
    # The event channel's door, around the app (limits/tabs.py).
    door = next(route.endpoint for route in table.routes if getattr(route, "row", None) == "/_event")
    assert isinstance(door, EventChannelDoor) and door.app is inner
    wrapped = next(route.endpoint for route in table.routes if isinstance(route, Route) and route.path == "/about")
    assert isinstance(wrapped, PageInPlace) and wrapped.app is inner
    nav_routes = frozenset(item.route for item in PAGES.navigation() if item.route != "/")
    assert nav_routes == frozenset({"/about", "/subscribe", "/contact-us"})
    book_pages = {f"/books/{book.slug}" for book in content.BOOKS}
    # Outside the navigation too: the list's pages and the books'.
    admin_pages = {"/admin", "/admin/enrol"}
    sent_pages = {"/subscribe/thanks", "/contact-us/thanks"}  # where a form's plain POST leads
    assert wrapped.routes == nav_routes | {"/subscribe/confirm", "/unsubscribe"} | book_pages | admin_pages | sent_pages
    assert outer.starts_app == page_kinds.starts_app_by_route()


# --- Response headers -------------------------------------------------------------


class RespondingApp:
    def __init__(self, status: int = 200, headers: list | None = None):
        self.status = status
        self.headers = headers or [(b"content-type", b"text/html; charset=utf-8")]
        self.scopes: list[dict] = []

    async def __call__(self, scope, receive, send):
        self.scopes.append(scope)
        await send({"type": "http.response.start", "status": self.status, "headers": list(self.headers)})
        await send({"type": "http.response.body", "body": b"ok"})


# What the build decides today (.web/backend/page_kinds.json).
APP_ROUTES = {"/": False, "/about": False, "/subscribe": True, "/contact-us": True, "404": False}


def response_headers(
    scope: dict, status: int = 200, hashes=("'sha256-abc='",), app_routes=APP_ROUTES
) -> dict[str, str]:
    headers_middleware = middleware.ResponseHeaders(RespondingApp(status), hashes, app_routes)
    _, sent = call(headers_middleware, scope)
    return {k.decode().lower(): v.decode() for k, v in sent[0]["headers"]}


def csp(headers: dict[str, str]) -> dict[str, str]:
    return dict(d.split(" ", 1) for d in headers["content-security-policy"].split("; ") if " " in d)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/assets/root-CSsy5Cqn.js", "public, max-age=31536000, immutable"),
        ("/assets/__reflex_global_styles-UvPD5Uoz.css", "public, max-age=31536000, immutable"),
        ("/sitemap.xml", "no-cache"),
        ("/_health", "no-cache"),
        ("/site.js", "no-cache"),  # not content-hashed: must be revalidated
        ("/count/buy", "no-store"),  # the buy beacon's empty answer
        ("/assets/unhashed.js", "no-cache"),
        ("/logo.svg", "public, max-age=86400"),
        ("/images/covers/coloring-book.svg", "public, max-age=86400"),
    ],
)
def test_cache_policy_per_kind_of_response(path, expected):
    assert middleware.cache_control(path) == expected
    assert response_headers(http_scope(path))["cache-control"] == expected


@pytest.mark.parametrize("path", ["/", "/index.html", "/about", "/about/", "/about.html", "/about/index.html"])
def test_static_pages_may_be_kept_by_a_cdn_for_five_minutes_and_are_revalidated_by_browsers(path):
    assert response_headers(http_scope(path))["cache-control"] == "public, max-age=0, s-maxage=300"


@pytest.mark.parametrize("path", ["/subscribe/confirm", "/unsubscribe", "/unsubscribe/"])
def test_the_list_links_pages_are_never_stored(path):
    """The masked address and the link's token, written into each response (server/link_pages.py)."""
    assert response_headers(http_scope(path))["cache-control"] == "no-store"
    assert response_headers(http_scope(path), status=404)["cache-control"] == "no-store"


@pytest.mark.parametrize("path", ["/subscribe", "/subscribe/", "/contact-us", "/contact-us/"])
def test_the_form_pages_are_never_stored(path):
    """A question and its token per response, or the server's answer to a POST (server/plain_forms.py)."""
    assert response_headers(http_scope(path))["cache-control"] == "no-store"
    assert response_headers(http_scope(path), status=422)["cache-control"] == "no-store"


def test_before_any_build_every_page_is_treated_as_starting_the_app():
    headers = response_headers(http_scope("/"), app_routes=None)
    assert headers["cache-control"] == "no-cache"
    assert csp(headers)["connect-src"] == "'self' ws://books.example.com wss://books.example.com"


def test_error_responses_are_never_cached_long():
    assert response_headers(http_scope("/assets/gone-CSsy5Cqn.js"), status=404)["cache-control"] == "no-cache"
    # The not-found page is static, but a path that is missing today may exist after a deploy.
    assert response_headers(http_scope("/no-such-page"), status=404)["cache-control"] == "no-cache"


HTML = "text/html; charset=utf-8"
# Each kind of response the site sends: pages (static, starting the app, not found, revalidated),
# errors, hashed and unhashed files, the health check; to GET, HEAD and POST.
EVERY_KIND_OF_RESPONSE = {
    "static page": ("GET", "/", 200, HTML),
    "page that starts the app": ("GET", "/subscribe", 200, HTML),
    "not-found page": ("GET", "/no-such-page", 404, HTML),
    "page revalidated": ("GET", "/about", 304, None),
    "HEAD of a page": ("HEAD", "/contact-us", 200, HTML),
    "hashed script": ("GET", "/assets/root-CSsy5Cqn.js", 200, "text/javascript"),
    "sitemap": ("GET", "/sitemap.xml", 200, "application/xml"),
    "health": ("GET", "/_health", 200, "application/json"),
    "a POST refused": ("POST", "/unsubscribe", 410, "text/plain"),
    "server error": ("GET", "/assets/root-CSsy5Cqn.js", 500, "text/plain"),
}


@pytest.mark.parametrize(
    ("method", "path", "status", "content_type"), EVERY_KIND_OF_RESPONSE.values(), ids=EVERY_KIND_OF_RESPONSE.keys()
)
def test_security_headers_on_every_response(method, path, status, content_type):
    answer = [(b"content-type", content_type.encode())] if content_type else [(b"etag", b'"v1"')]
    headers_middleware = middleware.ResponseHeaders(RespondingApp(status, answer), ("'sha256-abc='",), APP_ROUTES)
    _, sent = call(headers_middleware, http_scope(path, method=method))
    headers = {k.decode().lower(): v.decode() for k, v in sent[0]["headers"]}
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert headers["permissions-policy"] == "camera=(), microphone=(), geolocation=()"
    assert headers["x-frame-options"] == "DENY"
    policy = csp(headers)
    assert policy["frame-ancestors"] == "'none'"
    assert policy["default-src"] in ("'self'", "'none'")  # a page's own, or nothing for anything else
    assert "unsafe-eval" not in headers["content-security-policy"]
    assert "strict-transport-security" not in headers  # plain HTTP: only HTTPS brings HSTS


def test_a_pages_policy_allows_its_own_scripts_and_nothing_else():
    policy = csp(response_headers(http_scope("/")))
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self' 'sha256-abc='"
    assert policy["object-src"] == "'none'"


def test_only_pages_that_start_the_app_may_open_a_websocket():
    assert csp(response_headers(http_scope("/")))["connect-src"] == "'self'"
    assert csp(response_headers(http_scope("/no-such-page")))["connect-src"] == "'self'"
    for path in ("/subscribe", "/contact-us/"):
        assert csp(response_headers(http_scope(path)))["connect-src"] == (
            "'self' ws://books.example.com wss://books.example.com"
        )


@pytest.mark.parametrize(
    "scope",
    [
        http_scope("/subscribe", scheme="https"),
        http_scope("/subscribe", headers=[(b"host", b"books.example.com"), (b"x-forwarded-proto", b"https")]),
    ],
    ids=["direct", "behind a proxy"],
)
def test_https_adds_hsts_and_only_secure_websockets(scope, monkeypatch):
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", 1)  # one proxy in front, trusted
    headers = response_headers(scope)
    assert headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"
    assert "connect-src 'self' wss://books.example.com;" in headers["content-security-policy"]
    assert "upgrade-insecure-requests" in headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/assets/root-CSsy5Cqn.js", "/logo.svg", "/robots.txt", "/sitemap.xml"])
def test_non_page_responses_get_the_minimal_policy(path):
    headers_middleware = middleware.ResponseHeaders(
        RespondingApp(headers=[(b"content-type", b"text/javascript")]), ("'sha256-abc='",), APP_ROUTES
    )
    _, sent = call(headers_middleware, http_scope(path))
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", ["/", "/about", "/about/", "/no-such-page", "/404.html"])
def test_a_page_revalidation_304_keeps_the_page_policy(path):
    # A 304 has no Content-Type, yet the browser applies its CSP to the cached page.
    headers_middleware = middleware.ResponseHeaders(
        RespondingApp(status=304, headers=[]), ("'sha256-abc='",), APP_ROUTES
    )
    _, sent = call(headers_middleware, http_scope(path))
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    assert "script-src 'self' 'sha256-abc='" in headers["content-security-policy"]


def test_websocket_and_lifespan_scopes_pass_untouched():
    app = RecordingApp()
    headers_middleware = middleware.ResponseHeaders(app, (), APP_ROUTES)
    _, sent = call(headers_middleware, {"type": "websocket", "path": "/_event", "headers": []})
    assert sent == [{"type": "test.called"}]


def test_inline_script_hashes_cover_executable_inline_scripts_only(tmp_path):
    import base64
    import hashlib

    def sha(body: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"

    (tmp_path / "about").mkdir()
    (tmp_path / "index.html").write_text(
        "<script>window.a = 1;</script>"
        '<script type="module" async="">import "/assets/x.js";</script>'
        '<script type="application/ld+json">{"@type": "Thing"}</script>'
        '<script defer src="/site.js"></script>'
    )
    (tmp_path / "about" / "index.html").write_text('<script id="_R_">go()</script><script>window.a = 1;</script>')
    assert middleware.inline_script_hashes(tmp_path) == sorted(
        [sha("window.a = 1;"), sha('import "/assets/x.js";'), sha("go()")]
    )


@pytest.mark.parametrize("host", ["evil.example; script-src *", "a b", "x'y"])
def test_a_malformed_host_header_cannot_write_into_the_policy(host):
    policy = middleware.content_security_policy(host, False, ())
    assert "connect-src 'self';" in policy
    assert "*" not in policy and "evil" not in policy


def proto_scope(forwarded: str, scheme: str = "http") -> dict:
    headers = [(b"host", b"books.example.com"), (b"x-forwarded-proto", forwarded.encode())]
    return http_scope("/subscribe", scheme=scheme, headers=headers)


def test_x_forwarded_proto_counts_only_through_the_trusted_proxy_hops(monkeypatch):
    # Without a trusted proxy anyone can send the header: it says nothing.
    assert not requests.is_https(proto_scope("https"), trusted_proxy_hops=0)
    assert requests.is_https(proto_scope("http", scheme="https"), trusted_proxy_hops=0)  # TLS to us directly
    assert requests.is_https(proto_scope("https"), trusted_proxy_hops=1)
    # Each proxy appends what it saw: the value our trusted proxy wrote is the last one (with one hop).
    assert not requests.is_https(proto_scope("https, http"), trusted_proxy_hops=1)
    assert requests.is_https(proto_scope("http, https"), trusted_proxy_hops=1)
    assert requests.is_https(proto_scope("https, http"), trusted_proxy_hops=2)
    assert not requests.is_https(proto_scope("https"), trusted_proxy_hops=2)  # fewer values than hops: not ours
    # The hop count Reflex is configured with (REFLEX_TRUSTED_PROXY_HOPS), by default.
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", 0)
    headers = response_headers(proto_scope("https"))
    assert (
        "strict-transport-security" not in headers
        and "upgrade-insecure-requests" not in headers["content-security-policy"]
    )
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", 1)
    assert "strict-transport-security" in response_headers(proto_scope("https"))


# --- The event channel's door, driven by crafted clients ----------------------------


class ChannelApp:
    """Stands in for socket.io: records each request that reaches it and how many tabs were open then."""

    def __init__(self, gate: tabs.TabGate):
        self.gate = gate
        self.seen: list[tuple[str, str, int]] = []

    async def __call__(self, scope, receive, send):
        self.seen.append((scope["type"], scope["path"], len(self.gate.open_here)))
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1000})
        else:
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"Invalid transport"})


class OneGate:
    def __init__(self, gate: tabs.TabGate):
        self.gate = gate

    def get(self) -> tabs.TabGate:
        return self.gate


def crafted(path: str, kind: str = "websocket", denial: bool = True, origin: str | None = None) -> dict:
    transport = "websocket" if kind == "websocket" else "polling"
    headers = [(b"host", b"books.example.com")] + ([(b"origin", origin.encode())] if origin else [])
    return {
        "type": kind,
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": f"EIO=4&transport={transport}&token=crafted".encode(),
        "headers": headers,
        "client": ("198.51.100.70", 40000),
        "extensions": {"websocket.http.response": {}} if denial else {},
    }


def through_the_door(scope: dict) -> tuple[ChannelApp, list[dict]]:
    gate = tabs.TabGate(tabs.MemoryTabs(), tabs.TabLimits(per_address=5, new_per_minute=50, per_worker=50))
    channel = ChannelApp(gate)
    door = EventChannelDoor(
        channel, OneGate(gate), origins=event_channel.ChannelOrigins(site_origin="https://books.example.com")
    )
    table = Router(routes.channel_routes(door), default=channel)  # the route table's channel routes
    sent: list[dict] = []
    incoming = [{"type": "websocket.connect"} if scope["type"] == "websocket" else {"type": "http.request"}]

    async def receive():
        return incoming.pop(0) if incoming else {"type": "websocket.disconnect", "code": 1000}

    async def send(message):
        sent.append(message)

    asyncio.run(table(scope, receive, send))
    assert gate.open_here == {}  # whatever was counted was given back
    return channel, sent


NOT_THE_CHANNEL = ["/_event/x/", "/_event//", "/_event/x", "/_event/_event/", "/_EVENT/", "/_EVENT", "/_Event/x/"]


@pytest.mark.parametrize("path", NOT_THE_CHANNEL)
@pytest.mark.parametrize("kind", ["websocket", "http"])
def test_a_path_below_the_event_channel_other_than_its_own_is_not_found_before_socketio_sees_it(path, kind):
    channel, sent = through_the_door(crafted(path, kind))
    assert channel.seen == []
    start = "websocket.http.response.start" if kind == "websocket" else "http.response.start"
    assert sent[0]["type"] == start and sent[0]["status"] == 404


def test_without_the_denial_response_a_path_that_is_not_the_channel_is_closed():
    channel, sent = through_the_door(crafted("/_event/x/", denial=False))
    assert channel.seen == [] and sent == [{"type": "websocket.close", "code": 1008}]


@pytest.mark.parametrize("path", ["/_event", "/_event/"])
@pytest.mark.parametrize("kind", ["websocket", "http"])
def test_the_channels_own_path_reaches_socketio_counted_as_an_open_tab(path, kind):
    channel, _ = through_the_door(crafted(path, kind))
    assert channel.seen == [(kind, "/_event/", 1)]  # one spelling for socket.io, one tab while it is open


@pytest.mark.parametrize("kind", ["websocket", "http"])
def test_a_request_from_another_sites_page_is_refused_403_before_socketio(kind):
    channel, sent = through_the_door(crafted("/_event/", kind, origin="https://evil.example"))
    assert channel.seen == []
    assert sent[0]["status"] == 403


@pytest.mark.parametrize("path", ["/", "/contact-us", "/_events", "/_eventually/", "/assets/_event/x"])
def test_other_paths_pass_the_door_uncounted(path):
    channel, _ = through_the_door(crafted(path, "http"))
    assert channel.seen == [("http", path, 0)]


# --- The page hook (the visits count, publisher/visits) ----------------------------


class HookCalls:
    """A fake ``on_page`` hook: remembers each (path, status) it was told, or raises when told to."""

    def __init__(self, fails: bool = False):
        self.calls: list[tuple[str, int]] = []
        self.fails = fails

    def __call__(self, scope, status):
        self.calls.append((scope["path"], status))
        if self.fails:
            raise RuntimeError("the count failed")


def hooked(hook: HookCalls, path: str, status: int = 200, method: str = "GET") -> list[dict]:
    headers_middleware = middleware.ResponseHeaders(RespondingApp(status), ("'sha256-abc='",), APP_ROUTES, on_page=hook)
    _, sent = call(headers_middleware, http_scope(path, method=method))
    return sent


@pytest.mark.parametrize("status", [200, 304, 404, 500])
@pytest.mark.parametrize("path", ["/", "/about", "/books/first-book", "/no-such-page"])
def test_the_page_hook_is_told_each_page_documents_status_as_its_response_starts(path, status):
    hook = HookCalls()
    sent = hooked(hook, path, status)
    assert hook.calls == [(path, status)]
    assert sent[0]["status"] == status


@pytest.mark.parametrize(
    "path", ["/site.js", "/releases.atom", "/sitemap.xml", "/logo.svg", "/assets/root-CSsy5Cqn.js", "/robots.txt"]
)
def test_the_page_hook_never_hears_of_a_file(path):
    hook = HookCalls()
    hooked(hook, path)
    assert hook.calls == []


def test_a_raising_page_hook_still_sends_the_page_whole(caplog):
    hook = HookCalls(fails=True)
    with caplog.at_level("ERROR", logger=middleware.__name__):
        first = hooked(hook, "/")
        second = hooked(hook, "/about")
    assert [message["type"] for message in first] == ["http.response.start", "http.response.body"]
    assert first[0]["status"] == 200 and first[1]["body"] == b"ok"
    assert second[1]["body"] == b"ok"
    assert dict(first[0]["headers"])[b"x-frame-options"] == b"DENY"  # the headers as ever
    assert len(hook.calls) == 2
    assert len([record for record in caplog.records if "page hook failed" in record.getMessage()]) == 2  # one each


def test_a_page_hook_failing_on_every_request_is_logged_at_most_once_a_minute(caplog):
    hook = HookCalls(fails=True)
    headers_middleware = middleware.ResponseHeaders(RespondingApp(), ("'sha256-abc='",), APP_ROUTES, on_page=hook)
    with caplog.at_level("ERROR", logger=middleware.__name__):
        for _ in range(5):
            headers_middleware.app.scopes.clear()
            call(headers_middleware, http_scope("/"))
    assert len(hook.calls) == 5
    assert len([record for record in caplog.records if "page hook failed" in record.getMessage()]) == 1


def test_with_counting_on_the_headers_wrapper_carries_the_visits_hook_and_adds_no_wrapper(monkeypatch):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("PUBLISHER_VISITS", "on")
    outer = middleware.transform(RecordingApp())
    assert outer.on_page is visits.record_page_view
    assert wrappers_passed(outer, http_scope("/")) == ["ResponseHeaders", "Router"]


@pytest.mark.parametrize(
    "environ",
    [{"PUBLISHER_VISITS": "off"}, {"PUBLISHER_VISITS": "on", "PUBLISHER_GATEWAY_URL": "https://gateway.example.com"}],
    ids=["PUBLISHER_VISITS=off", "the cloud gateway"],
)
def test_with_counting_off_no_hook_is_installed(monkeypatch, environ):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    outer = middleware.transform(RecordingApp())
    assert outer.on_page is None


# --- Cross-origin reads and the spellings Reflex's static files would answer ---------


async def own_page(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
    await send({"type": "http.response.body", "body": b"page"})


def as_reflex_wraps_it(app) -> Starlette:
    """``app`` as Reflex's App serves it: in its own Starlette app, in the top one, each given
    ``App._add_cors``, as the site's entry point leaves it."""
    import publisher.publisher  # noqa: F401 (loading the app sets up what Reflex wraps it with)

    inner = Starlette(routes=[Mount("", app)])
    App._add_cors(inner)
    top = Starlette(routes=[Mount("", inner)])
    App._add_cors(top)
    return top


SITE = "https://books.example.com"


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items() if name.startswith("access-control-")}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "https://books.example.com", "http://localhost:3000"]
)
async def test_no_origin_is_allowed_to_read_the_sites_answers(monkeypatch, origin):
    """Reflex allows every origin, with cookies; the site's pages call only their own origin, which needs no
    CORS, and the development server's page reaches the backend by the event channel, which CORS does not cover."""
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    served = as_reflex_wraps_it(middleware.ResponseHeaders(routes.route_table(own_page), (), None))
    preflight_headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x",
    }
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=served), base_url=SITE) as http:
        page = await http.get("/about", headers={"Origin": origin})
        preflight = await http.options(admin_access.EXPORT_PATH, headers=preflight_headers)
    assert page.status_code == 200 and cors_headers(page) == {}
    assert "origin" not in page.headers.get("vary", "").lower()
    assert preflight.status_code == 405 and cors_headers(preflight) == {}  # the downloads take a POST only


def built_site(tmp_path) -> PrecompressedStaticFiles:
    """Reflex's static files over a build's layout (as its ``get_frontend_mount`` serves them): each page
    as ``about/index.html`` and ``about.html``, and the not-found page."""
    for name in ("index", "about", "admin", "admin/enrol", "404"):
        page = f"<title>{name}</title>".encode()
        (tmp_path / f"{name}.html").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.html").write_bytes(page)
        if name not in ("index", "404"):
            (tmp_path / name).mkdir(parents=True, exist_ok=True)
            (tmp_path / name / "index.html").write_bytes(page)
    return PrecompressedStaticFiles(directory=tmp_path, html=True)


# "%2e" is a dot the client does not remove: the server decodes it into the path.
ODD_SPELLINGS = ["//admin", "/%2e/admin", "/admin/%2e", "/admin/%2e/", "/admin.html", "/admin.html/", "/admin//enrol"]
ODD_SPELLINGS += ["/admin/enrol.html", "/admin/%2e%2e/admin", "//about", "/about/%2e", "/about.html", "/404.html"]
ODD_SPELLINGS += ["/index.html", "/x/%2e%2e/admin"]


@pytest.mark.asyncio
@pytest.mark.parametrize("dashboard", [True, False])
@pytest.mark.parametrize("path", ODD_SPELLINGS)
async def test_another_spelling_of_a_page_is_not_found_and_never_redirected_by_the_host(
    tmp_path, monkeypatch, dashboard, path
):
    if dashboard:
        monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    else:
        monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://api.example.com")
    site = middleware.ResponseHeaders(routes.route_table(built_site(tmp_path)), (), None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=site)) as http:
        answer = await http.get("http://evil.example" + path)  # "//admin" alone would name a host
    assert answer.status_code == 404 and "location" not in answer.headers
    assert "<title>admin" not in answer.text


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/admin", "/admin/", "/admin//", "/admin/enrol", "/admin/enrol/"])
async def test_the_dashboards_own_spellings_get_its_page_with_its_headers(tmp_path, monkeypatch, path):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    site = middleware.ResponseHeaders(routes.route_table(built_site(tmp_path)), (), None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=site), base_url="http://evil.example") as http:
        answer = await http.get(path)
    assert answer.status_code == 200 and answer.text.startswith("<title>admin")
    assert answer.headers["x-robots-tag"] == "noindex, nofollow" and answer.headers["cache-control"] == "no-store"


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/about", "/about/", "/about//", "/", "/assets", "/books"])
async def test_no_path_of_the_site_is_redirected(tmp_path, path):
    site = middleware.ResponseHeaders(routes.route_table(built_site(tmp_path)), (), None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=site), base_url="http://evil.example") as http:
        answer = await http.get(path)
    assert answer.status_code in (200, 404) and "location" not in answer.headers


def test_a_line_any_request_can_cause_is_written_once_a_minute_per_kind_each_text_cut_to_100_characters(caplog):
    now = [0.0]
    log = SeldomLog(logging.getLogger("a stranger's lines"), clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="a stranger's lines"):
        for step in range(60):  # one line each second for a minute, of two kinds
            now[0] = step
            log.warning("Refused from %s: %s", "203.0.113.9", "x" * 10_000)
            log.info("Another refusal")
        now[0] = 60.0
        log.warning("Refused from %s: %s", "203.0.113.9", "a\nb\x85c")
    assert [record.getMessage() for record in caplog.records] == [
        "Refused from 203.0.113.9: " + "x" * 97 + "...",
        "Another refusal",
        "Refused from 203.0.113.9: a\\nb\\x85c",  # a minute on: written again, one line whatever it holds
    ]
