"""``POST /hooks/bounce``: what a provider's report does to its reader (the answers to every
malformed request are in tests/unit/test_bounce_hook.py). On SQLite: a report is stored with the
same SQL as the bounce mailbox's, which test_bounce_mailbox.py runs on PostgreSQL too."""

from __future__ import annotations

import httpx
import pytest

from publisher.limits import submits
from publisher.limits.submits import Limiter
from publisher.rules.list_rules import ListStatus
from publisher.server import routes
from publisher.storage import bounce_records, subscribers
from publisher.storage.subscribers import SignUp
from tests.services.test_new_release_list import consent_record, job
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
        transport=httpx.ASGITransport(app=routes.route_table(page, db_url=db_url)), base_url="https://books.example.com"
    )
    submits.shared_limiter.set(None)


def confirmed(db_url: str, email: str = "jo@example.com") -> str:
    """A reader who joined and confirmed; their link key."""
    request = SignUp(email=email, name="Jo Reader")
    subscribers.subscribe(request, job(), db_url)
    key = next(s.link_key for s in subscribers.list_subscribers(db_url=db_url) if s.email_key == email)
    subscribers.confirm(key, job(), None, db_url)
    return key


def status(db_url: str, key: str) -> str:
    row = subscribers.lookup(key, db_url)
    assert row is not None
    return row.status


def events(db_url: str, email: str = "jo@example.com") -> list[tuple[str, str, str | None]]:
    return [(e.event, e.how, e.detail) for e in consent_record(email, db_url)]


@pytest.mark.asyncio
async def test_a_hard_bounce_makes_a_confirmed_reader_bounced_with_the_reason_on_record(site, db_url):
    key = confirmed(db_url)
    item = {"email": "Jo@Example.com", "type": "hard", "reason": "550 5.1.1 mailbox unavailable"}
    async with site() as client:
        answer = await client.post("/hooks/bounce", json=item, headers=AUTHORIZED)
    assert (answer.status_code, answer.json()) == (200, {"accepted": 1})
    assert status(db_url, key) == ListStatus.BOUNCED
    assert events(db_url)[-1] == ("bounced", "hard bounce", "550 5.1.1 mailbox unavailable")
    [line] = bounce_records.list_bounces(db_url=db_url)
    assert (line.email, line.kind, line.source) == ("jo@example.com", "hard", "webhook")


@pytest.mark.asyncio
async def test_a_complaint_unsubscribes_the_reader(site, db_url):
    key = confirmed(db_url)
    items = [{"email": "jo@example.com", "type": "complaint", "feedback_id": "abc"}]
    async with site() as client:
        answer = await client.post("/hooks/bounce/", json=items, headers=AUTHORIZED)
    assert (answer.status_code, answer.json()) == (200, {"accepted": 1})
    assert status(db_url, key) == ListStatus.UNSUBSCRIBED
    assert events(db_url)[-1] == ("unsubscribed", "complaint", "complaint")


@pytest.mark.asyncio
async def test_an_unknown_address_changes_nothing_and_gets_the_same_answer(site, db_url):
    key = confirmed(db_url)
    before = events(db_url)
    async with site() as client:
        unknown = await client.post(
            "/hooks/bounce", json={"email": "nobody@example.com", "type": "hard"}, headers=AUTHORIZED
        )
        known = await client.post("/hooks/bounce", json={"email": "jo@example.com", "type": "soft"}, headers=AUTHORIZED)
    assert (unknown.status_code, unknown.content) == (known.status_code, known.content) == (200, b'{"accepted":1}')
    assert unknown.headers == known.headers
    assert [line.email for line in bounce_records.list_bounces(db_url=db_url)] == ["jo@example.com"]  # no stranger
    assert status(db_url, key) == ListStatus.CONFIRMED  # one soft bounce is not enough
    assert events(db_url) == before
    assert consent_record("nobody@example.com", db_url) == []


@pytest.mark.asyncio
async def test_a_batch_with_one_bad_item_takes_nothing(site, db_url):
    key = confirmed(db_url)
    items = [{"email": "jo@example.com", "type": "hard"}, {"email": "bo@example.com", "type": "bounced"}]
    async with site() as client:
        answer = await client.post("/hooks/bounce", json=items, headers=AUTHORIZED)
    assert answer.status_code == 422
    assert answer.json() == {"error": "item 2: type must be one of hard, soft, complaint"}
    assert status(db_url, key) == ListStatus.CONFIRMED
    assert bounce_records.list_bounces(db_url=db_url) == []


@pytest.mark.asyncio
async def test_a_wrong_secret_changes_nothing(site, db_url):
    key = confirmed(db_url)
    item = {"email": "jo@example.com", "type": "hard"}
    async with site() as client:
        for headers in ({"Authorization": "Bearer not-the-secret"}, {}):
            answer = await client.post("/hooks/bounce", json=item, headers=headers)
            assert (answer.status_code, answer.headers["www-authenticate"]) == (401, "Bearer")
    assert status(db_url, key) == ListStatus.CONFIRMED
    assert bounce_records.list_bounces(db_url=db_url) == []


@pytest.mark.asyncio
async def test_without_a_secret_the_hook_is_not_there(site, db_url, monkeypatch):
    monkeypatch.delenv(SECRET_VAR)
    key = confirmed(db_url)
    async with site() as client:
        answer = await client.post(
            "/hooks/bounce", json={"email": "jo@example.com", "type": "hard"}, headers=AUTHORIZED
        )
        other = await client.get("/about")
    assert (answer.status_code, answer.text) == (404, "Not found")
    assert (other.status_code, other.text) == (200, "the site")
    assert status(db_url, key) == ListStatus.CONFIRMED
