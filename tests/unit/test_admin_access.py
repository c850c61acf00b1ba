"""The dashboard's sign-in rules without a server (rules/admin_access.py), and what a refused sign-in logs."""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from reflex.istate.data import RouterData

from publisher.rules import admin_access
from publisher.rules.admin_access import SessionTimes
from publisher.server import admin_sign_in, middleware
from publisher.web.states.admin_state import AdminState

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
IDLE = timedelta(minutes=30)


def test_tokens_and_user_handles_carry_256_random_bits_and_only_a_tokens_hash_is_kept():
    tokens = {admin_access.new_token() for _ in range(200)}
    assert len(tokens) == 200
    token = next(iter(tokens))
    assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert admin_access.is_token_shaped(token)
    digest = admin_access.token_hash(token)
    assert len(digest) == 64 and token not in digest
    assert admin_access.token_hash(token) == digest  # the lookup finds it again


@pytest.mark.parametrize(
    "value",
    ["", "a" * 65, "with space", "semi;colon", 'quote"', "ünïcode", None, 12, ["list"], "x\x00y"],
)
def test_anything_not_shaped_like_a_token_is_refused_before_a_database_is_asked(value):
    assert not admin_access.is_token_shaped(value)


def test_a_session_ends_after_the_idle_time_without_an_action_and_12_hours_after_sign_in_whatever_happens():
    fresh = SessionTimes(created_at=NOW, last_active_at=NOW)
    assert admin_access.session_open(fresh, NOW + IDLE - timedelta(seconds=1), IDLE)
    assert not admin_access.session_open(fresh, NOW + IDLE, IDLE)
    busy = SessionTimes(created_at=NOW, last_active_at=NOW + timedelta(hours=11, minutes=59))
    assert admin_access.session_open(busy, NOW + timedelta(hours=11, minutes=59, seconds=30), IDLE)
    assert not admin_access.session_open(busy, NOW + timedelta(hours=12), IDLE)


def test_an_enrolment_link_lasts_24_hours_and_carries_its_token_in_the_fragment():
    assert timedelta(hours=24) == admin_access.ENROLMENT_VALID_FOR
    url = admin_access.enrolment_url("https://books.example.com/", "tok-en_1")
    assert url == "https://books.example.com/admin/enrol#tok-en_1"


def test_the_relying_party_is_the_sites_host_and_its_one_origin_written_as_a_browser_sends_it():
    party = admin_access.relying_party("https://www.Books.example.com")
    assert party.rp_id == "www.books.example.com"
    assert party.origins == ("https://www.books.example.com",)
    party = admin_access.relying_party("https://Books.example.com:443/")  # no default port, as a browser's Origin
    assert party.origins == ("https://books.example.com",)
    assert admin_access.relying_party("http://books.example.com:8080").origins == ("http://books.example.com:8080",)


def test_on_the_development_server_the_page_on_localhost_is_the_origin():
    party = admin_access.relying_party("http://localhost:3000", development_ports=[3100])
    assert party.rp_id == "localhost"
    assert party.origins == ("http://localhost:3100", "http://localhost:3000")
    elsewhere = admin_access.relying_party("https://books.example.com", development_ports=[3000])
    assert (elsewhere.rp_id, elsewhere.origins) == ("localhost", ("http://localhost:3000",))


def test_the_cookie_is_httponly_strict_and_host_only_secure_over_https():
    cookie = admin_access.session_cookie("abc", https=True)
    assert cookie.startswith("__Host-publisher-admin=abc; Path=/; ")
    parts = cookie.split("; ")
    assert {"HttpOnly", "SameSite=Strict", "Secure"} <= set(parts)
    assert not any(part.lower().startswith("domain=") for part in parts)  # __Host-: this host only
    plain = admin_access.session_cookie("abc", https=False)
    assert plain.startswith("publisher-admin=abc; ") and "Secure" not in plain.split("; ")
    assert "Max-Age=0" in admin_access.session_cookie("", https=True).split("; ")


