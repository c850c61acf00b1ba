"""What one page view or buy press adds to the worker's tally: on the event loop, no await, no I/O.
The address and user agent become the day's visitor id and are forgotten when the call returns;
what one address adds in a day is capped (``AddressDays``)."""

from __future__ import annotations

import hashlib
import secrets
from array import array
from collections.abc import Callable, Iterable
from datetime import date, datetime

from starlette.types import Scope

from publisher.rules import visit_rules, visitor_limits
from publisher.rules.visit_rules import VisitKind
from publisher.storage.tables import utc_now
from publisher.visits.salts import DaySalts
from publisher.visits.tally import Tally

# The addresses a worker follows in a day (about 300 bytes each, 530 with all its user agents and
# labels: 50 MB at the most); past them, a new address's views count as a bot's.
ADDRESSES_PER_DAY = 100_000


def _unrouted(path: str) -> str:
    return path


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name, read once: a dict looks one up in a step, where
    Starlette's Headers scans the list at each look-up."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}


class _FromAddress:
    """One address's day: its views, and the hashes of the user agents and labels it brought."""

    __slots__ = ("agents", "labels", "views")

    def __init__(self) -> None:
        self.views = 0
        self.agents = array("I")
        self.labels = array("I")


def _among_first(hashes: array, value: int, cap: int) -> bool:
    """Whether ``value`` is one of ``hashes``, added while there are fewer than ``cap``."""
    if value in hashes:
        return True
    if len(hashes) >= cap:
        return False
    hashes.append(value)
    return True


class AddressDays:
    """What each address (its /64 for IPv6) added today in this worker, each capped; kept as hashes under
    a key of the process's own, never written, forgotten when the day changes."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(16)
        self._day: date | None = None
        self._addresses: dict[int, _FromAddress] = {}

    def _hash(self, text: str, size: int = 4) -> int:
        """Four bytes tell an address's few user agents or labels apart; its address takes eight."""
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=self._key, digest_size=size).digest()
        return int.from_bytes(digest, "big")

    def admit(self, day: date, address: str, user_agent: str) -> _FromAddress | None:
        """The address's day when this view is looked at; None (a bot's view, not even judged) past its first
        views or user agents of the day, or from a new address past ADDRESSES_PER_DAY."""
        if day != self._day:
            self._day, self._addresses = day, {}
        key = self._hash(visitor_limits.address_key(address), 8)
        sender = self._addresses.get(key)
        if sender is None and len(self._addresses) < ADDRESSES_PER_DAY:
            sender = self._addresses[key] = _FromAddress()
        if sender is None or sender.views >= visit_rules.VIEWS_PER_ADDRESS:
            return None
        if not _among_first(sender.agents, self._hash(user_agent), visit_rules.VISITORS_PER_ADDRESS):
            return None
        sender.views += 1
        return sender

    def label(self, sender: _FromAddress, label: str) -> str:
        """``label`` when the site knows it or it is one of the sender's first LABELS_PER_ADDRESS of the
        day; else "(other)"."""
        if label in visit_rules.KNOWN_SOURCES or label == visit_rules.OTHER:
            return label
        brought = _among_first(sender.labels, self._hash(label), visit_rules.LABELS_PER_ADDRESS)
        return label if brought else visit_rules.OTHER


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
        self.addresses = AddressDays()

    def count_views_on(self, routes: Iterable[str], route_of: Callable[[str], str]) -> None:
        """The page routes whose views count, and how a request's path names its route ('/about/' and
        '/about.html' are '/about')."""
        self.pages = frozenset(routes)
        self.route_of = route_of

    def _visitor(self, address: str, user_agent: str, moment: datetime) -> bytes | None:
        salt = self.salts.of(visit_rules.day_of(moment))
        if salt is None:
            return None  # no salt yet (the store away at start or at midnight): a view, no visitor
        return visit_rules.visitor_id(salt, address, user_agent)

    def page_view(self, scope: Scope, status: int) -> None:
        """Count a page's response when it is a view: the site, the page, the minute, and on a landing (no
        Referer, or another site's) the source and the campaign tag."""
        headers = _headers(scope)
        route = self.route_of(scope["path"])
        if not visit_rules.counts_as_view(scope["method"], status, route, self.pages, headers):
            return
        now = self.clock()
        day = visit_rules.day_of(now)
        address = visitor_limits.client_address(scope, self.trusted_proxy_hops)
        # Past its views or user agents of the day, an address's views are not even judged: what
        # the bot check costs one address in a day is bounded too.
        user_agent = headers.get("user-agent", "")
        sender = self.addresses.admit(day, address, user_agent)
        if sender is None or visit_rules.is_bot(user_agent):
            self.tally.bot(day)
            return
        visitor = self._visitor(address, user_agent, now)
        self.tally.view(day, VisitKind.SITE, "", visitor)
        self.tally.view(day, VisitKind.PAGE, visit_rules.stored_label(VisitKind.PAGE, route), visitor)
        if visitor is not None:
            self.tally.seen_only(day, VisitKind.MINUTE, visit_rules.minute_key(now), visitor)
        # A Referer naming the host this request came to is a move between our own pages.
        source = visit_rules.source_of(headers.get("referer", ""), [headers.get("host", "")])
        if source is None:
            return  # from one of our own pages: not a landing
        campaign = visit_rules.campaign_of(bytes(scope.get("query_string", b"")).decode("latin-1"))
        for kind, label in ((VisitKind.SOURCE, source), (VisitKind.CAMPAIGN, campaign)):
            if label is not None:
                label = self.addresses.label(sender, visit_rules.stored_label(kind, label))
                self.tally.view(day, kind, label, visitor)

    def buy(self, scope: Scope, slug: str, store: str) -> None:
        """A press of ``slug``'s buy button towards ``store`` (a host): one view per press, the presser that
        day's visitor of the key "slug host"."""
        now = self.clock()
        address = visitor_limits.client_address(scope, self.trusted_proxy_hops)
        visitor = self._visitor(address, _headers(scope).get("user-agent", ""), now)
        self.tally.view(visit_rules.day_of(now), VisitKind.BUY, f"{slug} {store}", visitor)
