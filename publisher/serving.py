"""HTTP serving concerns of the single-port production server (Reflex's api_transformer).

Reflex prerenders ``/about`` as ``about/index.html``, and its static file server
redirects ``/about`` to ``/about/``. Our published URLs have no trailing slash
(links, canonical, sitemap), so this middleware serves them directly: the
request path is rewritten internally, with no redirect.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send


class CanonicalRouteRewrite:
    """Serve each prerendered route at its slash-less canonical URL without a redirect."""

    def __init__(self, app: ASGIApp, routes: Iterable[str]):
        self.app = app
        self.routes = frozenset(route for route in routes if route != "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in self.routes:
            scope = dict(scope)
            scope["path"] = scope["path"] + "/"
            scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)


def transform(app: ASGIApp) -> ASGIApp:
    from publisher import content

    return CanonicalRouteRewrite(app, (item.route for item in content.NAV_ITEMS))
