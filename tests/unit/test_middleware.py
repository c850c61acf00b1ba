"""The route table (docs/architecture.md), the one body reader, and the response headers around them."""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from pathlib import Path

import httpx
import pytest
from reflex.app import App
from reflex.utils.precompressed_staticfiles import PrecompressedStaticFiles
from reflex_base import config as reflex_config
from starlette.applications import Starlette
from starlette.routing import Match, Mount, Route, Router

from publisher import visits
from publisher.content import images
from publisher.content.books import BOOKS
from publisher.limits import tabs
from publisher.rules import admin_access
from publisher.seldom_log import SeldomLog
from publisher.server import middleware, routes
from publisher.server.event_channel import EventChannelDoor
from publisher.server.routes import PageInPlace
from publisher.web import page_kinds
from publisher.web.pages import PAGES
from tests.support import asgi_exchange
from tests.unit.conftest import SITE, http_scope
from tests.unit.test_plain_forms import write_build
from tests.unit.test_tabs import door_for

ROUTES = ("/", "/about", "/subscribe", "/contact-us")


class RespondingApp:
    def __init__(self, status: int = 200, headers: list | None = None):
        self.status = status
        self.headers = headers or [(b"content-type", b"text/html; charset=utf-8")]
        self.scopes: list[dict] = []

    async def __call__(self, scope, receive, send):
        self.scopes.append(scope)
        await send({"type": "http.response.start", "status": self.status, "headers": list(self.headers)})
        await send({"type": "http.response.body", "body": b"ok"})


def call(asgi_app, scope: dict, inner: RespondingApp | None = None) -> tuple[dict, list[dict]]:
    """What the inner app (``inner``, else ``asgi_app.app``) saw of one request, and what was sent."""
    sent, _ = asgi_exchange(asgi_app, scope, [{"type": "http.request", "body": b"", "more_body": False}])
    [seen] = (inner or asgi_app.app).scopes
    return seen, sent


@pytest.mark.parametrize("route", ["/about", "/subscribe", "/contact-us"])
def test_a_slashless_page_is_served_in_place_the_rest_of_the_request_kept(route):
    scope = http_scope(route, query_string=b"ref=newsletter", method="HEAD")
    original = copy.deepcopy(scope)
    seen, sent = call(PageInPlace(RespondingApp(), ROUTES), scope)
    assert seen == {**scope, "path": route + "/", "raw_path": (route + "/").encode()}
    assert sent[0]["status"] == 200  # passed through, no redirect
    assert scope == original  # the caller's scope untouched


@pytest.mark.parametrize(
    "scope",
    [
        *(http_scope(path) for path in ["/", "/about/", "/unknown", "/about/extra", "/About", "/_event"]),
        {"type": "websocket", "path": "/about", "raw_path": b"/about", "query_string": b"", "headers": []},
        {"type": "lifespan", "asgi": {"version": "3.0"}},
    ],
)
def test_other_paths_and_scopes_pass_unchanged(scope):
    original = copy.deepcopy(scope)
    seen, _ = call(PageInPlace(RespondingApp(), ROUTES), scope)
    assert seen is scope and seen == original


def wrappers_passed(asgi_app, scope: dict) -> list[str]:
    """The ASGI callables a request passes before it reaches a ``RespondingApp``, outermost first."""
    passed: list[str] = []
    current = asgi_app
    while not isinstance(current, RespondingApp):
        passed.append(type(current).__name__)
        if isinstance(current, Router):
            claims = [route for route in current.routes if route.matches(copy.deepcopy(scope))[0] is Match.FULL]
            current = claims[0].endpoint if claims else current.default
        else:
            current = current.app
    return passed


