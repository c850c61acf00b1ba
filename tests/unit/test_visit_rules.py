"""What counts as a page view, a visitor, a bot, a source, a campaign and a buy press
(publisher/rules/visit_rules.py), and the figures the docs state: 20 presses per address in 600 s,
a 200-byte beacon body, 64-character labels, a salt destroyed 48 h after its day began; and every
figure docs/privacy.md gives, read from the doc against the code."""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from publisher import visits
from publisher.config import settings
from publisher.content.books import BOOKS
from publisher.limits.submits import Limiter, MemoryCounter
from publisher.rules import visit_rules, visitor_limits
from publisher.rules.visit_rules import (
    BUY_PER_ADDRESS,
    buy_target,
    campaign_of,
    clean_label,
    counts_as_view,
    day_of,
    is_bot,
    is_prefetch,
    salt_destroyed_at,
    source_of,
    visitor_id,
)
from publisher.server import middleware

DOCS = Path(__file__).resolve().parents[2] / "docs"
COUNTABLE = frozenset({"/", "/about", "/books/x"})
DESKTOP_CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
IPHONE_SAFARI = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)
DESKTOP_FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
SALT = bytes(range(32))
OURS = ("books.example.com",)


# --- Page views -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
@pytest.mark.parametrize("status", [200, 304, 404])
@pytest.mark.parametrize("route", ["/", "/books/x", "/admin", "/_health", "/site.js", "/releases.atom"])
def test_only_a_get_answered_200_or_304_on_a_declared_page_is_a_view(method, status, route):
    expected = method == "GET" and status in (200, 304) and route in ("/", "/books/x")
    assert counts_as_view(method, status, route, COUNTABLE, {}) is expected


def test_the_method_is_read_in_any_case_and_other_statuses_never_count():
    assert counts_as_view("get", 200, "/about", COUNTABLE, {})
    for status in (201, 204, 301, 302, 400, 403, 429, 500, 503):
        assert not counts_as_view("GET", status, "/about", COUNTABLE, {}), status
    assert not counts_as_view("GET", 200, "/about", frozenset(), {})  # counting nothing declared: nothing counts


@pytest.mark.parametrize(
    "headers",
    [
        {"sec-purpose": "prefetch"},
        {"sec-purpose": "prefetch;prerender"},
        {"sec-purpose": "Prefetch; anonymous-client-ip"},
        {"purpose": "prefetch"},
        {"purpose": " Prefetch "},
        {"x-purpose": "preview"},
        {"x-moz": "prefetch"},
    ],
)
def test_a_prefetch_is_no_view(headers):
    assert is_prefetch(headers)
    assert not counts_as_view("GET", 200, "/", COUNTABLE, headers)


@pytest.mark.parametrize(
    "headers",
    [{}, {"sec-purpose": ""}, {"purpose": "navigate"}, {"x-moz": "other"}, {"sec-fetch-mode": "navigate"}],
)
def test_a_plain_visit_is_no_prefetch(headers):
    assert not is_prefetch(headers)
    assert counts_as_view("GET", 200, "/", COUNTABLE, headers)


# --- Bots -------------------------------------------------------------------------------

BOTS = {
    "Googlebot": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "curl": "curl/8.5.0",
    "HeadlessChrome": (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"
    ),
    "facebookexternalhit": "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Lighthouse": (
        "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse"
    ),
    "python-httpx": "python-httpx/0.28.1",
    "Bingbot": "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "no user agent": "",
    "blank user agent": "   ",
}


@pytest.mark.parametrize("user_agent", BOTS.values(), ids=BOTS.keys())
def test_crawlers_tools_headless_browsers_and_no_user_agent_are_bots(user_agent):
    assert is_bot(user_agent)


@pytest.mark.parametrize("user_agent", [DESKTOP_CHROME, IPHONE_SAFARI, DESKTOP_FIREFOX])
def test_browsers_people_use_are_no_bots(user_agent):
    assert not is_bot(user_agent)


