"""The kinds of route in the route table (``middleware.route_table``) and what every endpoint reads
alike: a bounded body, the visitor's address, https or not (directly or through a trusted proxy)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any

from reflex_base import config as reflex_config
from starlette.convertors import Convertor, register_url_convertor
from starlette.datastructures import Headers
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

from publisher.rules import visitor_limits


class _Slashes(Convertor[str]):
    regex = "/*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("slashes", _Slashes())


def any_slashes(path: str) -> str:
    return path + "{trailing:slashes}"


class Endpoint:
    """An ASGI callable as a route's endpoint, which Starlette would otherwise take for a request handler."""

    def __init__(self, function: Callable[[Scope, Receive, Send], Awaitable[None]]):
        self.function = function

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.function(scope, receive, send)


class PageInPlace:
    """Each prerendered page at its slash-less URL, which Reflex's static files would redirect to ``/about/``."""

    def __init__(self, app: ASGIApp, routes: Iterable[str]):
        self.app = app
        self.routes = frozenset(route for route in routes if route != "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in self.routes:
            path = scope["path"] + "/"
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


# Set in the request's scope by ReleaseFlip: the seconds until the page changes (middleware caps s-maxage).
SECONDS_TO_FLIP = "publisher.seconds_to_flip"


class ReleaseFlip:
    """A route a forthcoming book changes: until each moment (``variants``: (moment, file path)), the file
    built for it; after the last, the route as built. A comparison per book ahead, on the given clock."""

    def __init__(self, app: ASGIApp, variants: Iterable[tuple[datetime, str]], clock: Callable[[], datetime]):
        self.app = app
        self.variants = tuple(sorted(variants))
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        now = self.clock()
        for at, path in self.variants:
            if now < at:
                scope[SECONDS_TO_FLIP] = (at - now).total_seconds()
                scope = {**scope, "path": path, "raw_path": path.encode()}
                break
        await self.app(scope, receive, send)


class PathRoute(BaseRoute):
    """A route for the paths ``claims`` says yes to (any letter case, no URL's spelling); ``row``: its doc row."""

    def __init__(self, row: str, claims: Callable[[str], bool], endpoint: ASGIApp):
        self.row = row
        self.claims = claims
        self.endpoint = endpoint

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] in ("http", "websocket") and self.claims(scope["path"]):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.endpoint(scope, receive, send)


def is_odd_spelling(path: str) -> bool:
    """A path no URL of the site is spelt as, which Reflex's static files would still answer: an empty or
    dot segment (a redirect built from the Host header), a prerendered file's name (``/admin.html``) or a
    compressed twin's (``/releases.atom.br``: a browser gets it by Accept-Encoding; by name it would pass
    a release's flip)."""
    trimmed = path.rstrip("/")
    return trimmed.endswith((".html", ".br", ".gz")) or any(
        segment in ("", ".", "..") for segment in trimmed.split("/")[1:]
    )


async def answer(scope: Scope, send: Send, status: int, body: bytes, headers: list | None = None) -> None:
    """An HTTP response instead of what was asked: for a websocket, ASGI's denial response (else a close)."""
    head = [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": head})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


async def not_a_url(scope: Scope, receive: Receive, send: Send) -> None:
    await answer(scope, send, 404, b"Not found.\n")


class BodyTooLarge(Exception):
    pass


class ClientLeft(Exception):
    pass


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The body, read no further than ``limit`` bytes; a declared ``Content-Length`` over it refused unread."""
    declared = Headers(scope=scope).get("content-length", "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"Content-Length {declared}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge("the body went past the limit")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def client_address(scope: Scope) -> str:
    return visitor_limits.client_address(scope, reflex_config.get_config().trusted_proxy_hops)


def is_https(scope: Scope, trusted_proxy_hops: int | None = None) -> bool:
    """X-Forwarded-Proto believed through ``REFLEX_TRUSTED_PROXY_HOPS`` only: anyone could send it for HSTS."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    hops = reflex_config.get_config().trusted_proxy_hops if trusted_proxy_hops is None else trusted_proxy_hops
    if not hops:
        return False
    values = ",".join(Headers(scope=scope).getlist("x-forwarded-proto")).split(",")
    values = [value.strip().lower() for value in values if value.strip()]
    return len(values) >= hops and values[-hops] == "https"
