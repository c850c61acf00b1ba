"""What every HTTP endpoint of the site reads the same way: a bounded body, the visitor's address,
and whether the visitor's connection is https (directly or through a trusted proxy)."""

from __future__ import annotations

from reflex_base import config as reflex_config
from starlette.datastructures import Headers
from starlette.types import Receive, Scope

from publisher.rules import visitor_limits


class BodyTooLarge(Exception):
    """The body went past the endpoint's limit: nothing of it is used."""


class ClientLeft(Exception):
    """The client disconnected before its body was read: there is no one to answer."""


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The request body, read no further than ``limit`` bytes (then BodyTooLarge); a declared
    ``Content-Length`` over the limit is refused before anything is received."""
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
    """The visitor's address, through the proxies ``REFLEX_TRUSTED_PROXY_HOPS`` trusts."""
    return visitor_limits.client_address(scope, reflex_config.get_config().trusted_proxy_hops)


def is_https(scope: Scope, trusted_proxy_hops: int | None = None) -> bool:
    """HTTPS to the visitor, directly or at a trusted proxy: X-Forwarded-Proto is believed through the
    hops of ``REFLEX_TRUSTED_PROXY_HOPS`` only, since anyone could send it to turn on HSTS."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    hops = reflex_config.get_config().trusted_proxy_hops if trusted_proxy_hops is None else trusted_proxy_hops
    if not hops:
        return False
    values = ",".join(Headers(scope=scope).getlist("x-forwarded-proto")).split(",")
    values = [value.strip().lower() for value in values if value.strip()]
    return len(values) >= hops and values[-hops] == "https"