def test_over_https_only_the_host_prefixed_cookie_counts_and_over_http_only_the_plain_one():
    token = admin_access.new_token()
    assert admin_access.session_token(f"a=1; __Host-publisher-admin={token}; b=2", https=True) == token
    assert admin_access.session_token(f"publisher-admin={token}", https=True) is None  # plantable over https
    assert admin_access.session_token(f"publisher-admin={token}", https=False) == token  # development
    assert admin_access.session_token(f"__Host-publisher-admin={token}", https=False) is None
    assert admin_access.session_token("__Host-publisher-admin=not a token!", https=True) is None
    assert admin_access.session_token("other=1", https=True) is None
    assert admin_access.session_token("", https=False) is None


@pytest.mark.parametrize("https", [True, False])
@pytest.mark.parametrize(
    "cookies",
    [
        "publisher-admin={planted}; __Host-publisher-admin={own}",
        "__Host-publisher-admin={own}; publisher-admin={planted}",
        "__Host-publisher-admin={planted}; __Host-publisher-admin={own}",
        "publisher-admin={own}; publisher-admin={planted}",
    ],
)
def test_two_session_cookies_in_one_request_are_nobodys_session(cookies, https):
    """With two, which one a sibling subdomain or plain http planted cannot be told: neither counts."""
    header = cookies.format(planted=admin_access.new_token(), own=admin_access.new_token())
    assert admin_access.session_token(header, https=https) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Ada", None),
        ("  Ada Lovelace  ", None),
        ("", "an admin's name must not be empty"),
        ("   ", "an admin's name must not be empty"),
        ("x" * 65, "an admin's name must be at most 64 characters"),
        ("Ada\nEvil", "an admin's name must be printable text on one line"),
        ("Ada\x1b[31m", "an admin's name must be printable text on one line"),
    ],
)
def test_an_admins_name_is_printable_text_on_one_line(name, problem):
    assert admin_access.check_admin_name(name) == problem


@pytest.mark.parametrize(
    ("scheme", "cookies", "counted"),
    [
        ("https", "__Host-publisher-admin={own}", True),
        ("https", "publisher-admin={own}", False),
        ("https", "publisher-admin={planted}; __Host-publisher-admin={own}", False),
        ("http", "publisher-admin={own}", True),
        ("http", "__Host-publisher-admin={own}", False),
        (None, "__Host-publisher-admin={own}", False),  # no door in front: not https
    ],
)
def test_the_dashboards_state_reads_the_cookie_of_the_scheme_the_event_channels_door_wrote(scheme, cookies, counted):
    own = admin_access.new_token()
    headers = {"cookie": cookies.format(own=own, planted=admin_access.new_token())}
    if scheme is not None:
        headers[admin_access.CHANNEL_SCHEME_HEADER] = scheme
    state = AdminState(_reflex_internal_init=True)
    state.router = RouterData.from_router_data({"token": "tab-1", "pathname": "/admin", "headers": headers})
    assert state._session_hash() == (admin_access.token_hash(own) if counted else None)


async def nothing_here(scope, receive, send):
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.asyncio
async def test_a_refused_sign_in_is_logged_once_a_minute_as_a_short_escaped_excerpt(monkeypatch, caplog):
    """A 200 KB Origin on every attempt wrote a 200 KB warning line each time (issue 48)."""
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    party = admin_access.relying_party("https://books.example.com")
    monkeypatch.setattr(admin_sign_in, "relying_party", lambda: party)
    origin = "https://evil.example/\x1b[2J" + "a" * 200_000
    transport = httpx.ASGITransport(app=middleware.route_table(nothing_here))
    async with httpx.AsyncClient(transport=transport, base_url="https://books.example.com") as http:
        with caplog.at_level(logging.WARNING, logger=admin_sign_in.__name__):
            for _ in range(3):
                refused = await http.post(admin_sign_in.SIGN_IN_OPTIONS, headers={"Origin": origin})
                assert refused.status_code == 403
    [line] = [record.getMessage() for record in caplog.records if record.name == admin_sign_in.__name__]
    assert line.startswith("Dashboard sign-in/options: refused, not from the site's own page (Origin https://evil")
    assert "\x1b" not in line and "\\x1b[2J" in line  # escaped: no terminal sequence reaches the log
    assert len(line) < 200