def test_the_bot_check_remembers_4096_user_agents_in_memory_and_looks_at_512_characters_of_one():
    visit_rules._listed_crawler.cache_clear()
    for n in range(4096 + 10):
        is_bot(f"{DESKTOP_CHROME} {n}")
    info = visit_rules._listed_crawler.cache_info()
    assert info.maxsize == 4096
    assert info.currsize == 4096
    # A giant forged header is judged by its first 512 characters: a bot's name after them is
    # not read, and the cache never holds more than 512 characters of one.
    padded = DESKTOP_CHROME + "x" * (512 - len(DESKTOP_CHROME))
    assert len(padded) == 512
    assert not is_bot(padded + " Googlebot/2.1")
    assert is_bot(padded[:-20] + " Googlebot/2.1")


# --- Visitors ---------------------------------------------------------------------------


def test_a_visitor_is_the_first_16_bytes_of_an_hmac_sha256_keyed_by_the_days_salt():
    expected = hmac.new(SALT, b"203.0.113.7\0" + DESKTOP_CHROME.encode(), hashlib.sha256).digest()[:16]
    assert visitor_id(SALT, "203.0.113.7", DESKTOP_CHROME) == expected
    assert len(expected) == 16


def test_one_address_and_user_agent_is_one_visitor_under_one_salt():
    first = visitor_id(SALT, "203.0.113.7", DESKTOP_CHROME)
    assert visitor_id(SALT, "203.0.113.7", DESKTOP_CHROME) == first
    assert visitor_id(SALT, "::ffff:203.0.113.7", DESKTOP_CHROME) == first  # a dual-stack socket's IPv4
    assert visitor_id(SALT, "203.0.113.8", DESKTOP_CHROME) != first
    assert visitor_id(SALT, "203.0.113.7", IPHONE_SAFARI) != first  # another browser: another visitor
    assert visitor_id(bytes(32), "203.0.113.7", DESKTOP_CHROME) != first  # the next day's salt: unlinkable


def test_one_ipv6_64_is_one_visitor():
    first = visitor_id(SALT, "2001:db8:1:2::1", DESKTOP_CHROME)
    assert visitor_id(SALT, "2001:db8:1:2:ffff:ffff:ffff:ffff", DESKTOP_CHROME) == first
    assert visitor_id(SALT, "2001:db8:1:3::1", DESKTOP_CHROME) != first


def test_the_address_and_user_agent_cannot_run_into_each_other():
    assert visitor_id(SALT, "10.0.0.1", "2 x") != visitor_id(SALT, "10.0.0.12", " x")


# --- Sources ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("referer", "source"),
    [
        ("https://www.google.co.uk/", "Google"),
        ("https://www.google.com/search?q=guinea+pig+book", "Google"),
        ("https://google.de/", "Google"),
        ("https://www.google.com.au/", "Google"),
        ("https://news.google.com/", "Google"),
        ("android-app://com.google.android.googlequicksearchbox/", "Google"),
        ("https://www.bing.com/", "Bing"),
        ("https://duckduckgo.com/", "DuckDuckGo"),
        ("https://uk.search.yahoo.com/", "Yahoo"),
        ("https://www.ecosia.org/", "Ecosia"),
        ("https://search.brave.com/search?q=x", "Brave"),
        ("https://www.qwant.com/", "Qwant"),
        ("https://www.startpage.com/", "Startpage"),
        ("https://yandex.ru/", "Yandex"),
        ("https://www.baidu.com/", "Baidu"),
        ("https://l.instagram.com/", "Instagram"),
        ("https://www.instagram.com/", "Instagram"),
        ("https://l.facebook.com/l.php?u=x", "Facebook"),
        ("https://lm.facebook.com/", "Facebook"),
        ("https://m.facebook.com/", "Facebook"),
        ("https://fb.com/", "Facebook"),
        ("https://t.co/abc", "X"),
        ("https://x.com/", "X"),
        ("https://twitter.com/", "X"),
        ("https://www.pinterest.com/", "Pinterest"),
        ("https://www.pinterest.co.uk/", "Pinterest"),
        ("https://pin.it/abc", "Pinterest"),
        ("https://www.linkedin.com/", "LinkedIn"),
        ("https://lnkd.in/abc", "LinkedIn"),
        ("https://old.reddit.com/r/books", "Reddit"),
        ("https://www.youtube.com/", "YouTube"),
        ("https://www.tiktok.com/", "TikTok"),
        ("https://www.threads.net/", "Threads"),
        ("https://bsky.app/profile/x", "Bluesky"),
        ("https://web.whatsapp.com/", "WhatsApp"),
        ("https://mail.google.com/mail/u/0/", "Gmail"),
        ("android-app://com.google.android.gm/", "Gmail"),
        ("https://outlook.live.com/", "Outlook"),
        ("https://outlook.office.com/", "Outlook"),
    ],
)
def test_search_social_and_mail_sites_are_grouped_by_name(referer, source):
    assert source_of(referer, OURS) == source


