"""What one page view or buy press adds to the worker's tally, decided on the request path.

Everything here runs at a page's response start (server/middleware.py's hook) or in the buy
beacon, on the event loop: no await, no I/O, microseconds. The address and the user agent are
read from the request, turned into the day's visitor id under the cached salt, and forgotten
when the call returns; the tally keeps only routes, sources, campaigns and visitor ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from starlette.types import Scope

from publisher.rules import visit_rules, visitor_limits
from publisher.storage.tables import utc_now
from publisher.visits.salts import DaySalts
from publisher.visits.tally import Tally
from publisher.visits.visitor_sets import MINUTE_KIND, minute_key

SITE_KIND, PAGE_KIND, SOURCE_KIND, CAMPAIGN_KIND, BUY_KIND = "site", "page", "source", "campaign", "buy"
# The site's count has one key: the whole site.
SITE_KEY = ""


def _unrouted(path: str) -> str:
    return path


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by their lower-case names (as ASGI gives them), read once: a dict
    looks one up in a step, where Starlette's Headers scans the list at each look-up."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}


class Recorder:
    """One worker's counting: its tally, the salts it has, its clock and the pages that count."""

    def __init__(
        self,
        tally: Tally,
        salts: DaySalts,
        trusted_proxy_hops: int,
        clock: Callable[[], datetime] = utc_now,
    ):
        self.tally = tally
        self.salts = salts
        self.trusted_proxy_hops = trusted_proxy_hops
        self.clock = clock
        self.pages: frozenset[str] = frozenset()
        self.route_of: Callable[[str], str] = _unrouted

    def count_views_on(self, routes: Iterable[str], route_of: Callable[[str], str]) -> None:
        """The declared page routes whose views count, and how a request's path names its route
        (web/page_kinds.page_route: '/about/' and '/about.html' are '/about')."""
        self.pages = frozenset(routes)
        self.route_of = route_of

    def _visitor(self, scope: Scope, headers: Mapping[str, str], moment: datetime) -> bytes | None:
        salt = self.salts.of(visit_rules.day_of(moment))
        if salt is None:
            return None  # no salt yet (the store away at start or at midnight): a view, no visitor
        address = visitor_limits.client_address(scope, self.trusted_proxy_hops)
        return visit_rules.visitor_id(salt, address, headers.get("user-agent", ""))

    def page_view(self, scope: Scope, status: int) -> None:
        """Count a page's response when it is a view: the site, the page, the minute, and on a
        landing (no Referer, or another site's) the source and the campaign tag."""
        headers = _headers(scope)
        route = self.route_of(scope["path"])
        if not visit_rules.counts_as_view(scope["method"], status, route, self.pages, headers):
            return
        now = self.clock()
        day = visit_rules.day_of(now)
        if visit_rules.is_bot(headers.get("user-agent", "")):
            self.tally.bot(day)
            return
        visitor = self._visitor(scope, headers, now)
        self.tally.view(day, SITE_KIND, SITE_KEY, visitor)
        self.tally.view(day, PAGE_KIND, route, visitor)
        if visitor is not None:
            self.tally.seen_only(day, MINUTE_KIND, minute_key(now), visitor)
        # A Referer naming the host this request came to is a move between our own pages.
        source = visit_rules.source_of(headers.get("referer", ""), [headers.get("host", "")])
        if source is None:
            return  # from one of our own pages: not a landing
        self.tally.view(day, SOURCE_KIND, source, visitor)
        campaign = visit_rules.campaign_of(bytes(scope.get("query_string", b"")).decode("latin-1"))
        if campaign is not None:
            self.tally.view(day, CAMPAIGN_KIND, campaign, visitor)

    def buy(self, scope: Scope, slug: str, store: str) -> None:
        """A press of ``slug``'s buy button towards ``store`` (a host): one view per press, and the
        presser as that day's visitor of the key "slug host"."""
        now = self.clock()
        visitor = self._visitor(scope, _headers(scope), now)
        self.tally.view(visit_rules.day_of(now), BUY_KIND, f"{slug} {store}", visitor)