@pytest.mark.parametrize(
    ("environ", "hook"),
    [
        ({"PUBLISHER_VISITS": "on"}, visits.record_page_view),
        ({"PUBLISHER_VISITS": "off"}, None),
        ({"PUBLISHER_VISITS": "on", "PUBLISHER_GATEWAY_URL": "https://gateway.example.com"}, None),
    ],
    ids=["counting on", "PUBLISHER_VISITS=off", "the cloud gateway"],
)
def test_a_page_request_passes_two_wrappers_the_headers_carrying_the_visits_hook_and_the_route_table(
    monkeypatch, environ, hook
):
    for name, value in {"PUBLISHER_GATEWAY_URL": "", **environ}.items():
        monkeypatch.setenv(name, value)
    inner = RespondingApp()
    outer = middleware.transform(inner)
    assert outer.on_page is hook  # counting adds no wrapper
    assert wrappers_passed(outer, http_scope("/")) == ["ResponseHeaders", "Router"]
    assert wrappers_passed(outer, http_scope("/about")) == ["ResponseHeaders", "Router", "PageInPlace"]
    seen, _ = call(outer.app, http_scope("/"), inner)
    assert seen["path"] == "/" and seen["raw_path"] == b"/"  # the table's default: the app, as the request came
    table = outer.app
    assert table.default is inner and not table.redirect_slashes
    door = next(route.endpoint for route in table.routes if getattr(route, "row", None) == "/_event")
    assert isinstance(door, EventChannelDoor) and door.app is inner
    wrapped = next(route.endpoint for route in table.routes if isinstance(route, Route) and route.path == "/about")
    assert isinstance(wrapped, PageInPlace) and wrapped.app is inner
    navigation = {item.route for item in PAGES.navigation() if item.route != "/"}
    assert navigation == {"/about", "/subscribe", "/contact-us"}
    books = {f"/books/{book.slug}" for book in BOOKS}
    outside = {"/subscribe/confirm", "/unsubscribe", "/admin", "/admin/enrol"}
    outside |= {"/subscribe/thanks", "/contact-us/thanks"}  # where a form's plain POST leads
    assert wrapped.routes == navigation | books | outside
    assert outer.starts_app == page_kinds.starts_app_by_route()


# --- The documented route table and the one body reader ----------------------------


ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_rows() -> set[tuple[str, str, str]]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## How a request is routed", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) != 3 or cells[0] == "Path":
            continue
        endpoint = re.match(r"`(\w+)\.py`: `([\w.]+)(?:\(\))?`", cells[2])  # the module, then a class or a function()
        assert endpoint, line
        methods = cells[1].split(",")[0]
        for path in re.findall(r"`([^`]+)`", cells[0]) or [cells[0]]:
            rows.add((path, methods, f"{endpoint.group(1)}.{endpoint.group(2)}"))
    return rows


def endpoint_name(endpoint) -> str:
    function = getattr(endpoint, "function", None)  # an ASGI function or method the table wraps
    if function is None:
        return f"{type(endpoint).__module__.rsplit('.', 1)[1]}.{type(endpoint).__name__}"
    return f"{function.__module__.rsplit('.', 1)[1]}.{function.__qualname__}"


def table_rows(tmp_path: Path) -> set[tuple[str, str, str]]:
    write_build(tmp_path)
    table = middleware.route_table(RespondingApp(), build_dir=tmp_path)
    rows = set()
    declared = PAGES.slashless_routes()
    for route in table.routes:
        name = endpoint_name(route.endpoint)  # type: ignore[attr-defined]
        if isinstance(route, routes.PathRoute):
            rows.add((route.row, "any", name))
            continue
        assert isinstance(route, Route)
        path = re.sub(r"\{\w+:path\}$", "...", route.path.removesuffix("{trailing:slashes}"))
        if isinstance(route.endpoint, routes.PageInPlace) and (path in declared or path.endswith("/...")):
            path = "every declared page"
        methods = "any" if route.methods is None else "/".join(sorted(route.methods - {"HEAD"}))
        rows.add((path, methods, name))
    return rows


def test_the_documented_route_table_is_the_route_table_every_declared_page_after_the_endpoints(tmp_path):
    assert documented_rows() == table_rows(tmp_path)
    table = middleware.route_table(RespondingApp(), build_dir=tmp_path)
    paths = [getattr(route, "path", None) for route in table.routes]
    last = table.routes[paths.index("/admin/{page:path}") + 1 :]  # every endpoint claims first
    assert all(isinstance(route.endpoint, routes.PageInPlace) for route in last)  # type: ignore[attr-defined]
    assert {route.path for route in last} == set(PAGES.slashless_routes()) - {"/"}  # type: ignore[attr-defined]