@pytest.mark.parametrize(
    ("referer", "source"),
    [
        ("https://www.Example.ORG/a/b?secret=1", "example.org"),  # the host only, never the path or query
        ("https://school.example.net/newsletter", "school.example.net"),
        ("https://google.evil.example/", "google.evil.example"),  # a name in another's domain is not Google
        ("https://notgoogle.com/", "notgoogle.com"),
        ("https://bücher.example/", "xn--bcher-kva.example"),  # international names in their ASCII form
        ("http://192.0.2.1:8080/", "192.0.2.1"),
        ("https://m.example.org/", "example.org"),
        ("https://www.co/", "www.co"),  # nothing left to name: kept whole
    ],
)
def test_another_site_is_its_host_in_lower_case(referer, source):
    assert source_of(referer, OURS) == source


def test_a_host_is_cut_to_64_characters():
    host = ".".join(["abcdefghij"] * 9) + ".example"
    assert source_of(f"https://{host}/", OURS) == host[:64]
    assert len(source_of(f"https://{host}/", OURS) or "") == 64


@pytest.mark.parametrize(
    "referer",
    [
        "https://books.example.com/about",
        "http://books.example.com/",
        "https://BOOKS.example.com./",
        "https://books.example.com:8443/",
    ],
)
def test_our_own_pages_are_no_source(referer):
    assert source_of(referer, OURS) is None
    assert source_of(referer, ["https://books.example.com"]) is None  # an origin names the host too
    assert source_of(referer, ["books.example.com:443"]) is None


@pytest.mark.parametrize(
    "referer",
    [
        "",
        "   ",
        "not a url",
        "ftp://example.org/",
        "https://",
        "http://[::1",
        "https://exa mple.org/",
        "https://-evil.example/",
        "https://a..b/",
        "android-app://com.unknown.app/",
    ],
)
def test_no_referer_or_one_that_is_no_site_is_direct(referer):
    assert source_of(referer, OURS) == "(direct)"


# --- Campaigns --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "campaign"),
    [
        ("utm_source=newsletter&utm_medium=email&utm_campaign=launch", "newsletter / email / launch"),
        ("?utm_campaign=launch&utm_source=newsletter&utm_medium=email", "newsletter / email / launch"),
        ("utm_source=instagram&utm_campaign=spring", "instagram / spring"),
        ("utm_campaign=spring", "spring"),
        ("utm_source=school+news&utm_medium=", "school news"),
        ("utm_source=a&utm_source=b", "a"),
        ("utm_source=newsletter&ref=x", "newsletter"),  # utm wins over ref
        ("ref=school-newsletter", "ref: school-newsletter"),
        ("ref=%C3%A9cole", "ref: école"),
        ("ref=%FF", "ref: \N{REPLACEMENT CHARACTER}"),
        ("", None),
        ("token=abc&page=2", None),
        ("utm_source=&ref=", None),
        ("utm_source=%00%0A", None),
    ],
)
def test_a_campaign_is_the_landing_urls_utm_parts_or_its_ref(query, campaign):
    assert campaign_of(query) == campaign


def test_control_and_format_characters_never_reach_a_label():
    assert campaign_of("utm_source=news%0D%0Aletter&utm_campaign=a%09b") == "news letter / a b"
    assert campaign_of("ref=evil%E2%80%AEgpj.exe%00") == "ref: evilgpj.exe"  # a bidi override and a NUL
    assert clean_label("a\u200bb \x07 c  ") == "ab c"


