"""What counts as a visit, a visitor, a source and a buy press: pure rules, the clock passed in. The site
counts on its own server (docs/privacy.md): nothing is stored in or read from the browser, and a visitor
is a keyed hash under the day's salt, for one day only."""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import re2
from crawlerdetect.providers.crawlers import data as crawler_patterns
from crawlerdetect.providers.exclusions import data as excluded_patterns

from publisher.rules.visitor_limits import Limit, address_key


class VisitKind:
    """What a count is of, by its key: the whole site (""), a page (its route), a source, a campaign, a
    buy press ("slug host"), the bots (""); a minute ("HHMM", UTC) is a seen set only, for "visitors now"."""

    SITE = "site"
    PAGE = "page"
    SOURCE = "source"
    CAMPAIGN = "campaign"
    BUY = "buy"
    BOT = "bot"
    MINUTE = "minute"


# A buy beacon: at most this many counted presses per address in ten minutes; a body longer than
# this is not ours ("<slug> <host>").
BUY_PER_ADDRESS = Limit(attempts=20, window_s=600)
BEACON_BODY_MAX = 200
# A source or campaign label longer than this is cut (a forged utm cannot grow a row).
LABEL_MAX = 64
# Where a label that is no clean host or text is counted, with labels past a cap.
OTHER = "(other)"
# The kinds whose keys come from outside (a Referer, a landing URL): at most this many new labels of
# each a day across the site, and this many from one address a day in each worker, so one flood
# cannot use up the day's room.
LABEL_KINDS = (VisitKind.SOURCE, VisitKind.CAMPAIGN)
LABELS_PER_DAY = 200
LABELS_PER_ADDRESS = 5
# What one address adds in a day, in each worker: this many page views, by this many user agents
# (its visitors); past either, its views count as a bot's, not even judged. A view adds at most 5
# seen rows (site, page, minute, source, campaign): at most 5 times its views a day.
VIEWS_PER_ADDRESS = 500
VISITORS_PER_ADDRESS = 50
# A day's salt: this many random bytes, destroyed this long after the day began (midnight UTC): the
# day and the next.
SALT_BYTES = 32
SALT_LIFETIME_HOURS = 48
# A visitor id: the first bytes of the HMAC, enough that two visitors of one day never share one.
VISITOR_ID_BYTES = 16
# How many recent user agents the bot check remembers (in this process's memory only, never
# written): a returning browser costs under a microsecond instead of the list's tens of microseconds.
BOT_CACHE_SIZE = 4096
# A user agent longer than this is no browser's (an app's built-in browser, the longest, sends
# about 280) and is a bot without being read; so is one with more of the words crawlerdetect removes
# first ("Safari", "x64", "KHTML,": a browser sends at most 11). Up to both, its list is read by RE2
# in time linear in the length, a few hundred microseconds at worst (docs/performance.md, Visits).
USER_AGENT_MAX = 512
EXCLUDED_WORDS_MAX = 16

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
# The sources a stored label may name that are no host: no Referer, and the groups' names.
KNOWN_SOURCES = frozenset(
    {DIRECT, *SOURCE_GROUPS.values(), *COUNTRY_DOMAIN_GROUPS.values(), *ANDROID_APP_GROUPS.values()}
)
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
    """Whether a browser asked for the page ahead of a visit that may never come (``headers`` keyed in
    lower case)."""
    if "prefetch" in headers.get("sec-purpose", "").lower():
        return True
    return any(headers.get(name, "").strip().lower() in values for name, values in _PREFETCH_VALUES.items())


def counts_as_view(method: str, status: int, route: str, countable: frozenset[str], headers: Mapping[str, str]) -> bool:
    """A GET answered 200 or 304 on a declared page route, not a prefetch: a HEAD, a POST, an
    error page, an asset, the health check or the dashboard is no visit."""
    return method.upper() == "GET" and status in (200, 304) and route in countable and not is_prefetch(headers)


_IGNORING_CASE = re2.Options()
_IGNORING_CASE.case_sensitive = False
_IGNORING_CASE.never_capture = True
_IGNORING_CASE.log_errors = False  # a pattern RE2 refuses goes to Python's re, below
# What Python's re may search instead of RE2: literal text, then lookarounds of literal text
# (crawlerdetect's "Yandex(?!Search)"): each character is read a bounded number of times.
_LINEAR_IN_RE = re.compile(r"[a-z0-9 ]{3,}(?:\(\?<?[=!][a-z0-9 ]+\))+", re.IGNORECASE)
_LOOKAROUND = re.compile(r"\(\?<?[=!]")


