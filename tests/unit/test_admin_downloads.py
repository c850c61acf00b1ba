"""The dashboard's CSV downloads (server/admin_sign_in.py) need the session's cookie and the site's own
page, even with a valid cookie; a database away is a 503, as for the sign-in. The session is faked."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy

from publisher.content import admin_copy
from publisher.rules import admin_access
from publisher.rules.admin_access import RelyingParty
from publisher.server import admin_sign_in, middleware
from publisher.storage import admins, subscribers

ORIGIN = "https://books.example.com"
PARTY = RelyingParty("books.example.com", (ORIGIN,))
TOKEN = admin_access.new_token()
COOKIE = {"Cookie": f"{admin_access.SECURE_COOKIE_NAME}={TOKEN}"}
ADA = admins.AdminIdentity(admin_id=1, name="Ada", user_handle="handle")


async def not_found(scope, receive, send):
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b"page"})


@pytest.fixture
def audited(monkeypatch) -> list[tuple]:
    """The downloads with a database that has Ada's session (TOKEN) open and an empty list."""
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


def client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware.route_table(not_found)), base_url=ORIGIN)


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
    monkeypatch.setattr(admin_sign_in, "relying_party", lambda: PARTY)
    async with client() as http:
        answer = await http.post(path, headers={**COOKIE, "Origin": ORIGIN}, json={})
    assert (answer.status_code, answer.headers["retry-after"]) == (503, "30")
    assert answer.json()["error"] == admin_copy.TRY_AGAIN_LATER