LIMIT = 10


def read(chunks: list[bytes], content_length: str | None = None, then_disconnect: bool = False):
    """``read_body`` over ``chunks`` (each one message); returns (result or exception, messages received)."""
    headers = [] if content_length is None else [(b"content-length", content_length.encode())]
    messages = [{"type": "http.request", "body": c, "more_body": n < len(chunks) - 1} for n, c in enumerate(chunks)]
    if then_disconnect:
        messages[-1]["more_body"] = True
        messages.append({"type": "http.disconnect"})
    received = 0

    async def receive():
        nonlocal received
        received += 1
        return messages[received - 1]

    try:
        result: object = asyncio.run(routes.read_body({"type": "http", "headers": headers}, receive, LIMIT))
    except (routes.BodyTooLarge, routes.ClientLeft) as exc:
        result = exc
    return result, received


SPLIT_PAST_THE_LIMIT = [b"123456", b"78901", b"never read"]


@pytest.mark.parametrize(
    ("chunks", "content_length", "then_disconnect", "expected", "received"),
    [
        ([b"12345", b"", b"67890"], "10", False, b"1234567890", 3),  # read whole from its chunks
        ([b""], None, False, b"", 1),
        ([b"x"], "11", False, routes.BodyTooLarge, 0),  # a declared length over it: refused before receiving
        # Past the limit: refused at the chunk that goes past it, whatever it declared.
        *((SPLIT_PAST_THE_LIMIT, declared, False, routes.BodyTooLarge, 2) for declared in (None, "3", "not a number")),
        ([b"123"], None, True, routes.ClientLeft, 2),  # a client that leaves before the end is told apart
    ],
)
def test_a_body_is_read_up_to_the_limit_and_refused_past_it(
    chunks, content_length, then_disconnect, expected, received
):
    result, count = read(chunks, content_length, then_disconnect)
    assert count == received
    assert isinstance(result, expected) if isinstance(expected, type) else result == expected


# --- Response headers -------------------------------------------------------------


# What the build decides today (.web/backend/page_kinds.json).
APP_ROUTES = {"/": False, "/about": False, "/subscribe": True, "/contact-us": True, "404": False}


def response_headers(scope: dict, status: int = 200, app_routes=APP_ROUTES, answer=None) -> dict[str, str]:
    headers_middleware = middleware.ResponseHeaders(RespondingApp(status, answer), ("'sha256-abc='",), app_routes)
    _, sent = call(headers_middleware, scope)
    return {k.decode().lower(): v.decode() for k, v in sent[0]["headers"]}


def csp(headers: dict[str, str]) -> dict[str, str]:
    return dict(d.split(" ", 1) for d in headers["content-security-policy"].split("; ") if " " in d)


IMAGE_VARIANTS = [images.describe(BOOKS[0].cover_image).share_url, f"/images/variants/x-{'a' * 12}-480w.avif"]
STATIC_PAGE = "public, max-age=0, s-maxage=300"  # browsers revalidate
NEVER_STORED = ["/count/buy", "/subscribe/confirm", "/unsubscribe", "/unsubscribe/"]
NEVER_STORED += ["/subscribe", "/subscribe/", "/contact-us", "/contact-us/"]  # a question and token, or an answer


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/assets/root-CSsy5Cqn.js", "public, max-age=31536000, immutable"),
        ("/assets/__reflex_global_styles-UvPD5Uoz.css", "public, max-age=31536000, immutable"),
        ("/sitemap.xml", "no-cache"),
        ("/_health", "no-cache"),
        ("/site.js", "no-cache"),  # not content-hashed
        ("/assets/unhashed.js", "no-cache"),
        ("/logo.svg", "public, max-age=86400"),
        ("/images/covers/coloring-book.svg", "public, max-age=86400"),
        ("/images/variants/unhashed.avif", "public, max-age=86400"),
        *((path, "public, max-age=31536000, immutable") for path in IMAGE_VARIANTS),
        *((path, "no-store") for path in NEVER_STORED),
        *(
            (path, STATIC_PAGE)
            for path in ["/", "/index.html", "/about", "/about/", "/about.html", "/about/index.html"]
        ),
    ],
)
def test_cache_policy_per_kind_of_response_a_static_page_kept_by_a_cdn_for_five_minutes(path, expected):
    assert response_headers(http_scope(path))["cache-control"] == expected
    error = response_headers(http_scope(path), status=422 if expected == "no-store" else 404)
    assert error["cache-control"] == ("no-store" if expected == "no-store" else "no-cache")  # never cached long


