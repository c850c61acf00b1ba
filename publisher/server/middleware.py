"""Reflex's api_transformer: the route table, and around it the security headers and a cache policy for
each kind of response, a page's Content-Security-Policy allowing only what the site uses. It tells
the visits hook each page's status, so counting adds no third wrapper."""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reflex.utils import exec as reflex_exec
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import BaseRoute, Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from publisher import visits
from publisher.config import settings
from publisher.content import images
from publisher.content.books import BOOKS
from publisher.content.models import Book
from publisher.limits import tabs
from publisher.rules import admin_access, list_rules
from publisher.server import bounce_hook, buy_beacon, event_channel, routes
from publisher.server.admin_sign_in import AdminSignIn
from publisher.server.bounce_hook import BounceHook
from publisher.server.buy_beacon import BuyBeacon
from publisher.server.link_pages import LINK_PAGES, ListLinks
from publisher.server.plain_forms import FORMS, PlainForms
from publisher.server.routes import Endpoint, PageInPlace, PathRoute, ReleaseFlip, any_slashes
from publisher.web import feed, page_kinds
from publisher.web.page_kinds import VARIANT_PREFIX
from publisher.web.pages import PAGES, contact, subscribe
from publisher.web.pages.registry import PageRegistry

BUILD_DIR = Path(".web") / "build" / "client"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
NO_STORE = "no-store"
IMAGE_CACHE = "public, max-age=86400"
# Static pages: a CDN may keep them five minutes (before a release flips a page, no longer than until
# then), browsers revalidate; pages that start the app stay "no-cache": their scripts must match the backend.
CDN_KEEPS_S = 300
STATIC_PAGE_CACHE = f"public, max-age=0, s-maxage={CDN_KEEPS_S}"
# Scripts, styles, images and JSON opened directly: nothing in them may run or load.
RESOURCE_POLICY = "default-src 'none'; frame-ancestors 'none'"
# The release feed: the static files take the Content-Type from Python's table, which lacks .atom.
mimetypes.add_type(feed.CONTENT_TYPE, ".atom")
_IMAGE_SUFFIXES = (".svg", ".png", ".ico", ".jpg", ".jpeg", ".webp", ".avif")
_HASHED_ASSET = re.compile(r"^/assets/[^/]+-[A-Za-z0-9_-]{8,}\.(?:js|css|mjs|woff2?|svg|png|webp)$")
_INLINE_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
_SCRIPT_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]*)""", re.I)
# text/x-app-boot: the inert boot module that assets/site.js re-inserts as a module.
_JAVASCRIPT_TYPES = frozenset({"", "module", "text/javascript", "application/javascript", "text/x-app-boot"})
_IMAGE_VARIANT = re.compile(rf"^{re.escape(images.VARIANTS_URL)}/[^/]+-[0-9a-f]{{12}}-(?:\d+w|share)\.[a-z]+$")


def is_admin_path(path: str) -> bool:
    return path == admin_access.DASHBOARD_PATH or path.startswith(admin_access.DASHBOARD_PATH + "/")


# The dashboard, the form pages (a question and its token, or the server's answer), the beacon's
# empty answer, a list link's page (the masked address and the link's token): never kept.
_NEVER_KEPT = frozenset({*FORMS, buy_beacon.PATH, *LINK_PAGES})


def cache_control(path: str) -> str:
    if is_admin_path(path) or (path.rstrip("/") or "/") in _NEVER_KEPT:
        return NO_STORE
    if _HASHED_ASSET.match(path) or _IMAGE_VARIANT.match(path):
        return IMMUTABLE
    if path.lower().endswith(_IMAGE_SUFFIXES):
        return IMAGE_CACHE
    return REVALIDATE


def inline_script_hashes(build_dir: Path = BUILD_DIR) -> list[str]:
    hashes: set[str] = set()
    for html_file in sorted(build_dir.rglob("*.html")):
        for match in _INLINE_SCRIPT.finditer(html_file.read_text(encoding="utf-8")):
            attrs, body = match.group("attrs"), match.group("body")
            declared = _SCRIPT_TYPE.search(attrs)
            executable = (declared.group(1).lower() if declared else "") in _JAVASCRIPT_TYPES
            if "src=" in attrs or not executable or not body:
                continue  # external, or data such as application/ld+json (never executed)
            digest = hashlib.sha256(body.encode("utf-8")).digest()
            hashes.add(f"'sha256-{base64.b64encode(digest).decode()}'")
    return sorted(hashes)


_HOST = re.compile(r"^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$")


def content_security_policy(host: str, https: bool, script_hashes: Iterable[str], websocket: bool = True) -> str:
    if not _HOST.match(host):
        host = ""  # a malformed Host header must not write into the policy
    if not websocket or not host:
        websocket_sources = ""
    else:
        websocket_sources = f"wss://{host}" if https else f"ws://{host} wss://{host}"
    directives = [
        "default-src 'self'",
        "script-src 'self' " + " ".join(script_hashes),
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        f"connect-src 'self' {websocket_sources}",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
    if https:
        directives.append("upgrade-insecure-requests")
    return "; ".join(d.strip() for d in directives)


def is_page_path(path: str) -> bool:
    """Extension-less or .html: decided from the request, as a 304 carries no Content-Type."""
    last = path.rsplit("/", 1)[-1]
    return "." not in last or last.endswith(".html")


PageHook = Callable[[Scope, int, str], None]


class ResponseHeaders:
    def __init__(
        self,
        app: ASGIApp,
        script_hashes: Iterable[str],
        starts_app: Mapping[str, bool] | None,
        on_page: PageHook | None = None,
    ):
        """``starts_app``: route -> whether its page starts the app; None (no build yet): every page may.
        ``on_page``: told each GET of a page's status and route before its first byte; must not block or raise."""
        self.app = app
        self.script_hashes = tuple(script_hashes)
        self.starts_app = None if starts_app is None else dict(starts_app)
        self.on_page = on_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        https = routes.is_https(scope)
        host = Headers(scope=scope).get("host", "localhost")
        document = is_page_path(scope["path"])
        route = page_kinds.page_route(scope["path"]) if document else ""
        starts_app = self.starts_app is None or self.starts_app.get(route, False)
        policy = content_security_policy(host, https, self.script_hashes, websocket=starts_app)
        cache = cache_control(scope["path"])
        admin = is_admin_path(scope["path"])
        if document and not admin and self.starts_app is not None and self.starts_app.get(route) is False:
            cache = STATIC_PAGE_CACHE
        if scope["method"] == "POST":  # a form's answer (a book's waitlist's too, at its page's URL)
            cache = NO_STORE
        on_page = self.on_page if document and scope["method"] == "GET" else None  # only a GET is a view

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                if on_page is not None:
                    on_page(scope, message["status"], route)
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = policy if document else RESOURCE_POLICY
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
                headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=()"
                headers["X-Frame-Options"] = "DENY"
                headers["Cache-Control"] = cache if message["status"] < 400 or cache == NO_STORE else REVALIDATE
                if cache == STATIC_PAGE_CACHE and routes.SECONDS_TO_FLIP in scope:
                    kept = min(CDN_KEEPS_S, int(scope[routes.SECONDS_TO_FLIP]))
                    headers["Cache-Control"] = cache.replace(f"s-maxage={CDN_KEEPS_S}", f"s-maxage={kept}")
                if admin:
                    headers["X-Robots-Tag"] = "noindex, nofollow"
                if https:
                    headers["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def route_table(
    app: ASGIApp,
    pages: PageRegistry = PAGES,
    build_dir: Path | None = None,
    *,
    db_url: str | None = None,
    clock: Callable[[], Any] | None = None,
    books: Sequence[Book] = BOOKS,
) -> Router:
    """Every HTTP endpoint that is not Reflex's own (docs/architecture.md, How a request is routed), Reflex's
    app the default. ``build_dir``: the production build the server writes into; None (``reflex run``):
    no plain POST, the link pages are the app's. ``db_url``, ``clock`` (aware) and ``books``: for tests."""
    page = PageInPlace(app, pages.slashless_routes())
    flips = release_flips(books)
    now = clock or (lambda: datetime.now(UTC))
    forms = PlainForms(build_dir, page, books, now)  # a waitlist's POST even without a build (`reflex run`)
    links = ListLinks(page, build_dir)
    dashboard = AdminSignIn(page, db_url, clock)
    door = event_channel.EventChannelDoor(app, on_open=tabs.opened, on_close=tabs.closed)
    table: list[BaseRoute] = [
        PathRoute("an odd spelling", routes.is_odd_spelling, Endpoint(routes.not_a_url)),
        # A page as it was before a release (``page_kinds.variant_route``): served only at its page's URL.
        PathRoute("/_before/...", lambda path: path.lower().startswith(VARIANT_PREFIX), Endpoint(routes.not_a_url)),
        *([] if build_dir is None else _form_routes(forms, page)),
        *(Route(any_slashes(path), Endpoint(forms.post), methods=["POST"]) for path in forms.waitlists),
        *channel_routes(door),
        Route(any_slashes(list_rules.CONFIRM_PATH), links),
        Route(any_slashes(list_rules.UNSUBSCRIBE_PATH), links),
        Route(any_slashes(bounce_hook.PATH), BounceHook(db_url)),
        Route(any_slashes(buy_beacon.PATH), BuyBeacon()),
        Route(admin_access.DASHBOARD_PATH, dashboard),
        Route(f"{admin_access.DASHBOARD_PATH}/{{page:path}}", dashboard),
        *(Route(any_slashes(route), ReleaseFlip(page, flips[route], now)) for route in sorted(flips)),
        *(Route(route, page) for route in sorted(page.routes - flips.keys())),
    ]
    return Router(table, default=app, redirect_slashes=False)


