"""What one page view or buy press adds to the worker's tally: on the event loop, no await, no I/O.
The address and user agent become the day's visitor id, forgotten when the call returns."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date, datetime, time, timedelta

from starlette.types import Scope

from publisher.rules import visit_rules, visitor_limits
from publisher.rules.visit_rules import OTHER, VisitKind
from publisher.storage.tables import utc_now
from publisher.storage.visit_counts import Batch

# The addresses a worker follows in a day (about 300 bytes each, 530 with all its user agents and
# labels: 50 MB at the most); past them, a new address's views count as a bot's.
ADDRESSES_PER_DAY = 100_000
# Past this many distinct keys of one kind in one flush, new keys count as "(other)".
MAX_KEYS_PER_FLUSH = 1000
# From this time of a day (UTC) the worker fetches the next day's salt too.
FETCH_TOMORROW_FROM = time(23, 55)
# How long one fetch may take before the worker goes on without it (views without visitors).
SALT_WAIT_S = 2.0


class DaySalts:
    """The salts this worker has fetched, read on the request path without a wait."""

    def __init__(self) -> None:
        self._salts: dict[date, bytes] = {}

    def of(self, day: date) -> bytes | None:
        return self._salts.get(day)

    async def refresh(
        self, salt_for: Callable[[date, datetime], bytes | None], now: datetime, wait_s: float = SALT_WAIT_S
    ) -> None:
        """A fetch (``visit_counts.salt_for``, in a thread) that fails or takes longer than ``wait_s`` raises
        (the caller logs it and tries again next turn); what was fetched before it is kept."""
        today = visit_rules.day_of(now)
        self._salts = {day: salt for day, salt in self._salts.items() if day >= today - timedelta(days=1)}
        wanted = [today]
        if now.time() >= FETCH_TOMORROW_FROM:
            wanted.append(today + timedelta(days=1))
        for day in wanted:
            if day not in self._salts:
                salt = await asyncio.wait_for(asyncio.to_thread(salt_for, day, now), wait_s)
                if salt is not None:
                    self._salts[day] = salt


class Tally:
    """Views and seen visitors of one flush window, on the event loop only (no lock). Past MAX_KEYS_PER_FLUSH
    keys of a kind, new keys fold into "(other)": forged tags cannot grow the worker's memory."""

    def __init__(self) -> None:
        self._batch = Batch()
        self._keys_per_kind: Counter[str] = Counter()

    def _capped(self, day: date, kind: str, key: str) -> tuple[date, str, str]:
        counted = (day, kind, key)
        if counted in self._batch.views:
            return counted
        if self._keys_per_kind[kind] >= MAX_KEYS_PER_FLUSH:
            return (day, kind, OTHER)
        self._keys_per_kind[kind] += 1
        return counted

    def view(self, day: date, kind: str, key: str, visitor: bytes | None) -> None:
        """One view of ``key``, by ``visitor`` (None when today's salt is not known yet)."""
        counted = self._capped(day, kind, key)
        self._batch.views[counted] = self._batch.views.get(counted, 0) + 1
        if visitor is not None:
            self._batch.seen.add((*counted, visitor))

    def seen_only(self, day: date, kind: str, key: str, visitor: bytes) -> None:
        """A visitor seen under ``key`` without a view counted (the minute, for visitors now)."""
        self._batch.seen.add((day, kind, key, visitor))

    def take(self) -> Batch:
        batch, self._batch = self._batch, Batch()
        self._keys_per_kind = Counter()
        return batch

    def is_empty(self) -> bool:
        return not self._batch.views and not self._batch.seen


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name, read once: a dict looks one up in a step, where
    Starlette's Headers scans the list at each look-up."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}


class _FromAddress:
    __slots__ = ("agents", "labels", "views")

    def __init__(self) -> None:
        self.views = 0
        self.agents = array("I")
        self.labels = array("I")


def _among_first(hashes: array, value: int, cap: int) -> bool:
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
    def __init__(self, trusted_proxy_hops: int, clock: Callable[[], datetime] = utc_now):
        self.tally = Tally()
        self.salts = DaySalts()
        self.trusted_proxy_hops = trusted_proxy_hops
        self.clock = clock
        self.pages: frozenset[str] = frozenset()
        self.addresses = AddressDays()

    def count_views_on(self, routes: Iterable[str]) -> None:
        self.pages = frozenset(routes)

    def _visitor(self, address: str, user_agent: str, moment: datetime) -> bytes | None:
        salt = self.salts.of(visit_rules.day_of(moment))
        if salt is None:
            return None  # no salt yet (the database away at start or at midnight): a view, no visitor
        return visit_rules.visitor_id(salt, address, user_agent)

    def page_view(self, scope: Scope, status: int, route: str) -> None:
        """Count a page's response when it is a view: the site, the page, the minute, and on a landing (no
        Referer, or another site's) the source and the campaign tag."""
        headers = _headers(scope)
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
            self.tally.view(day, VisitKind.BOT, "", None)  # counted apart, one figure a day, no visitor
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