HTML = "text/html; charset=utf-8"
EVERY_KIND_OF_RESPONSE = {
    "static page": ("GET", "/", 200, HTML),
    "page that starts the app": ("GET", "/subscribe", 200, HTML),
    "not-found page": ("GET", "/no-such-page", 404, HTML),
    "page revalidated": ("GET", "/about", 304, None),  # no Content-Type, yet the browser applies its CSP
    "not-found page revalidated": ("GET", "/404.html", 304, None),
    "HEAD of a page": ("HEAD", "/contact-us", 200, HTML),
    "hashed script": ("GET", "/assets/root-CSsy5Cqn.js", 200, "text/javascript"),
    "sitemap": ("GET", "/sitemap.xml", 200, "application/xml"),
    "image": ("GET", "/logo.svg", 200, "image/svg+xml"),
    "robots.txt": ("GET", "/robots.txt", 200, "text/plain"),
    "health": ("GET", "/_health", 200, "application/json"),
    "a POST refused": ("POST", "/unsubscribe", 410, "text/plain"),
    "server error": ("GET", "/assets/root-CSsy5Cqn.js", 500, "text/plain"),
}


@pytest.mark.parametrize(
    ("method", "path", "status", "content_type"), EVERY_KIND_OF_RESPONSE.values(), ids=EVERY_KIND_OF_RESPONSE.keys()
)
def test_security_headers_on_every_response(method, path, status, content_type):
    answer = [(b"content-type", content_type.encode())] if content_type else [(b"etag", b'"v1"')]
    headers = response_headers(http_scope(path, method=method), status, answer=answer)
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert headers["permissions-policy"] == "camera=(), microphone=(), geolocation=()"
    assert headers["x-frame-options"] == "DENY"
    policy = csp(headers)
    if middleware.is_page_path(path):  # its own scripts and nothing else
        assert (policy["default-src"], policy["script-src"], policy["object-src"]) == (
            "'self'",
            "'self' 'sha256-abc='",
            "'none'",
        )
    else:  # opened directly, nothing in it runs or loads
        assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert "unsafe-eval" not in headers["content-security-policy"]
    assert "strict-transport-security" not in headers  # plain HTTP: only HTTPS brings HSTS


@pytest.mark.parametrize(
    ("path", "app_routes", "websocket"),
    [("/", APP_ROUTES, False), ("/no-such-page", APP_ROUTES, False), ("/subscribe", APP_ROUTES, True)]
    + [("/contact-us/", APP_ROUTES, True), ("/", None, True)],  # None: before any build, every page may
)
def test_only_pages_that_start_the_app_may_open_a_websocket_and_only_they_are_not_kept_by_a_cdn(
    path, app_routes, websocket
):
    headers = response_headers(http_scope(path), app_routes=app_routes)
    connect = "'self' ws://books.example.com wss://books.example.com" if websocket else "'self'"
    assert csp(headers)["connect-src"] == connect
    if path == "/" or not app_routes:
        assert headers["cache-control"] == ("no-cache" if websocket else "public, max-age=0, s-maxage=300")


def proto_scope(forwarded: str, scheme: str = "http") -> dict:
    return http_scope("/subscribe", {"x-forwarded-proto": forwarded}, scheme=scheme)


