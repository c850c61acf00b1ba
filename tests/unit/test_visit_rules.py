"""What counts as a page view, a visitor, a bot, a source, a campaign and a buy press
(publisher/rules/visit_rules.py), with the figures the docs state."""

from __future__ import annotations

import hashlib
import hmac
import random
import re
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from crawlerdetect import CrawlerDetect
from crawlerdetect.providers.crawlers import data as crawler_patterns
from crawlerdetect.providers.exclusions import data as excluded_patterns

from publisher.rules import visit_rules
from publisher.rules.visit_rules import (
    buy_target,
    campaign_of,
    counts_as_view,
    day_of,
    is_bot,
    is_prefetch,
    salt_destroyed_at,
    source_of,
    stored_label,
    visitor_id,
)

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
# The longest user agents people's browsers send: an app's built-in browser.
INSTAGRAM_ANDROID = (
    "Mozilla/5.0 (Linux; Android 13; moto g(60) Build/T2RIS33.32-15-9; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Version/4.0 Chrome/126.0.6478.134 Mobile Safari/537.36 Instagram 339.0.0.30.105 Android (33/13; 400dpi; "
    "1080x2274; motorola; moto g(60); hanoip; qcom; pt_BR; 620453423)"
)
FACEBOOK_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 "
    "[FBAN/FBIOS;FBAV/472.0.0.40.109;FBBV/616410548;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/17.5.1;FBSS/3;"
    "FBID/phone;FBLC/de_DE;FBOP/5;FBRV/618235391]"
)
SALT = bytes(range(32))
OURS = ("books.example.com",)


@pytest.mark.parametrize("method", ["GET", "get", "HEAD", "POST"])
@pytest.mark.parametrize("status", [200, 304, 404])
@pytest.mark.parametrize("route", ["/", "/books/x", "/admin", "/_health", "/site.js", "/releases.atom"])
def test_only_a_get_in_any_case_answered_200_or_304_on_a_declared_page_is_a_view(method, status, route):
    expected = method.upper() == "GET" and status in (200, 304) and route in ("/", "/books/x")
    assert counts_as_view(method, status, route, COUNTABLE, {}) is expected
    assert not counts_as_view(method, status, route, frozenset(), {})  # no page declared: nothing counts


PREFETCHES = [{"sec-purpose": "prefetch"}, {"sec-purpose": "prefetch;prerender"}, {"purpose": " Prefetch "}]
PREFETCHES += [{"sec-purpose": "Prefetch; anonymous-client-ip"}, {"purpose": "prefetch"}, {"x-purpose": "preview"}]
PREFETCHES += [{"x-moz": "prefetch"}]
PLAIN = [{}, {"sec-purpose": ""}, {"purpose": "navigate"}, {"x-moz": "other"}, {"sec-fetch-mode": "navigate"}]


@pytest.mark.parametrize("headers", PREFETCHES + PLAIN)
def test_a_prefetch_is_no_view_and_a_plain_visit_no_prefetch(headers):
    assert is_prefetch(headers) is (headers in PREFETCHES)
    assert counts_as_view("GET", 200, "/", COUNTABLE, headers) is (headers in PLAIN)


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


BROWSERS = {"Chrome": DESKTOP_CHROME, "Safari": IPHONE_SAFARI, "Firefox": DESKTOP_FIREFOX}
BROWSERS |= {"Instagram": INSTAGRAM_ANDROID, "Facebook": FACEBOOK_IPHONE}


@pytest.mark.parametrize("user_agent", [*BOTS.values(), *BROWSERS.values()], ids=[*BOTS, *BROWSERS])
def test_crawlers_tools_headless_browsers_and_no_user_agent_are_bots_and_peoples_browsers_not(user_agent):
    assert is_bot(user_agent) is (user_agent in BOTS.values())


def test_the_bot_check_remembers_4096_user_agents_in_memory():
    visit_rules._listed_crawler.cache_clear()
    for n in range(4096 + 10):
        is_bot(f"{DESKTOP_CHROME} {n}")
    info = visit_rules._listed_crawler.cache_info()
    assert info.maxsize == info.currsize == 4096


