"""The route table: every HTTP endpoint that is not Reflex's own, in one Starlette ``Router`` whose
default is Reflex's app (docs/architecture.md, How a request is routed). The endpoints answer
every refusal themselves, so Starlette's own 405 and slash redirects never answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import BaseRoute, Match, NoMatchFound, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from publisher.rules import admin_access, list_links
from publisher.server import bounce_hook, buy_beacon, event_channel
from publisher.server.admin_downloads import AdminDownloads
from publisher.server.admin_sign_in import AdminSignIn, DashboardPages
from publisher.server.bounce_hook import BounceHook
from publisher.server.buy_beacon import BuyBeacon
from publisher.server.link_pages import ListLinks
from publisher.server.plain_forms import PlainForms
from publisher.web import tab_states
from publisher.web.pages import PAGES, contact, subscribe
from publisher.web.pages.registry import PageRegistry


class _Slashes(Convertor[str]):
    regex = "/*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("slashes", _Slashes())


def _any_slashes(path: str) -> str:
    return path + "{trailing:slashes}"


class _Endpoint:
    """An ASGI callable as a route's endpoint, which Starlette would otherwise take for a request handler
    (a Request in, a Response out)."""

    def __init__(self, function: Callable[[Scope, Receive, Send], Awaitable[None]]):
        self.function = function

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.function(scope, receive, send)


class PageInPlace:
    """Each prerendered page at its slash-less canonical URL: Reflex's static files would redirect
    ``/about`` to ``/about/``, and the site's published URLs have no trailing slash."""

    def __init__(self, app: ASGIApp, routes: Iterable[str]):
        self.app = app
        self.routes = frozenset(route for route in routes if route != "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in self.routes:
            scope = dict(scope)
            scope["path"] = scope["path"] + "/"
            scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)


class PathRoute(BaseRoute):
    """A route for the paths ``claims`` says yes to, where Starlette's patterns cannot say it (any letter
    case, a spelling no URL has); ``row``: its paths as docs/architecture.md's table names them."""

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
    dot segment (a redirect built from the Host header) or a prerendered file's name (``/admin.html``)."""
    trimmed = path.rstrip("/")
    return trimmed.endswith(".html") or any(segment in ("", ".", "..") for segment in trimmed.split("/")[1:])


async def not_a_url(scope: Scope, receive: Receive, send: Send) -> None:
    """404 to an odd spelling (``is_odd_spelling``), whatever page or file it names."""
    await event_channel.answer(scope, send, 404, b"Not found.\n")


def route_table(
    app: ASGIApp,
    pages: PageRegistry = PAGES,
    build_dir: Path | None = None,
    *,
    db_url: str | None = None,
    clock: Callable[[], Any] | None = None,
) -> Router:
    """``build_dir``: the production build, whose pages the server writes into; None (``reflex run``):
    no plain POST, and the link pages are the app's. ``db_url`` and ``clock``: for tests."""
    page = PageInPlace(app, pages.slashless_routes())
    links = ListLinks(page, build_dir)
    downloads = AdminDownloads(db_url)
    dashboard = DashboardPages(page)
    door = event_channel.EventChannelDoor(app, on_open=tab_states.opened, on_close=tab_states.closed)
    routes: list[BaseRoute] = [
        PathRoute("an odd spelling", is_odd_spelling, _Endpoint(not_a_url)),
        *channel_routes(door),
        *([] if build_dir is None else _form_routes(PlainForms(build_dir, page), page)),
        Route(_any_slashes(list_links.CONFIRM_PATH), links),
        Route(_any_slashes(list_links.UNSUBSCRIBE_PATH), links),
        Route(_any_slashes(bounce_hook.PATH), BounceHook(db_url)),
        Route(_any_slashes(buy_beacon.PATH), BuyBeacon()),
        Route(admin_access.EXPORT_PATH, downloads),
        Route(admin_access.AUDIT_PATH, downloads),
        Route(f"{admin_access.API_PATH}/{{ceremony:path}}", AdminSignIn(db_url, clock)),
        Route(admin_access.DASHBOARD_PATH, dashboard),
        Route(f"{admin_access.DASHBOARD_PATH}/{{page:path}}", dashboard),
        # Every other declared page at its slash-less URL.
        *(Route(route, page) for route in sorted(page.routes)),
    ]
    return Router(routes, default=app, redirect_slashes=False)


def channel_routes(door: event_channel.EventChannelDoor) -> list[BaseRoute]:
    """The event channel: its own path through the door, any other below it 404."""
    return [
        PathRoute("/_event", lambda path: event_channel.channel_route(path) == event_channel.CHANNEL, door),
        PathRoute(
            "/_event/...",
            lambda path: event_channel.channel_route(path) == event_channel.NOT_FOUND,
            _Endpoint(event_channel.not_the_channel),
        ),
    ]


def _form_routes(forms: PlainForms, page: ASGIApp) -> list[BaseRoute]:
    """The forms without the app; any other method on their paths is the page as built."""
    subscribe_path, contact_path, sent_path = (
        _any_slashes(path) for path in (subscribe.ROUTE, contact.ROUTE, subscribe.SENT_ROUTE)
    )
    return [
        Route(subscribe_path, _Endpoint(forms.post), methods=["POST"]),
        Route(contact_path, _Endpoint(forms.post), methods=["POST"]),
        Route(contact_path, _Endpoint(forms.contact_page), methods=["GET"]),
        Route(sent_path, _Endpoint(forms.subscribe_sent_page), methods=["GET"]),
        *(Route(path, page) for path in (subscribe_path, contact_path, sent_path)),
    ]