@pytest.mark.parametrize(
    ("forwarded", "scheme", "hops", "https"),
    [
        ("http", "https", 0, True),  # TLS to us directly
        ("https", "http", 1, True),  # behind a trusted proxy
        ("https", "http", 0, False),  # no proxy trusted (REFLEX_TRUSTED_PROXY_HOPS=0): anyone could send it
        ("https, http", "http", 1, False),
        ("http, https", "http", 1, True),
        ("https, http", "http", 2, True),
        ("https", "http", 2, False),  # fewer values than hops: not ours
    ],
)
def test_https_adds_hsts_and_only_secure_websockets_x_forwarded_proto_counting_through_the_trusted_proxy_hops(
    forwarded, scheme, hops, https, monkeypatch
):
    monkeypatch.setattr(reflex_config.get_config(), "trusted_proxy_hops", hops)
    headers = response_headers(proto_scope(forwarded, scheme))
    assert headers.get("strict-transport-security") == ("max-age=31536000; includeSubDomains" if https else None)
    assert ("connect-src 'self' wss://books.example.com;" in headers["content-security-policy"]) is https
    assert ("upgrade-insecure-requests" in headers["content-security-policy"]) is https


def test_websocket_scopes_pass_untouched():
    _, sent = call(
        middleware.ResponseHeaders(RespondingApp(), (), APP_ROUTES), {"type": "websocket", "path": "/_event"}
    )
    assert sent[0]["headers"] == RespondingApp().headers  # nothing added


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


# --- The event channel's door, driven by crafted clients ----------------------------


class ChannelApp:
    """socket.io: records each request that reaches it and how many tabs were open then."""

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


def crafted(path: str, kind: str = "websocket", denial: bool = True) -> dict:
    transport = "websocket" if kind == "websocket" else "polling"
    query = f"EIO=4&transport={transport}&token=crafted".encode()
    extensions = {"websocket.http.response": {}} if denial else {}
    return http_scope(path, address="198.51.100.70", type=kind, query_string=query, extensions=extensions)


def through_the_door(scope: dict) -> tuple[ChannelApp, list[dict]]:
    gate = tabs.TabGate(tabs.TabLimits(per_address=5, new_per_minute=50, per_worker=50))
    channel = ChannelApp(gate)
    table = Router(middleware.channel_routes(door_for(gate, channel)), default=channel)  # as in the route table
    incoming = [{"type": "websocket.connect"} if scope["type"] == "websocket" else {"type": "http.request"}]
    sent, _ = asgi_exchange(table, scope, incoming, then={"type": "websocket.disconnect", "code": 1000})
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
    if kind == "websocket":  # without ASGI's denial response: closed
        assert through_the_door(crafted(path, denial=False))[1] == [{"type": "websocket.close", "code": 1008}]


@pytest.mark.parametrize(
    ("path", "kind", "reaches"),
    [
        *((path, kind, (kind, "/_event/", 1)) for path in ("/_event", "/_event/") for kind in ("websocket", "http")),
        *((path, "http", ("http", path, 0)) for path in ("/", "/_events", "/_eventually/", "/assets/_event/x")),
    ],
)
def test_the_channel_is_reached_at_its_path_counted_and_other_paths_pass_uncounted(path, kind, reaches):
    channel, _ = through_the_door(crafted(path, kind))
    assert channel.seen == [reaches]  # one spelling for socket.io, one tab while open


# --- The page hook (the visits count, publisher/visits) ----------------------------


def told(path: str, status: int = 200, method: str = "GET") -> list[tuple[str, int, str]]:
    """What a page hook is told of one response (the response is sent as ever)."""
    calls: list[tuple[str, int, str]] = []
    hook = lambda scope, status, route: calls.append((scope["path"], status, route))  # noqa: E731
    _, sent = call(
        middleware.ResponseHeaders(RespondingApp(status), (), APP_ROUTES, on_page=hook), http_scope(path, method=method)
    )
    assert sent[0]["status"] == status and sent[1]["body"] == b"ok"
    return calls


