"""The door of Reflex's event channel: which requests reach it, from which pages, and when a tab's time
is up (limits/tabs.py)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qs

from reflex.utils import exec as reflex_exec
from reflex_base import config as reflex_config
from reflex_base import constants
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from publisher.config import settings
from publisher.config.settings import ConfigurationError, PerProcess
from publisher.limits import submits
from publisher.limits.tabs import (
    EVENT_PATH,
    FOREIGN_ORIGIN,
    ONE_ADDRESS_WARNING,
    TabGate,
    shared_gate,
)
from publisher.rules import admin_access, same_site, visitor_limits
from publisher.seldom_log import SeldomLog
from publisher.server import routes

logger = logging.getLogger(__name__)


def _token(scope: Scope) -> str:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""]
    return values[0]


def is_channel(path: str) -> bool:
    return path in (EVENT_PATH, EVENT_PATH + "/")


def is_below_channel(path: str) -> bool:
    """Another spelling at or below the channel's (not found): socket.io, mounted with an empty path, would
    answer it as the channel, and Starlette's mount is case-sensitive."""
    lowered, base = path.lower(), EVENT_PATH.lower()
    return not is_channel(path) and (lowered == base or lowered.startswith(base + "/"))


_DEV_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class ChannelOrigins:
    """The site's own pages' origins: one build serves on any host, so the request's Host, plus
    ``REFLEX_DEPLOY_URL`` for a proxy that rewrites it; in development, the dev server's port."""

    site_origin: str | None = None
    dev_port: int | None = None
    dev_hosts: tuple[str, ...] = ()

    def of(self, host: str) -> set[str]:
        ours = same_site.host_origins(host)
        if self.site_origin is not None:
            ours.add(self.site_origin)
        if self.dev_port is not None:
            for name in (*_DEV_LOOPBACK_HOSTS, *self.dev_hosts, host):
                ours |= same_site.host_origins(name, ("http",), port=self.dev_port)
        return ours

    @classmethod
    def configured(cls) -> ChannelOrigins:
        try:
            site = settings.site_url()
        except ConfigurationError:
            site = None
        if reflex_exec.is_prod_mode():
            return cls(site)
        config = reflex_config.get_config()
        port = int(config.frontend_port or constants.DefaultPorts.FRONTEND_PORT)
        dev_host = settings.current().dev_host
        return cls(site, dev_port=port, dev_hosts=(dev_host,) if dev_host else ())


def _private_or_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_private or ip.is_loopback


class OneAddressWatch:
    """Notices a site behind a reverse proxy that trusts no hop, where every visitor is one address and
    the per-address limits are one limit for everyone."""

    RECENT = 50
    AT_LEAST = 20
    WINDOW_S = 3600
    EVERY_S = 3600

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.recent: deque[tuple[float, str]] = deque(maxlen=self.RECENT)
        self.warned_at: float | None = None

    def seen(self, address: str, hops: int) -> bool:
        """One connection from ``address`` (the peer, with no hop trusted); True: warn now."""
        if hops:
            return False
        now = self.clock()
        self.recent.append((now, address))
        while self.recent and self.recent[0][0] <= now - self.WINDOW_S:
            self.recent.popleft()
        if len(self.recent) < self.AT_LEAST:
            return False
        if self.warned_at is not None and now - self.warned_at < self.EVERY_S:
            return False
        if any(other != address for _, other in self.recent) or not _private_or_loopback(address):
            return False
        self.warned_at = now
        return True


def _as_channel(scope: Scope) -> Scope:
    """The channel's one spelling for socket.io (``/_event/``), which Starlette's mount routes to it."""
    if scope["path"] == EVENT_PATH + "/":
        return scope
    return {**scope, "path": EVENT_PATH + "/", "raw_path": (EVENT_PATH + "/").encode()}


_SCHEME_HEADER = admin_access.CHANNEL_SCHEME_HEADER.encode("latin-1")


def with_connection_scheme(scope: Scope) -> Scope:
    """With the door's own ``x-publisher-scheme`` header, by which the dashboard reads the right cookie."""
    headers = [(name, value) for name, value in scope.get("headers", []) if name.lower() != _SCHEME_HEADER]
    headers.append((_SCHEME_HEADER, b"https" if routes.is_https(scope) else b"http"))
    return {**scope, "headers": headers}