@pytest.fixture
def listed(monkeypatch) -> list[str]:
    """The user agents crawlerdetect's list is read for (none is remembered yet)."""
    read: list[str] = []
    listed_crawler = visit_rules._listed_crawler
    listed_crawler.cache_clear()

    def reading(user_agent: str) -> bool:
        read.append(user_agent)
        return listed_crawler(user_agent)

    monkeypatch.setattr(visit_rules, "_listed_crawler", reading)
    return read


def padded(user_agent: str, length: int) -> str:
    """``user_agent`` made ``length`` characters long with short words, as a browser's are."""
    return (user_agent + " " + "ab." * length)[:length]


FORGED = ["Mozilla/5.0 (" + "a" * 491 + "qwertzui)", "".join(chr(ord("a") + n * 7 % 26) for n in range(100_000))]


def test_the_list_reads_a_user_agent_of_up_to_512_characters_to_its_end_and_never_a_longer_one_a_bot(listed):
    longest = padded(DESKTOP_CHROME, 512)
    assert len(longest) == 512
    assert not is_bot(longest)
    assert is_bot(padded(DESKTOP_CHROME, 512 - len(" Googlebot/2.1")) + " Googlebot/2.1")
    assert not is_bot("Mozilla/5.0 (" + "a" * 490 + "qwertzui)")  # issue 48's forgery: read, in linear time
    assert len(listed) == 3
    for forged in [padded(DESKTOP_CHROME, 513), DESKTOP_CHROME + " x" * 250, *FORGED]:
        assert is_bot(forged)
    assert len(listed) == 3  # none of them read
    assert visit_rules.USER_AGENT_MAX == 512
    for doc in ("security.md", "performance.md"):  # docs/privacy.md's: in test_every_figure_docs_privacy_gives...
        assert f"agent over {visit_rules.USER_AGENT_MAX} characters" in " ".join((DOCS / doc).read_text().split())


# What a User-Agent header can carry, as the server decodes it (latin-1): no line break.
HEADER_CHARACTERS = "\t" + "".join(map(chr, [*range(0x20, 0x7F), *range(0xA0, 0x100)]))
BROWSER_WORDS = " ".join(BROWSERS.values()).split()
# crawlerdetect's patterns as text: their letters, digits and the separators of a user agent.
CRAWLER_WORDS = [word for pattern in crawler_patterns if (word := re.sub(r"[^A-Za-z0-9 /;.-]", "", pattern))]
YANDEX = ["Yandex", "YandexSearch", "yandexsearch/1.0", "YANDEX", "YandexBot/3.0", "Yandex Search", "Yandex.Search"]


def generated_agents(count: int) -> list[str]:
    """User agents a header can carry: browsers' words, crawlerdetect's patterns whole or cut and
    in either case, Yandex with and without "Search", and random characters, in random order."""
    rng = random.Random(48)

    def piece() -> str:
        draw = rng.random()
        if draw < 0.35:
            return rng.choice(BROWSER_WORDS)
        if draw < 0.6:
            word = rng.choice(CRAWLER_WORDS)
            cut = word[rng.randrange(len(word)) : rng.randrange(len(word)) + 1] if rng.random() < 0.4 else word
            return "".join(char.swapcase() if rng.random() < 0.3 else char for char in cut)
        if draw < 0.7:
            return rng.choice(YANDEX)
        return "".join(rng.choice(HEADER_CHARACTERS) for _ in range(rng.randint(1, 10)))

    agents = []
    for _ in range(count):
        parts = [piece() for _ in range(rng.randint(1, 8))]
        agents.append("".join(part + rng.choice(" ;/()\t") for part in parts)[: rng.choice((60, 200, 512))])
    return agents


EXCLUDED_WORDS_MAX = 16
BROWSER_WORDS_LISTED = re.compile("|".join(excluded_patterns), re.IGNORECASE)


def browser_words(agent: str) -> int:
    """How many of the words crawlerdetect removes before it searches (as its own re.sub finds them)."""
    return len(BROWSER_WORDS_LISTED.findall(agent.strip()))


def test_a_user_agent_with_more_than_16_browser_words_is_a_bot_without_reading_further():
    assert visit_rules.EXCLUDED_WORDS_MAX == EXCLUDED_WORDS_MAX
    assert browser_words("x64 " * EXCLUDED_WORDS_MAX) == EXCLUDED_WORDS_MAX
    assert not is_bot("x64 " * EXCLUDED_WORDS_MAX)
    assert is_bot("x64 " * (EXCLUDED_WORDS_MAX + 1))
    assert max(map(browser_words, BROWSERS.values())) <= 11


