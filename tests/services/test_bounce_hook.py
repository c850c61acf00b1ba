"""``POST /hooks/bounce``: what a provider's report does to its reader (the answers to every
malformed request are in tests/unit/test_bounce_hook.py). On SQLite: a report is stored with the
same SQL as the bounce mailbox's, which test_bounce_mailbox.py runs on PostgreSQL too."""

from __future__ import annotations

import httpx
import pytest

from publisher.limits import submits
from publisher.limits.submits import Limiter
from publisher.rules.list_rules import ListStatus
from publisher.server import middleware
from publisher.storage import bounce_records
from tests.services.test_bounces import events, status_of
from tests.services.test_campaign import readers
from tests.services.test_new_release_list import consent_record
from tests.unit.test_bounce_hook import SECRET, SECRET_VAR

AUTHORIZED = {"Authorization": f"Bearer {SECRET}"}


async def page(scope, receive, send):
    """The site behind the hook."""
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"the site"})


@pytest.fixture
def site(db_url, monkeypatch):
    """The hook on ``db_url``, with a secret and a fresh limiter; yields a client for it."""
    monkeypatch.setenv(SECRET_VAR, SECRET)
    submits.shared_limiter.set(Limiter())
    yield lambda: httpx.AsyncClient(
        transport=httpx.ASGITransport(app=middleware.route_table(page, db_url=db_url)),
        base_url="https://books.example.com",
    )
    submits.shared_limiter.set(None)


@pytest.mark.asyncio
async def test_a_hard_bounce_bounces_a_complaint_unsubscribes_and_a_soft_or_a_strangers_changes_nobody(site, db_url):
    readers(db_url, 3)
    jo, bo, al = (f"reader{n}@readers.example" for n in range(3))
    before = events(db_url, al)
    items = [
        {"email": jo.upper(), "type": "hard", "reason": "550 5.1.1 mailbox unavailable"},
        {"email": bo, "type": "complaint", "feedback_id": "abc"},
        {"email": al, "type": "soft", "reason": "line one\r\nline two\x00" + "x" * 1000},
        {"email": "nobody@example.com", "type": "hard"},
    ]
    async with site() as client:
        answer = await client.post("/hooks/bounce/", json=items, headers=AUTHORIZED)
    assert (answer.status_code, answer.json()) == (200, {"accepted": 4})
    statuses = [status_of(db_url, email) for email in (jo, bo, al)]
    assert statuses == [ListStatus.BOUNCED, ListStatus.UNSUBSCRIBED, ListStatus.CONFIRMED]  # one soft is not enough
    assert events(db_url, jo)[-1] == ("bounced", "hard bounce", "550 5.1.1 mailbox unavailable")
    assert events(db_url, bo)[-1] == ("unsubscribed", "complaint", "complaint")
    assert events(db_url, al) == before
    lines = bounce_records.list_bounces(db_url=db_url)
    assert {(line.email, line.kind, line.source) for line in lines} == {
        (jo, "hard", "webhook"),
        (bo, "complaint", "webhook"),
        (al, "soft", "webhook"),
    }  # no stranger's
    [long] = [line.reason for line in lines if line.kind == "soft"]  # a whole transcript: one clipped line
    assert long.startswith("line one line two x") and len(long) == 500
    assert consent_record("nobody@example.com", db_url) == []
