"""What counts as a visit, a visitor, a source and a buy press: pure rules, the clock passed in.

The site counts on its own server (publisher/visits, docs/privacy.md): nothing is stored in or read
from the visitor's browser. These rules decide, from one request's method, status, route and
headers, whether it is a page view, who the visitor is for one day only (a keyed hash under the
day's salt), where they came from, and whether a buy beacon names a known book and its store.

CONTRACT (issue 42): the signatures below are fixed; the rules helper fills them in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime

from publisher.rules.visitor_limits import Limit

# A buy beacon: at most this many counted presses per address in ten minutes; a body longer than
# this is not ours ("<slug> <host>").
BUY_PER_ADDRESS = Limit(attempts=20, window_s=600)
BEACON_BODY_MAX = 200
# A source or campaign label longer than this is cut (a forged utm cannot grow a row).
LABEL_MAX = 64
# A day's salt is destroyed this long after the day began (midnight UTC): the day and the next.
SALT_LIFETIME_HOURS = 48


def is_prefetch(headers: Mapping[str, str]) -> bool:
    """Whether a browser asked for the page ahead of a visit (Sec-Purpose / Purpose: prefetch)."""
    raise NotImplementedError


def counts_as_view(method: str, status: int, route: str, countable: frozenset[str], headers: Mapping[str, str]) -> bool:
    """A GET answered 200 or 304 on a declared page route, not a prefetch."""
    raise NotImplementedError


def is_bot(user_agent: str) -> bool:
    """A crawler by crawlerdetect's maintained list; no user agent at all is a bot too."""
    raise NotImplementedError


def visitor_id(salt: bytes, address: str, user_agent: str) -> bytes:
    """The day's visitor: HMAC-SHA256 under the day's salt of the address (its /64) and user agent, 16 bytes."""
    raise NotImplementedError


def source_of(referer: str, own_hosts: Iterable[str]) -> str | None:
    """None for our own pages; "(direct)" without a Referer; a known site's name; else the host."""
    raise NotImplementedError


def campaign_of(query: str) -> str | None:
    """ "source / medium / campaign" from utm_*, or "ref: x", or None."""
    raise NotImplementedError


def day_of(moment: datetime) -> date:
    """The UTC day a moment belongs to."""
    raise NotImplementedError


def salt_destroyed_at(day: date) -> datetime:
    """When a day's salt (and every visitor set made with it) is destroyed: 00:00 UTC + 48 h."""
    raise NotImplementedError


def buy_target(body: bytes, books: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """(slug, store host) when the beacon's body names a known book (slug, book link) and its link's host."""
    raise NotImplementedError