def test_the_bot_check_judges_as_crawlerdetect_does_every_user_agent_it_reads():
    """RE2 (and re for its one lookahead) says what crawlerdetect's ``is_crawler`` says."""
    crawlerdetect = CrawlerDetect()
    corpus = [
        *BOTS.values(),
        *BROWSERS.values(),
        *YANDEX,
        *("Mozilla/5.0 (Linux; Android 13) YaBrowser/24.1 YandexSearch/8.10 Mobile", "x YandexSearch Yandex"),
        *("Linux", "x64 " * 128, "Safari/1 " * 56, "b0t", "B0T", "b0t x", "DebugBear", "DebugBear x", "cubot"),
        *generated_agents(400),
    ]
    assert all(len(agent.strip()) <= visit_rules.USER_AGENT_MAX for agent in corpus)
    expected = {
        agent: not agent.strip() or browser_words(agent) > EXCLUDED_WORDS_MAX or crawlerdetect.is_crawler(agent)
        for agent in corpus
    }
    assert {agent: is_bot(agent) for agent in corpus} == expected
    assert sum(expected.values()) > len(corpus) // 4 and sum(not bot for bot in expected.values()) > len(corpus) // 4


def test_a_pattern_re2_refuses_is_searched_by_pythons_re_only_when_that_is_linear():
    union, for_re = visit_rules._crawler_search(["Googlebot", "Yandex(?!Search)"])
    assert union.search("googlebot/2.1") is not None and [pattern.pattern for pattern in for_re] == ["Yandex(?!Search)"]
    assert for_re[0].search("yandex/1.0") and not for_re[0].search("YandexSearch/8.10")
    for pattern in ("(a+)+(?!b)", "(?!x)bot", "Yandex(?!(Search)+)", r"(\w+)\1"):
        with pytest.raises(RuntimeError, match=re.escape(repr(pattern))):
            visit_rules._crawler_search(["Googlebot", pattern])


def test_a_visitor_is_16_bytes_of_an_hmac_sha256_of_one_address_or_ipv6_64_and_user_agent_under_the_days_salt():
    first = visitor_id(SALT, "203.0.113.7", DESKTOP_CHROME)
    assert first == hmac.new(SALT, b"203.0.113.7\0" + DESKTOP_CHROME.encode(), hashlib.sha256).digest()[:16]
    assert visitor_id(SALT, "::ffff:203.0.113.7", DESKTOP_CHROME) == first  # a dual-stack socket's IPv4
    assert visitor_id(SALT, "203.0.113.8", DESKTOP_CHROME) != first
    assert visitor_id(SALT, "203.0.113.7", IPHONE_SAFARI) != first  # another browser: another visitor
    assert visitor_id(bytes(32), "203.0.113.7", DESKTOP_CHROME) != first  # the next day's salt: unlinkable
    assert visitor_id(SALT, "10.0.0.1", "2 x") != visitor_id(SALT, "10.0.0.12", " x")  # no running into each other
    six = visitor_id(SALT, "2001:db8:1:2::1", DESKTOP_CHROME)
    assert visitor_id(SALT, "2001:db8:1:2:ffff:ffff:ffff:ffff", DESKTOP_CHROME) == six
    assert visitor_id(SALT, "2001:db8:1:3::1", DESKTOP_CHROME) != six


