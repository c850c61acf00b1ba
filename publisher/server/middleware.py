"""Reflex's api_transformer: every response gets the security headers and a cache policy for its kind,
a page a Content-Security-Policy allowing only what the site uses. It also tells the visits hook
each page's status, so counting adds no third wrapper, and with counting off costs nothing."""

from __future__ import annotations

import base64
import hashlib
import logging
import mimetypes
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from publisher import visits
from publisher.config import settings
from publisher.content import images
from publisher.seldom_log import SeldomLog
from publisher.server import admin_sign_in, buy_beacon, requests, routes
from publisher.server.link_pages import LINK_PAGES
from publisher.server.plain_forms import NO_STORE_ROUTES
from publisher.web import feed, page_kinds
from publisher.web.pages import PAGES
from publisher.web.pages.registry import PageRegistry
from publisher.web.states.contact_state import pages_carry_a_question

logger = logging.getLogger(__name__)

BUILD_DIR = Path(".web") / "build" / "client"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
NO_STORE = "no-store"
IMAGE_CACHE = "public, max-age=86400"
# Static pages: a CDN may serve them for five minutes without asking (s-maxage),
# browsers revalidate every time (a 304 while unchanged), so a deploy shows at once
# to visitors and within five minutes through a CDN. Pages that start the app stay
# "no-cache": their scripts must match the backend that answers them.
STATIC_PAGE_CACHE = "public, max-age=0, s-maxage=300"
# Scripts, styles, images and JSON are never documents the site renders: if one is
# opened directly, nothing in it may run or load.
RESOURCE_POLICY = "default-src 'none'; frame-ancestors 'none'"
# The release feed: Python's table of types does not know .atom, and the static files
# take the Content-Type from it.
mimetypes.add_type(feed.CONTENT_TYPE, ".atom")
_IMAGE_SUFFIXES = (".svg", ".png", ".ico", ".jpg", ".jpeg", ".webp", ".avif")
# Vite's output: /assets/<name>-<hash>.<ext>, content-addressed.
_HASHED_ASSET = re.compile(r"^/assets/[^/]+-[A-Za-z0-9_-]{8,}\.(?:js|css|mjs|woff2?|svg|png|webp)$")
_INLINE_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
_SCRIPT_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]*)""", re.I)
# text/x-app-boot: the inert boot module that assets/site.js re-inserts as a module.
_JAVASCRIPT_TYPES = frozenset({"", "module", "text/javascript", "application/javascript", "text/x-app-boot"})


def _is_executable(attrs: str) -> bool:
    declared = _SCRIPT_TYPE.search(attrs)
    return (declared.group(1).lower() if declared else "") in _JAVASCRIPT_TYPES


# content/images.py: each name carries its source's content hash.
_IMAGE_VARIANT = re.compile(rf"^{re.escape(images.VARIANTS_URL)}/[^/]+-[0-9a-f]{{12}}-(?:\d+w|share)\.[a-z]+$")


def cache_control(path: str) -> str:
    if admin_sign_in.is_admin_path(path):
        return NO_STORE  # the dashboard: nothing of it is kept by a browser or a proxy
    if (path.rstrip("/") or "/") in NO_STORE_ROUTES:
        return NO_STORE  # the form pages: a question and its token per response, or the server's answer
    if path.rstrip("/") == buy_beacon.PATH:
        return NO_STORE  # the buy beacon's empty answer: nothing in it is worth keeping
    if (path.rstrip("/") or "/") in LINK_PAGES:
        return NO_STORE  # a list link's page: the masked address and the link's token, written per response
    if _HASHED_ASSET.match(path) or _IMAGE_VARIANT.match(path):
        return IMMUTABLE
    if path.lower().endswith(_IMAGE_SUFFIXES):
        return IMAGE_CACHE
    return REVALIDATE


def inline_script_hashes(build_dir: Path = BUILD_DIR) -> list[str]:
    """CSP sources ('sha256-...') for every inline script in the prerendered pages."""
    hashes: set[str] = set()
    for html_file in sorted(build_dir.rglob("*.html")):
        for match in _INLINE_SCRIPT.finditer(html_file.read_text(encoding="utf-8")):
            attrs, body = match.group("attrs"), match.group("body")
            if "src=" in attrs or not _is_executable(attrs) or not body:
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
    """Pages (and the 404 page) are extension-less or .html paths. Decided from the request, not the
    response: a 304 revalidation carries no Content-Type, yet the browser applies its CSP to the page."""
    last = path.rsplit("/", 1)[-1]
    return "." not in last or last.endswith(".html")


PageHook = Callable[[Scope, int], None]


class ResponseHeaders:
    def __init__(
        self,
        app: ASGIApp,
        script_hashes: Iterable[str],
        starts_app: Mapping[str, bool] | None,
        on_page: PageHook | None = None,
    ):
        """``starts_app``: route -> whether its page starts the app; None (no build yet): every page may.
        ``on_page``: told each page document's status before its first byte; it must not block."""
        self.app = app
        self.script_hashes = tuple(script_hashes)
        self.starts_app = None if starts_app is None else dict(starts_app)
        self.on_page = on_page
        self._log = SeldomLog(logger)  # a fault on every request must not flood the log

    def _tell_hook(self, hook: PageHook, scope: Scope, status: int) -> None:
        """The hook, which never breaks or delays the page it is told about."""
        try:
            hook(scope, status)
        except Exception:  # noqa: BLE001 - counting is never worth a page (logged, at most once a minute)
            self._log.exception("The page hook failed; the page was sent (logged at most once a minute)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        https = requests.is_https(scope)
        host = Headers(scope=scope).get("host", "localhost")
        document = is_page_path(scope["path"])
        route = page_kinds.page_route(scope["path"]) if document else ""
        starts_app = self.starts_app is None or self.starts_app.get(route, False)
        policy = content_security_policy(host, https, self.script_hashes, websocket=starts_app)
        cache = cache_control(scope["path"])
        admin = admin_sign_in.is_admin_path(scope["path"])
        if document and not admin and self.starts_app is not None and self.starts_app.get(route) is False:
            cache = STATIC_PAGE_CACHE
        on_page = self.on_page if document else None

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                if on_page is not None:
                    self._tell_hook(on_page, scope, message["status"])
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = policy if document else RESOURCE_POLICY
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
                headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=()"
                headers["X-Frame-Options"] = "DENY"
                headers["Cache-Control"] = cache if message["status"] < 400 or cache == NO_STORE else REVALIDATE
                if admin:
                    headers["X-Robots-Tag"] = "noindex, nofollow"
                if https:
                    headers["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def transform(app: ASGIApp, pages: PageRegistry = PAGES) -> ASGIApp:
    # The production build's pages, which the server writes into (server/plain_forms.py,
    # server/link_pages.py); not `reflex run`'s, which the browser renders.
    build_dir = BUILD_DIR if pages_carry_a_question() else None
    # Counting off (PUBLISHER_VISITS=off, or no embedded gateway): no hook, nothing done per request.
    on_page = visits.record_page_view if settings.current().visits_on else None
    return ResponseHeaders(
        routes.route_table(app, pages, build_dir),
        inline_script_hashes(),
        page_kinds.starts_app_by_route(),
        on_page=on_page,
    )
