"""What counts as a visit, a visitor, a source and a buy press: pure rules, the clock passed in.

The site counts on its own server (publisher/visits, docs/privacy.md): nothing is stored in or read
from the visitor's browser. These rules decide, from one request's method, status, route and
headers, whether it is a page view, who the visitor is for one day only (a keyed hash under the
day's salt), where they came from, and whether a buy beacon names a known book and its store.

CONTRACT (issue 42): the signatures below are fixed; publisher/visits and server/ call them.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from urllib.parse import parse_qsl, urlsplit

from crawlerdetect import CrawlerDetect

from publisher.rules.visitor_limits import Limit, address_key

# A buy beacon: at most this many counted presses per address in ten minutes; a body longer than
# this is not ours ("<slug> <host>").
BUY_PER_ADDRESS = Limit(attempts=20, window_s=600)
BEACON_BODY_MAX = 200
# A source or campaign label longer than this is cut (a forged utm cannot grow a row).
LABEL_MAX = 64
# A day's salt is destroyed this long after the day began (midnight UTC): the day and the next.
SALT_LIFETIME_HOURS = 48
# A visitor id: the first bytes of the HMAC, enough that two visitors of one day never share one.
VISITOR_ID_BYTES = 16
# How many recent user agents the bot check remembers (in this process's memory only, never
# written): a returning browser costs under a microsecond instead of the list's 140 µs.
BOT_CACHE_SIZE = 4096
# A browser's user agent is a few hundred characters; only this much of one is looked at, so a
# forged giant header costs no more time or cache memory than a real one.
USER_AGENT_CHECKED_MAX = 512

DIRECT = "(direct)"
# The groups, by host: the names a publisher knows, so that google.co.uk and google.de, or t.co
# and x.com, add up to one figure. A host's subdomains belong to it too (uk.search.yahoo.com).
SOURCE_GROUPS = {
    # Search
    "bing.com": "Bing",
    "duckduckgo.com": "DuckDuckGo",
    "yahoo.com": "Yahoo",
    "ecosia.org": "Ecosia",
    "search.brave.com": "Brave",
    "qwant.com": "Qwant",
    "startpage.com": "Startpage",
    "ya.ru": "Yandex",
    "baidu.com": "Baidu",
    # Social
    "facebook.com": "Facebook",
    "fb.com": "Facebook",
    "instagram.com": "Instagram",
    "t.co": "X",
    "x.com": "X",
    "twitter.com": "X",
    "pin.it": "Pinterest",
    "linkedin.com": "LinkedIn",
    "lnkd.in": "LinkedIn",
    "reddit.com": "Reddit",
    "youtube.com": "YouTube",
    "youtu.be": "YouTube",
    "tiktok.com": "TikTok",
    "threads.net": "Threads",
    "threads.com": "Threads",
    "bsky.app": "Bluesky",
    "whatsapp.com": "WhatsApp",
    "wa.me": "WhatsApp",
    # Mail (before google.* below: mail.google.com is Gmail, not a search)
    "mail.google.com": "Gmail",
    "outlook.live.com": "Outlook",
    "outlook.office.com": "Outlook",
    "outlook.office365.com": "Outlook",
}
# Sites with a domain per country: google.com, google.co.uk, google.com.au, google.de ...
COUNTRY_DOMAIN_GROUPS = {"google": "Google", "yandex": "Yandex", "pinterest": "Pinterest", "yahoo": "Yahoo"}
_COUNTRY_DOMAIN = re.compile(r"(?P<name>[a-z]+)\.(?:com|[a-z]{2}|(?:co|com)\.[a-z]{2})")
# A link opened from an Android app carries the app's package as its Referer (android-app://...).
ANDROID_APP_GROUPS = {
    "com.google.android.gm": "Gmail",
    "com.google.android.googlequicksearchbox": "Google",
    "com.facebook.katana": "Facebook",
    "com.instagram.android": "Instagram",
    "com.twitter.android": "X",
    "com.pinterest": "Pinterest",
    "com.linkedin.android": "LinkedIn",
    "com.reddit.frontpage": "Reddit",
    "com.whatsapp": "WhatsApp",
    "com.microsoft.office.outlook": "Outlook",
}
# The prefixes a site puts before its own name for the same pages (l.facebook.com is Facebook's
# link redirector, lm. its mobile one).
HOST_PREFIXES = ("www.", "m.", "l.", "lm.")
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?")
CAMPAIGN_PARTS = ("utm_source", "utm_medium", "utm_campaign")
CAMPAIGN_SEPARATOR = " / "
REF_PREFIX = "ref: "
# Headers a browser sends when it fetches a page ahead of a visit that may never come.
_PREFETCH_VALUES = {"purpose": {"prefetch", "preview"}, "x-purpose": {"prefetch", "preview"}, "x-moz": {"prefetch"}}


def is_prefetch(headers: Mapping[str, str]) -> bool:
    """Whether a browser asked for the page ahead of a visit: ``Sec-Purpose: prefetch`` (with or
    without ``;prerender``), ``Purpose: prefetch``, Safari's ``X-Purpose: preview``, Firefox's
    ``X-Moz: prefetch``. ``headers`` is keyed in lower case."""
    if "prefetch" in headers.get("sec-purpose", "").lower():
        return True
    return any(headers.get(name, "").strip().lower() in values for name, values in _PREFETCH_VALUES.items())


def counts_as_view(method: str, status: int, route: str, countable: frozenset[str], headers: Mapping[str, str]) -> bool:
    """A GET answered 200 or 304 on a declared page route, not a prefetch: a HEAD, a POST, an
    error page, an asset, the health check or the dashboard is no visit."""
    return method.upper() == "GET" and status in (200, 304) and route in countable and not is_prefetch(headers)


_CRAWLERS = CrawlerDetect()  # one per process: it compiles its list once and keeps its last match


@functools.lru_cache(maxsize=BOT_CACHE_SIZE)
def _listed_crawler(user_agent: str) -> bool:
    return _CRAWLERS.is_crawler(user_agent)


def is_bot(user_agent: str) -> bool:
    """A crawler by crawlerdetect's maintained list (search engines, link previews, uptime checks,
    curl, python-httpx, headless Chromium, Lighthouse); no user agent at all is a bot too."""
    user_agent = user_agent.strip()[:USER_AGENT_CHECKED_MAX]
    return not user_agent or _listed_crawler(user_agent)


def visitor_id(salt: bytes, address: str, user_agent: str) -> bytes:
    """The day's visitor: HMAC-SHA256 under the day's salt of the address (its /64 for IPv6) and
    user agent, first 16 bytes. Without the salt nobody can tell whose it is; with the next day's
    salt the same person is another id, so no one is followed across days."""
    message = f"{address_key(address)}\0{user_agent}".encode("utf-8", "surrogatepass")
    return hmac.new(salt, message, hashlib.sha256).digest()[:VISITOR_ID_BYTES]


def clean_label(text: str, limit: int = LABEL_MAX) -> str:
    """``text`` as one line a person can read in a table: a tab or newline made a space, other
    control and format characters (a bidi override, a zero-width space) removed, runs of spaces
    made one, cut to ``limit`` characters."""
    spaced = "".join(" " if char.isspace() else char for char in text)
    kept = "".join(char for char in spaced if unicodedata.category(char) not in ("Cc", "Cf"))
    return " ".join(kept.split())[:limit].rstrip()


def _ascii_host(host: str) -> str | None:
    """A host name in lower-case ASCII (an international name in its xn-- form), or None when it
    is no host name at all; an IP address is kept as it is."""
    host = host.strip().lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    labels = ascii_host.split(".")
    if not ascii_host or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        return None
    return ascii_host


def _group(host: str) -> str | None:
    """The name of the known site ``host`` belongs to, or None."""
    labels = host.split(".")
    for start in range(len(labels) - 1):
        domain = ".".join(labels[start:])
        if domain in SOURCE_GROUPS:
            return SOURCE_GROUPS[domain]
        country = _COUNTRY_DOMAIN.fullmatch(domain)
        if country and country["name"] in COUNTRY_DOMAIN_GROUPS:
            return COUNTRY_DOMAIN_GROUPS[country["name"]]
    return None


def source_of(referer: str, own_hosts: Iterable[str]) -> str | None:
    """None for our own pages (``own_hosts``: host names, with or without a port); "(direct)"
    without a usable Referer; a known site's name (Google, Instagram, Gmail ...); else the other
    site's host in lower case, ``www.`` left out, an international name in its ASCII (xn--) form
    so that no look-alike letters can pass for a known name. Only the host is read: the rest of a Referer may
    hold what a visitor searched for."""
    try:
        parts = urlsplit(referer.strip())
        hostname = parts.hostname
    except ValueError:
        return DIRECT
    scheme = parts.scheme.lower()
    if scheme == "android-app" and hostname:
        return ANDROID_APP_GROUPS.get(hostname, DIRECT)
    if scheme not in ("http", "https") or not hostname:
        return DIRECT
    host = _ascii_host(hostname)
    if host is None:
        return DIRECT
    if host in {_own_host(own) for own in own_hosts}:
        return None
    group = _group(host)
    if group is not None:
        return group
    for prefix in HOST_PREFIXES:
        if host.startswith(prefix) and "." in host.removeprefix(prefix):
            host = host.removeprefix(prefix)
            break
    return host[:LABEL_MAX]


def _own_host(value: str) -> str | None:
    """One of our hosts as ``source_of`` compares it: given as a host, ``host:port`` or an origin."""
    try:
        hostname = urlsplit(value if "://" in value else "//" + value.strip()).hostname
    except ValueError:
        return None
    return _ascii_host(hostname) if hostname else None


def campaign_of(query: str) -> str | None:
    """ "source / medium / campaign" from the landing URL's ``utm_source``, ``utm_medium`` and
    ``utm_campaign`` (the ones given, in that order), else "ref: x" from ``ref``, else None. Each
    part is cleaned (``clean_label``) and cut so that the whole is at most 64 characters."""
    values: dict[str, str] = {}
    for name, value in parse_qsl(query.removeprefix("?"), errors="replace"):
        if name in (*CAMPAIGN_PARTS, "ref") and name not in values and clean_label(value):
            values[name] = clean_label(value)
    parts = [values[name] for name in CAMPAIGN_PARTS if name in values]
    if parts:
        room = LABEL_MAX - len(CAMPAIGN_SEPARATOR) * (len(parts) - 1)
        return CAMPAIGN_SEPARATOR.join(_shares(parts, room))
    if "ref" in values:
        return REF_PREFIX + values["ref"][: LABEL_MAX - len(REF_PREFIX)].rstrip()
    return None


def _shares(parts: list[str], room: int) -> list[str]:
    """Each part cut to a fair share of ``room`` characters; what a short part leaves goes to the others."""
    cut = list(parts)
    left = len(parts)
    for index in sorted(range(len(parts)), key=lambda i: len(parts[i])):
        cut[index] = parts[index][: room // left].rstrip()
        room -= len(cut[index])
        left -= 1
    return cut


def day_of(moment: datetime) -> date:
    """The UTC day a moment belongs to; a moment without a time zone is in UTC."""
    if moment.tzinfo is None:
        return moment.date()
    return moment.astimezone(UTC).date()


def salt_destroyed_at(day: date) -> datetime:
    """When a day's salt (and every visitor set made with it) is destroyed: 00:00 UTC + 48 h, so a
    visit just before midnight is still one visitor with the next day's first minutes counted."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=SALT_LIFETIME_HOURS)


def buy_target(body: bytes, books: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """(slug, store host) when the beacon's body (``"<slug> <host>"``, UTF-8, at most 200 bytes)
    names a known book (``books``: slug and book link) and exactly its link's host; else None,
    so a forged beacon counts nothing."""
    if len(body) > BEACON_BODY_MAX:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    slug, space, host = text.partition(" ")
    if not space or not slug or not host or any(char.isspace() for char in host):
        return None
    pressed = _ascii_host(host)
    for book_slug, book_link in books:
        if book_slug != slug:
            continue
        try:
            link_host = urlsplit(book_link).hostname
        except ValueError:
            return None
        store = _ascii_host(link_host) if link_host else None
        return (slug, store) if store is not None and pressed == store else None
    return None
