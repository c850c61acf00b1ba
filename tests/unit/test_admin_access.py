"""The dashboard's sign-in rules without a server (rules/admin_access.py); over HTTP with the database faked:
what a refused sign-in logs, and the CSV downloads, which need the session's cookie and the site's own page."""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import sqlalchemy
from reflex.istate.data import RouterData
from starlette.responses import PlainTextResponse

from publisher.content import admin_copy
from publisher.rules import admin_access
from publisher.rules.admin_access import RelyingParty, SessionTimes
from publisher.server import admin_sign_in, middleware
from publisher.storage import admins, subscribers
from publisher.web.states.admin_state import AdminState

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
IDLE = timedelta(minutes=30)
ORIGIN = "https://books.example.com"
PARTY = RelyingParty("books.example.com", (ORIGIN,))
TOKEN = admin_access.new_token()
COOKIE = {"Cookie": f"{admin_access.SECURE_COOKIE_NAME}={TOKEN}"}
ADA = admins.AdminIdentity(admin_id=1, name="Ada", user_handle="handle")


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
    "value", ["", "a" * 65, "with space", "semi;colon", 'quote"', "ünïcode", None, 12, ["list"], "x\x00y"]
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


@pytest.mark.parametrize(
    ("site_url", "ports", "rp_id", "origins"),
    [
        ("https://www.Books.example.com", [], "www.books.example.com", ("https://www.books.example.com",)),
        ("https://Books.example.com:443/", [], "books.example.com", (ORIGIN,)),  # no default port, as an Origin
        ("http://books.example.com:8080", [], "books.example.com", ("http://books.example.com:8080",)),
        # On the development server, the page on localhost is the origin.
        ("http://localhost:3000", [3100], "localhost", ("http://localhost:3100", "http://localhost:3000")),
        (ORIGIN, [3000], "localhost", ("http://localhost:3000",)),
    ],
)
def test_the_relying_party_is_the_sites_host_and_its_origin_written_as_a_browser_sends_it(
    site_url, ports, rp_id, origins
):
    assert admin_access.relying_party(site_url, development_ports=ports) == RelyingParty(rp_id, origins)


def test_the_cookie_is_httponly_strict_and_host_only_secure_over_https():
    cookie = admin_access.session_cookie("abc", https=True)
    assert cookie.startswith("__Host-publisher-admin=abc; Path=/; ")
    parts = cookie.split("; ")
    assert {"HttpOnly", "SameSite=Strict", "Secure"} <= set(parts)
    assert not any(part.lower().startswith("domain=") for part in parts)  # __Host-: this host only
    plain = admin_access.session_cookie("abc", https=False)
    assert plain.startswith("publisher-admin=abc; ") and "Secure" not in plain.split("; ")
    assert "Max-Age=0" in admin_access.session_cookie("", https=True).split("; ")


TWO_COOKIES = [
    "publisher-admin={planted}; __Host-publisher-admin={own}",
    "__Host-publisher-admin={own}; publisher-admin={planted}",
    "__Host-publisher-admin={planted}; __Host-publisher-admin={own}",
    "publisher-admin={own}; publisher-admin={planted}",
]


@pytest.mark.parametrize(
    ("cookies", "https", "counted"),
    [
        ("a=1; __Host-publisher-admin={own}; b=2", True, True),
        ("publisher-admin={own}", True, False),  # plantable over https
        ("publisher-admin={own}", False, True),  # development
        ("__Host-publisher-admin={own}", False, False),
        ("__Host-publisher-admin=not a token!", True, False),
        ("other=1", True, False),
        ("", False, False),
        # Two: which one a sibling subdomain or plain http planted cannot be told, so neither counts.
        *((two, https, False) for two in TWO_COOKIES for https in (True, False)),
    ],
)
def test_a_session_cookie_counts_alone_and_under_its_schemes_name_only(cookies, https, counted):
    own = admin_access.new_token()
    header = cookies.format(own=own, planted=admin_access.new_token())
    assert admin_access.session_token(header, https=https) == (own if counted else None)


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
        ("http", "publisher-admin={own}", True),
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


def client() -> httpx.AsyncClient:
    app = middleware.route_table(PlainTextResponse("no page here", status_code=404))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN)


@pytest.fixture
def audited(monkeypatch) -> list[tuple]:
    """The endpoints for books.example.com, with a database that has Ada's session (TOKEN) open and an empty list."""
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setattr(admin_sign_in, "relying_party", lambda: PARTY)

    def session_admin(session_hash, idle, now=None, touch=False, db_url=None):
        return ADA if session_hash == admin_access.token_hash(TOKEN) else None

    lines: list[tuple] = []
    monkeypatch.setattr(admins, "session_admin", session_admin)
    monkeypatch.setattr(admins, "audit_log", lambda *args, **kwargs: [])
    monkeypatch.setattr(admins, "audit", lambda *args, **kwargs: lines.append(args))
    monkeypatch.setattr(subscribers, "list_subscribers", lambda *args, **kwargs: [])
    return lines