class EventChannelDoor:
    def __init__(
        self,
        app: ASGIApp,
        gate: PerProcess[TabGate] = shared_gate,
        on_open: Callable[[str], Awaitable[None]] | None = None,
        on_close: Callable[[str], Awaitable[None]] | None = None,
        origins: ChannelOrigins | None = None,
        watch: OneAddressWatch | None = None,
    ):
        """``on_open``/``on_close``: told the tab's token once it is admitted, and once it closed.
        ``origins``: None reads them at the first request (each worker knows its mode by then)."""
        self.app = app
        self.gate = gate
        self.on_open = on_open
        self.on_close = on_close
        self._origins = origins
        self.watch = watch or OneAddressWatch()
        self._log = SeldomLog(logger)

    def origins(self) -> ChannelOrigins:
        if self._origins is None:
            self._origins = ChannelOrigins.configured()
        return self._origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hops = reflex_config.get_config().trusted_proxy_hops
        address = visitor_limits.client_address(scope, hops)
        headers = Headers(scope=scope)
        origins, ours = headers.getlist("origin"), self.origins().of(headers.get("host", ""))
        origin = origins[0] if origins else None
        if len(origins) > 1 or not same_site.same_origin(origin, ours, same_site.EVENT_CHANNEL):
            self._log.info("Event channel refused for %s: " + FOREIGN_ORIGIN, address)
            await routes.answer(scope, send, 403, b"This page may only be used from the site itself.\n")
            return
        scope = with_connection_scheme(_as_channel(scope))
        websocket = scope["type"] == "websocket"
        if websocket and self.watch.seen(address, hops):
            logger.warning(ONE_ADDRESS_WARNING)
        gate = self.gate.get()
        token = _token(scope) if websocket else ""
        tab, refusal = await gate.admit(submits.address_key(address), token)
        if tab is None:
            self._log.info("Event channel refused for %s: %s", address, refusal)
            await routes.answer(
                scope, send, 429, b"Too many open pages; try again in a few minutes.\n", [(b"retry-after", b"60")]
            )
            return
        try:
            if not websocket:  # socket.io's polling: counted while it runs, no tab of its own
                await self.app(scope, receive, send)
                return
            if self.on_open is not None:
                await self.on_open(token)
            await self._serve(scope, receive, send, gate.limits.max_lifetime_s)
        finally:
            await gate.release(tab)
            if websocket and self.on_close is not None:
                await self.on_close(token)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, lifetime_s: float) -> None:
        """The websocket, closed ``lifetime_s`` after it was accepted: the client gets a close (its socket.io
        reconnects by itself) and socket.io a disconnect, as if the client had left."""
        loop = asyncio.get_running_loop()
        expired: asyncio.Future[None] = loop.create_future()
        closing: list[asyncio.Task] = []
        timer: list[asyncio.TimerHandle] = []
        pending: list[asyncio.Future] = []  # the client's receive in progress (kept across calls)

        async def close_client() -> None:
            with contextlib.suppress(Exception):  # the client may be gone already
                await send({"type": "websocket.close", "code": 1001})

        def expire() -> None:
            if not expired.done():
                expired.set_result(None)
                # The client's receive in progress is given up first: Granian sends a close only
                # once nobody waits on the connection (with a receive pending it never goes out).
                for task in pending:
                    task.cancel()
                closing.append(asyncio.ensure_future(close_client()))

        async def send_until_closed(message: Message) -> None:
            if expired.done():
                return
            if message["type"] == "websocket.accept" and not timer:
                timer.append(loop.call_later(lifetime_s, expire))
            await send(message)

        async def receive_until_closed() -> Message:
            if not expired.done():
                if not pending:
                    pending.append(asyncio.ensure_future(receive()))
                await asyncio.wait((pending[0], expired), return_when=asyncio.FIRST_COMPLETED)
                if pending[0].done() and not pending[0].cancelled():
                    return pending.pop().result()
            return {"type": "websocket.disconnect", "code": 1001}

        try:
            await self.app(scope, receive_until_closed, send_until_closed)
        finally:
            for handle in timer:
                handle.cancel()
            for task in closing:
                await task
            for receiving in pending:
                receiving.cancel()