def test_a_campaign_is_cut_to_64_characters_in_all():
    long = "x" * 100
    three = campaign_of(f"utm_source={long}&utm_medium=email&utm_campaign={long}")
    assert three is not None and len(three) == 64
    first, medium, last = three.split(" / ")
    assert medium == "email"  # a short part is kept whole; the long ones share what is left
    assert abs(len(first) - len(last)) <= 1
    assert len(campaign_of(f"utm_source={long}") or "") == 64
    assert len(campaign_of(f"ref={long}") or "") == 64
    assert (campaign_of(f"ref={long}") or "").startswith("ref: x")
    assert campaign_of("utm_source=" + "y" * 64) == "y" * 64
    assert campaign_of("utm_source=" + "y" * 65) == "y" * 64
    assert clean_label("z" * 65) == "z" * 64


# --- Days and salts ---------------------------------------------------------------------


def test_a_moment_belongs_to_its_utc_day():
    assert day_of(datetime(2026, 11, 27, 23, 59, 59, tzinfo=UTC)) == date(2026, 11, 27)
    assert day_of(datetime(2026, 11, 28, 0, 0, tzinfo=UTC)) == date(2026, 11, 28)
    assert day_of(datetime(2026, 11, 27, 23, 30)) == date(2026, 11, 27)  # naive: UTC
    new_york = timezone(timedelta(hours=-5))
    assert day_of(datetime(2026, 11, 27, 20, 0, tzinfo=new_york)) == date(2026, 11, 28)


def test_a_days_salt_is_destroyed_48_hours_after_the_day_began():
    destroyed = salt_destroyed_at(date(2026, 11, 27))
    assert destroyed == datetime(2026, 11, 27, tzinfo=UTC) + timedelta(hours=48)
    assert destroyed == datetime(2026, 11, 29, 0, 0, tzinfo=UTC)
    assert destroyed.utcoffset() == timedelta(0)
    assert salt_destroyed_at(date(2026, 12, 31)) == datetime(2027, 1, 2, tzinfo=UTC)


# --- Buy presses ------------------------------------------------------------------------

SHOP = (("coloring-book", "https://www.amazon.com/s?k=x"), ("word-search-book", "https://Shop.Example.org/b/1"))


def test_a_press_names_a_known_book_and_its_stores_host():
    assert buy_target(b"coloring-book www.amazon.com", SHOP) == ("coloring-book", "www.amazon.com")
    assert buy_target(b"word-search-book shop.example.org", SHOP) == ("word-search-book", "shop.example.org")
    assert buy_target(b"word-search-book SHOP.example.org", SHOP) == ("word-search-book", "shop.example.org")


def test_every_book_on_the_site_can_be_pressed():
    books = [(book.slug, str(book.book_link)) for book in BOOKS]
    for slug, link in books:
        host = link.split("/")[2]
        assert buy_target(f"{slug} {host}".encode(), books) == (slug, host.lower())


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"coloring-book",
        b"coloring-book ",
        b" www.amazon.com",
        b"unknown-book www.amazon.com",
        b"coloring-book amazon.com",  # not exactly the link's host
        b"coloring-book www.amazon.com.evil.example",
        b"coloring-book shop.example.org",  # another book's store
        b"coloring-book www.amazon.com extra",
        b"coloring-book  www.amazon.com",
        b"coloring-book\twww.amazon.com",
        b"coloring-book www.amazon.com\n",
        b"\xff\xfe garbage",
        b"coloring-book \xffwww.amazon.com",
        b"<script> www.amazon.com",
    ],
)
def test_anything_else_is_no_press(body):
    assert buy_target(body, SHOP) is None


def test_a_beacon_body_is_at_most_200_bytes():
    slug = "s" * (200 - len(" www.amazon.com"))
    books = ((slug, "https://www.amazon.com/x"),)
    assert len(f"{slug} www.amazon.com".encode()) == 200
    assert buy_target(f"{slug} www.amazon.com".encode(), books) == (slug, "www.amazon.com")
    longer = ((slug + "s", "https://www.amazon.com/x"),)
    assert buy_target(f"{slug}s www.amazon.com".encode(), longer) is None