def release_flips(books: Iterable[Book]) -> dict[str, list[tuple[datetime, str]]]:
    """Each route a forthcoming book changes (Home, its page, the feed) -> (the book's moment, the file
    built for the route until then) for each such book."""
    flips: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
    for book in books:
        for route in ("/", book.page_path, feed.FEED_PATH):
            built = page_kinds.variant_route(book.slug, route) + ("" if route == feed.FEED_PATH else "/")
            if book.release:
                flips[route].append((book.release.utc, built))
    return flips


def channel_routes(door: event_channel.EventChannelDoor) -> list[BaseRoute]:
    """The event channel: its own path through the door, any other below it 404."""
    return [
        PathRoute("/_event", event_channel.is_channel, door),
        PathRoute("/_event/...", event_channel.is_below_channel, Endpoint(routes.not_a_url)),
    ]


def _form_routes(forms: PlainForms, page: ASGIApp) -> list[BaseRoute]:
    """The forms without the app; any other method on their paths is the page as built."""
    subscribe_path, contact_path, sent_path = (
        any_slashes(path) for path in (subscribe.ROUTE, contact.ROUTE, subscribe.SENT_ROUTE)
    )
    return [
        Route(subscribe_path, Endpoint(forms.post), methods=["POST"]),
        Route(contact_path, Endpoint(forms.post), methods=["POST"]),
        Route(contact_path, Endpoint(forms.contact_page), methods=["GET"]),
        Route(sent_path, Endpoint(forms.subscribe_sent_page), methods=["GET"]),
        *(Route(path, page) for path in (subscribe_path, contact_path, sent_path)),
    ]


def transform(app: ASGIApp, pages: PageRegistry = PAGES) -> ASGIApp:
    # The production build's pages, which the server writes into; not `reflex run`'s, which the browser renders.
    build_dir = BUILD_DIR if reflex_exec.is_prod_mode() else None
    on_page = visits.record_page_view if settings.current().visits_on else None  # counting off: no hook
    return ResponseHeaders(
        route_table(app, pages, build_dir),
        inline_script_hashes(),
        page_kinds.starts_app_by_route(),
        on_page=on_page,
    )
