"""The dashboard's sign-in: ``admin invite|list|revoke`` and the WebAuthn ceremonies over HTTP, answered
by a software passkey (tests/authenticator.py); on PostgreSQL too where its SQL differs (locks)."""

from __future__ import annotations

import logging
from datetime import timedelta

import httpx
import pytest
import sqlalchemy
from starlette.responses import PlainTextResponse

from publisher.content import admin_copy
from publisher.limits import submits
from publisher.limits.submits import Limiter
from publisher.rules import admin_access
from publisher.rules.admin_access import RelyingParty
from publisher.server import admin_sign_in, middleware
from publisher.server.admin_sign_in import ENROL, ENROL_OPTIONS, SIGN_IN, SIGN_IN_OPTIONS, SIGN_OUT
from publisher.storage import admins, tables
from publisher.storage.tables import AdminCeremony, utc_now
from tests.authenticator import SoftPasskey
from tests.databases import ON_BOTH_DATABASES
from tests.support import publisher_gateway

ORIGIN = "https://books.example.com"
PARTY = RelyingParty("books.example.com", (ORIGIN,))
FROM_PAGE = {"Origin": ORIGIN}
IDLE = timedelta(minutes=30)
NO_PAGE = PlainTextResponse("no page here", status_code=404)


@pytest.fixture
def client(db_url, monkeypatch):
    """A client of the sign-in endpoints on ``db_url`` for books.example.com, from an address, on a clock."""
    monkeypatch.setattr(admin_sign_in, "relying_party", lambda: PARTY)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    submits.shared_limiter.set(Limiter())

    def from_address(address: str = "127.0.0.1", clock=None) -> httpx.AsyncClient:
        app = middleware.route_table(NO_PAGE, db_url=db_url, clock=clock)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 40000)), base_url=ORIGIN)

    yield from_address
    submits.shared_limiter.set(None)


def invite(db_url: str, name: str = "Ada") -> str:
    """``admin invite NAME`` as the operator types it; the token of the link it printed."""
    result = publisher_gateway(db_url, "admin", "invite", name, env={"REFLEX_DEPLOY_URL": ORIGIN})
    [line] = result.stdout.splitlines()  # the link, alone on standard output
    assert line.startswith(f"{ORIGIN}/admin/enrol#")
    return line.split("#", 1)[1]


async def enrol(http: httpx.AsyncClient, token: str, passkey: SoftPasskey) -> httpx.Response:
    started = await http.post(ENROL_OPTIONS, json={"token": token}, headers=FROM_PAGE)
    assert started.status_code == 200, started.text
    options = started.json()["options"]
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    answer = {"ceremony": started.json()["ceremony"], "credential": passkey.create(options)}
    return await http.post(ENROL, json=answer, headers=FROM_PAGE)


async def sign_in(http: httpx.AsyncClient, passkey: SoftPasskey, counter: int | None = None) -> httpx.Response:
    started = await http.post(SIGN_IN_OPTIONS, json={}, headers=FROM_PAGE)
    assert started.status_code == 200, started.text
    options = started.json()["options"]
    assert "allowCredentials" not in options or options["allowCredentials"] == []  # no user name to type
    answer = {"ceremony": started.json()["ceremony"], "credential": passkey.get(options, counter=counter)}
    return await http.post(SIGN_IN, json=answer, headers=FROM_PAGE)


def session_of(response: httpx.Response) -> str:
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" in cookie
    assert cookie.startswith("__Host-publisher-admin=")  # https: the prefixed name
    return cookie.split(";", 1)[0].split("=", 1)[1]


def signed_in_as(db_url: str, session: str) -> str | None:
    admin = admins.session_admin(admin_access.token_hash(session), IDLE, db_url=db_url)
    return None if admin is None else admin.name


def stored_text(db_url: str) -> str:
    """Every value of every admin table, as text: where a token would show if it were stored."""
    rows = []
    with tables.engine(db_url).connect() as connection:
        for table in ("admin", "admin_passkey", "admin_enrolment", "admin_session", "admin_ceremony"):
            rows += [repr(tuple(row)) for row in connection.execute(sqlalchemy.text(f"SELECT * FROM {table}"))]
    return "\n".join(rows)


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_an_invitation_enrols_a_passkey_once_and_signs_in_with_an_httponly_strict_cookie(client, db_url):
    token = invite(db_url)
    assert token not in stored_text(db_url)  # only its hash is kept
    assert admins.list_admins(db_url)[0].passkey is None  # invited, not enrolled yet: listed without one
    passkey = SoftPasskey(ORIGIN)
    async with client() as http:
        enrolled = await enrol(http, token, passkey)
        assert enrolled.status_code == 200, enrolled.text
        assert enrolled.headers["cache-control"] == "no-store"
        session = session_of(enrolled)
        assert signed_in_as(db_url, session) == "Ada"
        assert session not in stored_text(db_url)
        again = await http.post(ENROL_OPTIONS, json={"token": token}, headers=FROM_PAGE)
        assert again.status_code == 404  # single use
        assert "not valid" in again.json()["error"]

        signed_in = await sign_in(http, passkey)
        assert signed_in.status_code == 200, signed_in.text
        second = session_of(signed_in)
        assert second != session and signed_in_as(db_url, second) == "Ada"

        out = await http.post(SIGN_OUT, json={}, headers={**FROM_PAGE, "Cookie": f"__Host-publisher-admin={second}"})
        assert out.status_code == 200 and "Max-Age=0" in out.headers["set-cookie"]
        assert signed_in_as(db_url, second) is None
        assert signed_in_as(db_url, session) == "Ada"  # another device's session goes on

    listing = publisher_gateway(db_url, "admin", "list").stdout.splitlines()
    assert listing[0] == "admin,passkey,created,last_used"
    [row] = listing[1:]
    name, passkey_name, created, last_used = row.split(",")
    assert (name, passkey_name) == ("Ada", "passkey 1") and created and last_used not in ("", "never")