@pytest.mark.parametrize("status", [200, 304, 404, 500])
@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/", "/"),
        ("/about", "/about"),
        ("/about/", "/about"),
        ("/books/first-book", "/books/first-book"),
        ("/no-such-page", "/no-such-page"),
        *((path, None) for path in ("/site.js", "/releases.atom", "/sitemap.xml", "/logo.svg", "/robots.txt")),
        ("/assets/root-CSsy5Cqn.js", None),  # a file: never heard of
    ],
)
def test_the_page_hook_is_told_each_page_gets_status_and_route_and_nothing_else(path, route, status):
    assert told(path, status) == ([] if route is None else [(path, status, route)])
    assert told(path, status, "HEAD") == told(path, status, "POST") == []  # never a view: no visits module crossed


# --- Cross-origin reads and the spellings Reflex's static files would answer ---------


def as_reflex_wraps_it(app) -> Starlette:
    """``app`` as Reflex's App serves it, each Starlette app given ``App._add_cors`` as publisher.py leaves it."""
    import publisher.publisher  # noqa: F401 (loading the app sets up what Reflex wraps it with)

    inner = Starlette(routes=[Mount("", app)])
    App._add_cors(inner)
    top = Starlette(routes=[Mount("", inner)])
    App._add_cors(top)
    return top


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items() if name.startswith("access-control-")}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "https://books.example.com", "http://localhost:3000"]
)
async def test_no_origin_is_allowed_to_read_the_sites_answers(monkeypatch, origin):
    """Reflex allows every origin, with cookies; the site's pages call only their own origin."""
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    served = as_reflex_wraps_it(middleware.ResponseHeaders(middleware.route_table(RespondingApp()), (), None))
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
    """Reflex's static files over a build's layout: ``about/index.html``, ``about.html``, the not-found page."""
    for name in ("index", "about", "admin", "admin/enrol", "404"):
        page = f"<title>{name}</title>".encode()
        (tmp_path / f"{name}.html").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.html").write_bytes(page)
        if name not in ("index", "404"):
            (tmp_path / name).mkdir(parents=True, exist_ok=True)
            (tmp_path / name / "index.html").write_bytes(page)
    return PrecompressedStaticFiles(directory=tmp_path, html=True)


async def get_from_built_site(tmp_path, path: str) -> httpx.Response:
    site = middleware.ResponseHeaders(middleware.route_table(built_site(tmp_path)), (), None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=site)) as http:
        return await http.get("http://evil.example" + path)  # "//admin" alone would name a host


# "%2e" is a dot the client does not remove: the server decodes it into the path.
ODD_SPELLINGS = ["//admin", "/%2e/admin", "/admin/%2e", "/admin/%2e/", "/admin.html", "/admin.html/", "/admin//enrol"]
ODD_SPELLINGS += ["/admin/enrol.html", "/admin/%2e%2e/admin", "//about", "/about/%2e", "/about.html", "/404.html"]
ODD_SPELLINGS += ["/index.html", "/x/%2e%2e/admin"]
SITE_PATHS = ["/about", "/about/", "/about//", "/", "/assets", "/books"]


@pytest.mark.asyncio
@pytest.mark.parametrize("dashboard", [True, False])
@pytest.mark.parametrize("path", ODD_SPELLINGS)
async def test_another_spelling_of_a_page_is_not_found_and_never_redirected_by_the_host(
    tmp_path, monkeypatch, dashboard, path
):
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "" if dashboard else "https://api.example.com")
    answer = await get_from_built_site(tmp_path, path)
    assert answer.status_code == 404 and "location" not in answer.headers
    assert "<title>admin" not in answer.text


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/admin", "/admin/", "/admin//", "/admin/enrol", "/admin/enrol/", *SITE_PATHS])
async def test_no_path_of_the_site_is_redirected_and_the_dashboards_own_spellings_get_its_page(
    tmp_path, monkeypatch, path
):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    answer = await get_from_built_site(tmp_path, path)
    assert answer.status_code in (200, 404) and "location" not in answer.headers
    if path.startswith("/admin"):  # with its headers
        assert answer.status_code == 200 and answer.text.startswith("<title>admin")
        assert answer.headers["x-robots-tag"] == "noindex, nofollow" and answer.headers["cache-control"] == "no-store"


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