NAMED = [
    ("Google", ["https://www.google.co.uk/", "https://www.google.com/search?q=guinea+pig+book", "https://google.de/"]),
    ("Google", ["https://www.google.com.au/", "https://news.google.com/"]),
    ("Google", ["android-app://com.google.android.googlequicksearchbox/"]),
    ("Bing", ["https://www.bing.com/"]),
    ("DuckDuckGo", ["https://duckduckgo.com/"]),
    ("Yahoo", ["https://uk.search.yahoo.com/"]),
    ("Ecosia", ["https://www.ecosia.org/"]),
    ("Brave", ["https://search.brave.com/search?q=x"]),
    ("Qwant", ["https://www.qwant.com/"]),
    ("Startpage", ["https://www.startpage.com/"]),
    ("Yandex", ["https://yandex.ru/"]),
    ("Baidu", ["https://www.baidu.com/"]),
    ("Instagram", ["https://l.instagram.com/", "https://www.instagram.com/"]),
    ("Facebook", ["https://l.facebook.com/l.php?u=x", "https://lm.facebook.com/", "https://m.facebook.com/"]),
    ("Facebook", ["https://fb.com/"]),
    ("X", ["https://t.co/abc", "https://x.com/", "https://twitter.com/"]),
    ("Pinterest", ["https://www.pinterest.com/", "https://www.pinterest.co.uk/", "https://pin.it/abc"]),
    ("LinkedIn", ["https://www.linkedin.com/", "https://lnkd.in/abc"]),
    ("Reddit", ["https://old.reddit.com/r/books"]),
    ("YouTube", ["https://www.youtube.com/"]),
    ("TikTok", ["https://www.tiktok.com/"]),
    ("Threads", ["https://www.threads.net/"]),
    ("Bluesky", ["https://bsky.app/profile/x"]),
    ("WhatsApp", ["https://web.whatsapp.com/"]),
    ("Gmail", ["https://mail.google.com/mail/u/0/", "android-app://com.google.android.gm/"]),
    ("Outlook", ["https://outlook.live.com/", "https://outlook.office.com/"]),
]
HOSTS = [
    ("https://www.Example.ORG/a/b?secret=1", "example.org"),  # the host only, never the path or query
    ("https://user:secret@Example.org/", "example.org"),  # nor who the visitor signed in as
    ("https://school.example.net/newsletter", "school.example.net"),
    ("https://google.evil.example/", "google.evil.example"),  # a name in another's domain is not Google
    ("https://notgoogle.com/", "notgoogle.com"),
    ("https://bücher.example/", "xn--bcher-kva.example"),  # international names in their ASCII form
    ("http://192.0.2.1:8080/", "192.0.2.1"),
    ("https://m.example.org/", "example.org"),
    ("https://www.co/", "www.co"),  # nothing left to name: kept whole
]


LONG_HOST = ".".join(["abcdefghij"] * 9) + ".example"  # cut to 64 characters
HOSTS += [(f"https://{LONG_HOST}/", LONG_HOST[:64])]
OWN_PAGES = [
    "https://books.example.com/about",
    "http://books.example.com/",
    "https://BOOKS.example.com./",
    "https://books.example.com:8443/",
]
NO_SITE = ["", "   ", "not a url", "ftp://example.org/", "https://", "http://[::1", "https://exa mple.org/"]
NO_SITE += ["https://-evil.example/", "https://a..b/", "android-app://com.unknown.app/"]


@pytest.mark.parametrize(
    ("referer", "source"),
    [(referer, name) for name, referers in NAMED for referer in referers]
    + HOSTS
    + [(referer, None) for referer in OWN_PAGES]
    + [(referer, "(direct)") for referer in NO_SITE],
)
def test_a_source_is_a_known_sites_name_another_sites_host_direct_without_a_site_and_none_from_our_pages(
    referer, source
):
    for ours in (OURS, ["https://books.example.com"], ["books.example.com:443"]):  # a host, an origin, host:port
        assert source_of(referer, ours) == source


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
        ("utm_source=%20%0A", None),
        ("utm_source=news%0D%0Aletter&utm_campaign=a%09b", "news letter / a b"),  # a tab or newline: a space
    ],
)
def test_a_campaign_is_the_landing_urls_utm_parts_or_its_ref(query, campaign):
    assert campaign_of(query) == campaign