@pytest.mark.asyncio
async def test_a_cloned_passkey_is_refused_and_logged_and_revoke_ends_every_session_and_the_passkey(
    client, db_url, caplog
):
    passkey = SoftPasskey(ORIGIN)
    async with client() as http:
        session = session_of(await enrol(http, invite(db_url), passkey))
        assert (await sign_in(http, passkey, counter=5)).status_code == 200
        with caplog.at_level(logging.ERROR, logger=admin_sign_in.__name__):
            cloned = await sign_in(http, passkey, counter=3)
        assert cloned.status_code == 400 and "set-cookie" not in cloned.headers
        assert "signature counter went backwards" in caplog.text
        revoked = publisher_gateway(db_url, "admin", "revoke", "Ada")
        assert "1 passkey(s) removed, 2 session(s) ended" in revoked.stderr
        assert signed_in_as(db_url, session) is None
        refused = await sign_in(http, passkey)
        assert refused.status_code == 400 and "set-cookie" not in refused.headers
        # The way back: a new invitation, a new passkey.
        assert (await enrol(http, invite(db_url), SoftPasskey(ORIGIN))).status_code == 200
    assert publisher_gateway(db_url, "admin", "revoke", "Nobody", check=False).returncode == 1


@pytest.mark.asyncio
async def test_failed_attempts_are_limited_per_address_and_then_refused_before_being_looked_at(client, db_url):
    submits.shared_limiter.set(Limiter(per_address=submits.Limit(3, 600)))
    token = invite(db_url)
    async with client() as http:
        wrong = [await http.post(ENROL_OPTIONS, json={"token": f"wrong{i}"}, headers=FROM_PAGE) for i in range(5)]
        assert [answer.status_code for answer in wrong] == [404, 404, 404, 429, 429]
        # Over the limit, even the right link is refused unread: a guesser learns nothing.
        right = await http.post(ENROL_OPTIONS, json={"token": token}, headers=FROM_PAGE)
        assert right.status_code == 429


def open_ceremonies(db_url: str) -> int:
    with tables.engine(db_url).connect() as connection:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(AdminCeremony)).scalar_one()


async def ask_sign_in(http: httpx.AsyncClient) -> httpx.Response:
    return await http.post(SIGN_IN_OPTIONS, json={}, headers=FROM_PAGE)


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_flood_of_sign_in_ceremonies_from_one_address_is_refused_and_the_table_stops_at_five(client, db_url):
    """Five may wait per address and 40 be begun in 10 minutes; another address is served."""
    async with client("203.0.113.5") as flood:
        started = [await ask_sign_in(flood) for _ in range(5)]
        assert [answer.status_code for answer in started] == [200] * 5
        refused = [await ask_sign_in(flood) for _ in range(34)]  # 39 begun in all
        assert {answer.status_code for answer in refused} == {429}
        assert refused[0].json()["error"] == admin_copy.TOO_MANY_CEREMONIES
        assert refused[0].headers["retry-after"] == "300"  # the oldest waiting one is gone by then
        assert open_ceremonies(db_url) == 5

        async with client("198.51.100.8") as other:
            assert (await ask_sign_in(other)).status_code == 200
        assert open_ceremonies(db_url) == 6

        async def answer_badly(ceremony: httpx.Response) -> None:
            bad = {"ceremony": ceremony.json()["ceremony"], "credential": {}}
            answered = await flood.post(SIGN_IN, json=bad, headers=FROM_PAGE)
            assert answered.status_code == 400

        await answer_badly(started[0])
        assert (await ask_sign_in(flood)).status_code == 200  # the 40th begun from this address
        await answer_badly(started[1])
        over = await ask_sign_in(flood)  # a place is free, but 40 were begun in these 10 minutes
        assert over.status_code == 429 and over.headers["retry-after"] == "600"
        assert open_ceremonies(db_url) == 5


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_the_whole_site_keeps_at_most_1000_ceremonies_waiting_and_frees_them_as_they_expire(client, db_url):
    now = utc_now()
    waiting = {"challenge": b"c", "enrolment_hash": None, "expires_at": now + timedelta(minutes=4)}
    rows = [{**waiting, "id_hash": f"{n:064x}", "address": f"10.0.{n // 250}.{n % 250}"} for n in range(998)]
    with tables.engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.insert(AdminCeremony), rows)
    for number, address in enumerate(("198.51.100.1", "198.51.100.2")):
        async with client(address, clock=lambda: now) as http:
            assert (await ask_sign_in(http)).status_code == 200, number
    assert open_ceremonies(db_url) == 1000
    async with client("198.51.100.3", clock=lambda: now) as http:
        busy = await ask_sign_in(http)
    assert busy.status_code == 429 and busy.json()["error"] == admin_copy.SIGN_IN_BUSY
    assert open_ceremonies(db_url) == 1000
    later = now + admin_access.CEREMONY_VALID_FOR
    async with client("198.51.100.3", clock=lambda: later) as http:
        assert (await ask_sign_in(http)).status_code == 200
    assert open_ceremonies(db_url) == 1  # the 1,000 that ran out were cleared