@pytest.mark.asyncio
async def test_with_the_cloud_gateway_every_admin_path_is_not_found(monkeypatch):
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://abc.example.com")
    async with client() as http:
        for path in ("/admin", "/admin/enrol", admin_sign_in.SIGN_IN_OPTIONS, "/admin/api/anything"):
            assert (await http.post(path, json={}, headers={"Origin": ORIGIN})).status_code == 404, path
            assert (await http.get(path)).status_code == 404, path


@pytest.mark.asyncio
async def test_a_refused_sign_in_is_logged_once_a_minute_as_a_short_escaped_excerpt(audited, caplog):
    """A 200 KB Origin on every attempt wrote a 200 KB warning line each time (issue 48)."""
    origin = "https://evil.example/\x1b[2J" + "a" * 200_000
    async with client() as http:
        with caplog.at_level(logging.WARNING, logger=admin_sign_in.__name__):
            for _ in range(3):
                refused = await http.post(admin_sign_in.SIGN_IN_OPTIONS, headers={"Origin": origin})
                assert refused.status_code == 403
    [line] = [record.getMessage() for record in caplog.records if record.name == admin_sign_in.__name__]
    assert line.startswith("Dashboard sign-in/options: refused, not from the site's own page (Origin https://evil")
    assert "\x1b" not in line and "\\x1b[2J" in line  # escaped: no terminal sequence reaches the log
    assert len(line) < 200


@pytest.mark.asyncio
@pytest.mark.parametrize("path", [admin_access.EXPORT_PATH, admin_access.AUDIT_PATH])
async def test_a_download_needs_a_session_and_the_sites_own_page_even_with_a_valid_cookie(audited, path):
    async with client() as http:
        assert (await http.post(path, headers={"Origin": ORIGIN})).status_code == 403  # no cookie
        assert (await http.get(path, headers=COOKIE)).status_code == 405
        own_page = await http.post(path, headers={**COOKIE, "Origin": ORIGIN})
        assert own_page.status_code == 200, own_page.text  # the cookie is a signed-in admin's
        assert own_page.headers["content-type"].startswith("text/csv")
        assert len(audited) == 1
        for foreign in ("https://evil.example", "https://books.example.com.evil.example", "http://books.example.com"):
            refused = await http.post(path, headers={**COOKIE, "Origin": foreign})
            assert refused.status_code == 403, foreign
            assert "text/csv" not in refused.headers["content-type"]
        cross_site = await http.post(path, headers={**COOKIE, "Sec-Fetch-Site": "cross-site"})
        assert cross_site.status_code == 403
    assert len(audited) == 1  # nothing refused was downloaded, so nothing more was written down


@pytest.mark.asyncio
@pytest.mark.parametrize("path", [admin_access.EXPORT_PATH, admin_sign_in.SIGN_IN_OPTIONS])
async def test_a_database_away_is_a_503_to_retry_in_30_seconds(audited, monkeypatch, path):
    def away(*args, **kwargs):
        raise sqlalchemy.exc.OperationalError("SELECT", {}, ConnectionRefusedError())

    monkeypatch.setattr(admins, "session_admin", away)
    monkeypatch.setattr(admins, "begin_ceremony", away)
    async with client() as http:
        answer = await http.post(path, headers={**COOKIE, "Origin": ORIGIN}, json={})
    assert (answer.status_code, answer.headers["retry-after"]) == (503, "30")
    assert answer.json()["error"] == admin_copy.TRY_AGAIN_LATER


@pytest.mark.asyncio
async def test_a_ceremony_is_begun_only_from_the_sites_own_page_and_an_oversized_body_is_refused_unread(
    audited, monkeypatch
):
    begun: list[tuple] = []
    monkeypatch.setattr(admins, "begin_ceremony", lambda *args, **kwargs: begun.append(args))
    async with client() as http:
        assert (await http.post(admin_sign_in.SIGN_IN_OPTIONS, json={})).status_code == 403  # no Origin
        foreign = await http.post(
            admin_sign_in.ENROL_OPTIONS, json={"token": TOKEN}, headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        same_origin = {"Sec-Fetch-Site": "same-origin"}
        assert (await http.post(admin_sign_in.SIGN_IN_OPTIONS, json={}, headers=same_origin)).status_code == 200
        huge = b'{"x":"' + b"a" * 20_000 + b'"}'
        too_large = await http.post(
            admin_sign_in.ENROL, content=huge, headers={"Origin": ORIGIN, "Content-Type": "application/json"}
        )
        assert too_large.status_code == 413
        assert (await http.get(admin_sign_in.SIGN_IN)).status_code == 405
    assert len(begun) == 1  # the same-origin one: nothing refused reached the database