OTHER_LABELS = [
    ("source", "::1%urgent: your account is locked, call 555-0100 now"),  # an IPv6 scope id
    ("source", "fe80::1%\x85\x9b"),
    ("source", "user@example.org"),
    ("source", "exa mple.org"),
    ("source", "Example.org"),
    ("source", "ex\x85ample.org"),
    ("source", "b\u00fccher.example"),  # a name in its ASCII (xn--) form only
    ("source", "a\\b.example"),
    ("source", "x" * 32 + "." + "y" * 32),  # 65 characters
    ("campaign", "<svg onload=alert(1)>"),
    ("campaign", "=1+1"),
    ("campaign", "ref: a\\b"),
    ("campaign", "ref: x\x9b"),  # a C1 control
    ("campaign", "news\x85letter"),
    ("campaign", "ref: evil\u202egpj.exe"),  # a bidi override
    ("campaign", "a\u200bb"),
    ("campaign", "ref: \N{REPLACEMENT CHARACTER}"),
    ("campaign", " spring"),
    ("campaign", "z" * 65),
    ("page", "/a b"),
    ("page", "about"),
]
CLEAN_LABELS = [
    ("source", "Instagram"),
    ("source", "(direct)"),
    ("source", "xn--bcher-kva.example"),
    ("source", "2001:db8::1"),
    ("source", "192.0.2.1"),
    ("source", "x" * 31 + "." + "y" * 32),  # 64 characters
    ("campaign", "newsletter / email / launch"),
    ("campaign", "ref: école"),
    ("campaign", "spring_sale-2026.v2"),
    ("campaign", "z" * 64),
    ("page", "/books/guinea-pig-or-hamster"),
    ("buy", "guinea-pig-or-hamster www.amazon.com"),
]


@pytest.mark.parametrize(("kind", "key"), OTHER_LABELS + CLEAN_LABELS)
def test_a_label_is_stored_as_other_unless_it_is_a_clean_host_or_text(kind, key):
    assert stored_label(kind, key) == ("(other)" if (kind, key) in OTHER_LABELS else key)


def test_a_campaign_is_cut_to_64_characters_in_all():
    long = "x" * 100
    three = campaign_of(f"utm_source={long}&utm_medium=email&utm_campaign={long}")
    assert three is not None and len(three) == 64
    first, medium, last = three.split(" / ")
    assert medium == "email"  # a short part is kept whole; the long ones share what is left
    assert abs(len(first) - len(last)) <= 1
    assert campaign_of(f"ref={long}") == "ref: " + "x" * 59
    assert campaign_of("utm_source=" + "y" * 64) == "y" * 64
    assert campaign_of("utm_source=" + "y" * 65) == "y" * 64


def test_a_moment_belongs_to_its_utc_day_and_a_days_salt_is_destroyed_48_hours_after_the_day_began():
    assert day_of(datetime(2026, 11, 27, 23, 59, 59, tzinfo=UTC)) == date(2026, 11, 27)
    assert day_of(datetime(2026, 11, 28, 0, 0, tzinfo=UTC)) == date(2026, 11, 28)
    assert day_of(datetime(2026, 11, 27, 23, 30)) == date(2026, 11, 27)  # naive: UTC
    new_york = timezone(timedelta(hours=-5))
    assert day_of(datetime(2026, 11, 27, 20, 0, tzinfo=new_york)) == date(2026, 11, 28)
    destroyed = salt_destroyed_at(date(2026, 11, 27))
    assert destroyed == datetime(2026, 11, 29, 0, 0, tzinfo=UTC)
    assert destroyed.utcoffset() == timedelta(0)
    assert salt_destroyed_at(date(2026, 12, 31)) == datetime(2027, 1, 2, tzinfo=UTC)


LONGEST = "s" * (200 - len(" www.amazon.com"))  # a press of exactly BEACON_BODY_MAX bytes
SHOP = (("coloring-book", "https://www.amazon.com/s?k=x"), ("word-search-book", "https://Shop.Example.org/b/1"))
SHOP += ((LONGEST, "https://www.amazon.com/x"), (LONGEST + "s", "https://www.amazon.com/x"))
NO_PRESS = [b"", b"coloring-book", b"coloring-book ", b" www.amazon.com", b"unknown-book www.amazon.com"]
NO_PRESS += [
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
    f"{LONGEST}s www.amazon.com".encode(),  # 201 bytes
]


@pytest.mark.parametrize(
    ("body", "press"),
    [
        (b"word-search-book shop.example.org", ("word-search-book", "shop.example.org")),
        (b"word-search-book SHOP.example.org", ("word-search-book", "shop.example.org")),
        (f"{LONGEST} www.amazon.com".encode(), (LONGEST, "www.amazon.com")),
        *((body, None) for body in NO_PRESS),
    ],
)
def test_a_press_names_a_known_book_and_exactly_its_stores_host_in_at_most_200_bytes(body, press):
    assert buy_target(body, SHOP) == press