@pytest.mark.asyncio
async def test_20_presses_per_address_in_600_seconds():
    """The limit the beacon counts presses under, with the site's own limiter on a clock the test moves."""
    now = [1_200_600.0]  # the start of a 600 s window (and of a 900 s one: a longer window would fail here)
    limiter = Limiter(MemoryCounter(clock=lambda: now[0]), clock=lambda: now[0], per_address=BUY_PER_ADDRESS)
    pressed = [await limiter.allow("buy", "", "2001:db8:1:2::7") for _ in range(21)]
    assert pressed == [True] * 20 + [False]
    assert not await limiter.allow("buy", "", "2001:db8:1:2::8")  # the same /64
    assert await limiter.allow("buy", "", "203.0.113.9")  # another address is unaffected
    now[0] += 599
    assert not await limiter.allow("buy", "", "2001:db8:1:2::7")
    now[0] += 1
    assert await limiter.allow("buy", "", "2001:db8:1:2::7")  # the next window


# --- docs/privacy.md: every figure it gives is the code's ---------------------------------


def privacy_doc() -> str:
    return " ".join((DOCS / "privacy.md").read_text(encoding="utf-8").split())


def documented_figures() -> list[str]:
    """The phrases of docs/privacy.md that give a figure, each written from the code's own value."""
    counted = [status for status in range(100, 600) if counts_as_view("GET", status, "/", frozenset({"/"}), {})]
    assert counted == [200, 304]
    cdn_seconds = int(re.findall(r"s-maxage=(\d+)", middleware.STATIC_PAGE_CACHE)[0])
    limit = visit_rules.BUY_PER_ADDRESS
    hours = visit_rules.SALT_LIFETIME_HOURS
    day = date(2026, 11, 27)
    assert salt_destroyed_at(day) - timedelta(hours=hours) == datetime(2026, 11, 27, 0, 0, tzinfo=UTC)
    return [
        f"answered {counted[0]} or {counted[1]}",
        f"A label is cut to {visit_rules.LABEL_MAX} characters",
        f"at most {visit_rules.BEACON_BODY_MAX} bytes",
        f"at most {limit.attempts} presses per address in {limit.window_s // 60} minutes",
        f"for IPv6 its /{visitor_limits.IPV6_BLOCK_PREFIX}",
        f"HMAC-SHA256 under the day's salt, cut to {visit_rules.VISITOR_ID_BYTES} bytes",
        f"(the last {visits.VISITORS_NOW_MINUTES} minutes)",
        f"Both are destroyed {hours} hours after their day began** (the day's 00:00 UTC)",
        f"until {hours} hours after its day began",
        f"destroyed {hours} hours after its day began",
        f"What stays after {hours} hours",
        f"within those {hours} hours",
        f"every {visits.FLUSH_INTERVAL_S} seconds, in one transaction",
        f"until its next flush, {visits.FLUSH_INTERVAL_S} seconds at most",
        f"Past {visits.MAX_KEYS_PER_FLUSH:,} new keys of one kind in one flush",
        f"`PUBLISHER_VISITS_KEEP_DAYS` days, {settings.DEFAULT_VISITS_KEEP_DAYS} by default",
        f"while the worker runs; the last {visit_rules.BOT_CACHE_SIZE:,}",
        f"remembers the last {visit_rules.BOT_CACHE_SIZE:,} user agents",
        f"`s-maxage={cdn_seconds}`",
        f"answer a page for {cdn_seconds} seconds",
    ]


def test_every_figure_docs_privacy_gives_is_the_codes():
    """Each figure is written into its phrase from the code, and no other figure is left in the
    doc: a figure that moves in the code, or a new one in the doc, fails here."""
    text = privacy_doc()
    missing = [phrase for phrase in documented_figures() if phrase not in text]
    assert missing == [], "docs/privacy.md no longer says these, with the code's figures"
    for phrase in documented_figures():
        text = text.replace(phrase, "")
    left = re.findall(r"\S*\d\S*", re.sub(r"IPv6|HMAC-SHA256", "", text))
    assert left == [], "docs/privacy.md gives figures no test reads from the code"
