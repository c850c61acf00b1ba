"""Whether a request comes from the site's own page (publisher/rules/same_site.py), as each policy its
callers give it judges: the forms' plain POST, the dashboard, the event channel, the beacon."""

from __future__ import annotations

import pytest

from publisher.rules import admin_access, same_site
from publisher.server import event_channel

SITE = {"https://www.example.com", "http://127.0.0.1:8000"}
DASHBOARD_SITE = admin_access.relying_party("https://books.example.com").origins


@pytest.mark.parametrize(
    ("policy", "origin", "fetch_site", "referer", "allowed"),
    [
        (same_site.FORM_POST, "https://www.example.com", None, None, True),
        (same_site.FORM_POST, "HTTPS://WWW.EXAMPLE.COM:443", None, None, True),
        (same_site.FORM_POST, "http://127.0.0.1:8000", "cross-site", None, True),  # Origin decides first
        (same_site.FORM_POST, "https://evil.example", "same-origin", "https://www.example.com/contact-us", False),
        (same_site.FORM_POST, "null", "same-origin", None, False),
        (same_site.FORM_POST, "https://www.example.com.evil.example", None, None, False),
        (same_site.FORM_POST, "http://www.example.com", None, None, False),  # another scheme is another origin
        (same_site.FORM_POST, None, "same-origin", None, True),
        (same_site.FORM_POST, None, "same-site", None, False),
        (same_site.FORM_POST, None, "cross-site", "https://www.example.com/", False),
        (same_site.FORM_POST, None, "none", None, False),
        (same_site.FORM_POST, None, None, "https://www.example.com/contact-us?x=1", True),
        (same_site.FORM_POST, None, None, "https://evil.example/www.example.com", False),
        (same_site.FORM_POST, None, None, "not a url", False),
        (same_site.FORM_POST, None, None, "https://www.example.com:99999/", False),  # no port
        (same_site.FORM_POST, None, None, None, False),
        (same_site.DASHBOARD, "https://books.example.com", None, None, True),
        (same_site.DASHBOARD, "https://books.example.com", "cross-site", None, True),  # Origin decides first
        (same_site.DASHBOARD, "https://evil.example.com", "same-origin", None, False),
        (same_site.DASHBOARD, "http://books.example.com", None, None, False),  # another scheme is another origin
        (same_site.DASHBOARD, "null", "same-origin", None, True),  # no usable Origin: Sec-Fetch-Site decides
        (same_site.DASHBOARD, None, "same-origin", None, True),
        (same_site.DASHBOARD, None, "same-site", None, False),
        (same_site.DASHBOARD, None, "cross-site", None, False),
        (same_site.DASHBOARD, None, None, "https://books.example.com/admin", False),  # a Referer never decides here
        (same_site.DASHBOARD, None, None, None, False),  # neither says same-origin: refused
        (same_site.BEACON, "https://www.example.com", None, None, True),
        (same_site.BEACON, "http://127.0.0.1:8000", "cross-site", None, True),  # Origin decides when there is one
        (same_site.BEACON, "https://evil.example", "same-origin", "https://www.example.com/", False),
        (same_site.BEACON, "https://www.example.com.evil.example", None, None, False),
        (same_site.BEACON, "http://www.example.com", None, None, False),  # another scheme is another origin
        (same_site.BEACON, "null", None, None, False),  # an opaque origin: a sandboxed frame, a file, a redirect chain
        (same_site.BEACON, "null", "same-origin", "https://www.example.com/", False),  # and nothing stands in for it
        (same_site.BEACON, None, "same-origin", None, True),  # no Origin: Sec-Fetch-Site decides
        (same_site.BEACON, None, "same-site", None, False),
        (same_site.BEACON, None, "cross-site", None, False),
        (same_site.BEACON, None, "none", None, False),
        (same_site.BEACON, None, None, "https://www.example.com/books/x", False),  # a Referer never decides here
        (same_site.BEACON, None, None, None, False),  # neither: refused
    ],
)
def test_a_request_comes_from_the_sites_own_page_when_the_first_header_its_policy_reads_says_so(
    policy, origin, fetch_site, referer, allowed
):
    ours = DASHBOARD_SITE if policy is same_site.DASHBOARD else SITE
    judged = same_site.same_origin(origin, ours, policy, sec_fetch_site=fetch_site, referer=referer)
    assert judged is allowed


def channel_allows(origins: event_channel.ChannelOrigins, origin: str | None, host: str) -> bool:
    return same_site.same_origin(origin, origins.of(host), same_site.EVENT_CHANNEL, sec_fetch_site="same-origin")


def test_the_event_channel_takes_the_site_itself_the_configured_site_or_in_development_the_development_server():
    rule = event_channel.ChannelOrigins(site_origin="https://books.example.com")
    assert channel_allows(rule, None, "books.example.com")  # no Origin: not a browser page
    assert channel_allows(rule, "https://books.example.com", "127.0.0.1:8000")  # the configured site, any Host
    assert channel_allows(rule, "http://127.0.0.1:8000", "127.0.0.1:8000")  # the page's own host and port
    assert channel_allows(rule, "https://Shop.Example.org", "shop.example.org")  # one build serves on any host
    assert channel_allows(rule, "https://shop.example.org:443", "shop.example.org")
    assert channel_allows(rule, "http://[::1]:8000", "[::1]:8000")
    for foreign, host in (
        ("https://evil.example", "books.example.com"),
        ("null", "books.example.com"),  # Sec-Fetch-Site never stands in for the Origin here
        ("http://books.example.com:8080", "books.example.com"),
        ("https://books.example.com.evil.example", "books.example.com"),
        ("http://localhost:3000", "localhost:8000"),  # a development server's page, in production
        ("chrome-extension://abcdef", "books.example.com"),
        ("https://shop.example.org", None),
        ("not a url", "books.example.com"),
        ("http://127.0.0.1:8000", "127.0.0.1:8000, evil"),
        ("https://user@books.example.com", "books.example.com"),  # no origin a browser writes
        ("http://books.example.com", "evil@books.example.com"),  # a Host header with more than a host
        ("http://books.example.com", "books.example.com/x"),
    ):
        assert not channel_allows(rule, foreign, host or ""), (foreign, host)
    development = event_channel.ChannelOrigins(
        site_origin="http://localhost:3000", dev_port=3100, dev_hosts=("192.168.1.5",)
    )
    assert channel_allows(development, "http://localhost:3100", "localhost:8100")
    assert channel_allows(development, "http://127.0.0.1:3100", "localhost:8100")
    assert channel_allows(development, "http://[::1]:3100", "localhost:8100")
    assert channel_allows(development, "http://192.168.1.5:3100", "192.168.1.5:8100")
    assert channel_allows(development, "http://devbox.lan:3100", "devbox.lan:8100")  # the page's host, the dev port
    assert not channel_allows(development, "http://evil.example:3100", "localhost:8100")
    assert not channel_allows(development, "http://localhost:3101", "localhost:8100")
    assert not channel_allows(development, "https://localhost:3100", "localhost:8100")  # the dev server is http