def test_an_enrolment_link_expires_after_24_hours_and_a_session_after_30_idle_minutes(db_url):
    now = utc_now()
    token = admin_access.new_token()
    admins.invite("Ada", admin_access.token_hash(token), admin_access.new_token(), now=now, db_url=db_url)
    assert admins.enrolment_admin(admin_access.token_hash(token), now + timedelta(hours=23), db_url) is not None
    assert admins.enrolment_admin(admin_access.token_hash(token), now + timedelta(hours=24), db_url) is None

    session = admin_access.token_hash(admin_access.new_token())
    stored = admins.enrol(admin_access.token_hash(token), "cred-1", b"key", 0, session, now=now, db_url=db_url)
    assert stored is not None
    assert admins.session_admin(session, IDLE, now + timedelta(minutes=29), touch=True, db_url=db_url) is not None
    # Touched at 29 minutes: open until 59; a refresh (no touch) does not keep it open.
    assert admins.session_admin(session, IDLE, now + timedelta(minutes=58), db_url=db_url) is not None
    assert admins.session_admin(session, IDLE, now + timedelta(minutes=59), db_url=db_url) is None
    assert admins.session_admin(session, IDLE, now + timedelta(minutes=1), db_url=db_url) is None  # its row is gone


@pytest.mark.parametrize(
    ("name", "env", "why"),
    [
        ("Ada", {"PUBLISHER_GATEWAY_URL": "https://abc.example.com"}, "PUBLISHER_GATEWAY_URL is set, so the cloud"),
        ("Ada\x1b[31m", {}, "printable text on one line"),
    ],
)
def test_invite_refuses_with_the_cloud_gateway_or_an_unprintable_name_and_says_why(db_url, name, env, why):
    result = publisher_gateway(db_url, "admin", "invite", name, check=False, env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert why in result.stderr


class LoopStopped(Exception):
    """Ends a background loop the test runs, at the turn it chose."""


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_ceremony_that_ran_out_goes_with_its_address_within_a_minute_though_no_other_begins(client, db_url):
    started = utc_now()
    now = [started]
    async with client("198.51.100.40", clock=lambda: now[0]) as stranger:
        assert (await ask_sign_in(stranger)).status_code == 200
    assert "198.51.100.40" in stored_text(db_url)
    ran_out = started + admin_access.CEREMONY_VALID_FOR
    turns: list[tuple[float, int]] = []  # (seconds since the ceremony began, ceremonies left) after each turn

    async def time_passes(seconds: float) -> None:
        turns.append(((now[0] - started).total_seconds(), open_ceremonies(db_url)))
        if now[0] - ran_out >= timedelta(seconds=seconds):
            raise LoopStopped
        now[0] += timedelta(seconds=seconds)

    with pytest.raises(LoopStopped):
        await admin_sign_in.clear_ceremonies(db_url, clock=lambda: now[0], sleep=time_passes)
    assert turns == [(0, 1), (60, 1), (120, 1), (180, 1), (240, 1), (300, 0), (360, 0)]
    assert "198.51.100.40" not in stored_text(db_url)


@pytest.mark.asyncio
async def test_the_ceremonies_loop_outlives_a_database_that_is_away_and_starts_nothing_without_a_dashboard(
    monkeypatch, caplog
):
    def away(now, db_url):
        raise sqlalchemy.exc.OperationalError("DELETE", {}, ConnectionRefusedError())

    async def time_passes(seconds: float) -> None:
        if len(caplog.records) == 2:
            raise LoopStopped

    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setattr(admins, "delete_expired_ceremonies", away)
    with caplog.at_level(logging.WARNING, logger=admin_sign_in.__name__), pytest.raises(LoopStopped):
        await admin_sign_in.clear_ceremonies(sleep=time_passes)
    assert [record.getMessage() for record in caplog.records] == [
        "Dashboard: the expired sign-in ceremonies were not deleted (OperationalError)"
    ] * 2
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")  # the cloud keeps the list
    await admin_sign_in.clear_ceremonies(sleep=time_passes)  # returns at once: no database here