def _crawler_search(patterns: Iterable[str]) -> tuple[Any, list[re.Pattern[str]]]:
    """The patterns as one RE2 union (a search linear in the user agent), and the few with a lookaround
    (which RE2 refuses) for Python's re, each only if its search is linear too."""
    taken: list[str] = []
    refused: list[str] = []
    for pattern in patterns:
        (refused if _LOOKAROUND.search(pattern) else taken).append(pattern)
    for pattern in refused:
        if not _LINEAR_IN_RE.fullmatch(pattern):
            raise RuntimeError(
                f"crawlerdetect's pattern {pattern!r} is refused by RE2 and is not literal text with "
                "lookarounds of literal text, so Python's re could take longer than linear time on it: "
                "check that crawlerdetect version before using it (publisher/rules/visit_rules.py)"
            )
    try:
        union = re2.compile("|".join(taken).encode(), _IGNORING_CASE)
    except re2.error:
        unread = [pattern for pattern in taken if not _re2_reads(pattern)]
        raise RuntimeError(
            f"crawlerdetect's patterns {unread!r} are refused by RE2 (publisher/rules/visit_rules.py)"
        ) from None
    return union, [re.compile(pattern, re.IGNORECASE) for pattern in refused]


def _re2_reads(pattern: str) -> bool:
    try:
        re2.compile(pattern, _IGNORING_CASE)
    except re2.error:
        return False
    return True


_CRAWLERS, _CRAWLERS_FOR_RE = _crawler_search(crawler_patterns)
# On bytes: RE2's str methods map every match's offsets back to characters, ~18 µs a match.
_EXCLUSIONS = re2.compile("|".join(excluded_patterns).encode(), _IGNORING_CASE)


@functools.lru_cache(maxsize=BOT_CACHE_SIZE)
def _listed_crawler(user_agent: str) -> bool:
    """crawlerdetect's ``is_crawler`` on its own list: the words browsers share removed (a phone named
    "cubot"), then any crawler's pattern; past EXCLUDED_WORDS_MAX of those words, a bot unread."""
    agent, removed = _EXCLUSIONS.subn(b"", user_agent.encode("utf-8", "replace"), count=EXCLUDED_WORDS_MAX + 1)
    if removed > EXCLUDED_WORDS_MAX:
        return True
    return bool(agent) and (
        _CRAWLERS.search(agent) is not None
        or any(pattern.search(agent.decode("utf-8", "replace")) for pattern in _CRAWLERS_FOR_RE)
    )


def is_bot(user_agent: str) -> bool:
    """A crawler by crawlerdetect's maintained list; no user agent, or one longer than USER_AGENT_MAX, is
    a bot too."""
    user_agent = user_agent.strip()
    return not user_agent or len(user_agent) > USER_AGENT_MAX or _listed_crawler(user_agent)


def visitor_id(salt: bytes, address: str, user_agent: str) -> bytes:
    """The day's visitor: HMAC-SHA256 of the address and user agent under the day's salt, so nobody can tell
    whose it is without the salt, and the next day the same person is another id."""
    message = f"{address_key(address)}\0{user_agent}".encode("utf-8", "surrogatepass")
    return hmac.new(salt, message, hashlib.sha256).digest()[:VISITOR_ID_BYTES]


def stored_label(kind: str, key: str) -> str:
    """The one way a source, campaign or page is stored: unclean or longer than LABEL_MAX, "(other)", so
    only clean text reaches the dashboard, the CSV and the summary email."""
    if kind == VisitKind.SOURCE:
        clean = key in KNOWN_SOURCES or _ascii_host(key) == key
    elif kind == VisitKind.CAMPAIGN:
        clean = key == " ".join(key.split()) and all(char.isalnum() or char in " -_./:" for char in key)
    elif kind == VisitKind.PAGE:
        clean = key.startswith("/") and all(char.isascii() and (char.isalnum() or char in "/-_.") for char in key)
    else:
        return key
    return key if clean and len(key) <= LABEL_MAX else OTHER


def _ascii_host(host: str) -> str | None:
    """A host name in lower-case ASCII (an international name in its xn-- form), or None when it
    is no host name at all; an IP address is kept as it is."""
    host = host.strip().lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # a scope id ("%eth0") is any text a sender likes: no host
        return None if getattr(address, "scope_id", None) else str(address)
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
    """None for our own pages; "(direct)" without a usable Referer; a known site's name; else the host in
    ASCII (no look-alike letters pass for a known name). Only the host is read: the rest may hold a search."""
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
    """ "source / medium / campaign" from the landing URL's utm parameters given, else "ref: x" from
    ``ref``, else None; cut so that the whole is at most LABEL_MAX characters."""
    values: dict[str, str] = {}
    for name, value in parse_qsl(query.removeprefix("?"), errors="replace"):
        if name in (*CAMPAIGN_PARTS, "ref") and name not in values and value.split():
            values[name] = " ".join(value.split())
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


def minute_key(moment: datetime) -> str:
    """The key of a moment's minute in the seen sets of "visitors now": "HHMM", UTC."""
    moment = moment.astimezone(UTC)
    return f"{moment.hour:02d}{moment.minute:02d}"


def salt_destroyed_at(day: date) -> datetime:
    """When a day's salt (and every visitor set made with it) is destroyed: 00:00 UTC + 48 h, so a
    visit just before midnight is still one visitor with the next day's first minutes counted."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=SALT_LIFETIME_HOURS)


def buy_target(body: bytes, books: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """(slug, store host) when the beacon's body (``"<slug> <host>"``) names a known book and exactly one
    of its links' hosts (its store's, its pre-order's); else None, so a forged beacon counts nothing."""
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
        if store is not None and pressed == store:
            return slug, store
    return None
