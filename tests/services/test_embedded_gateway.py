"""The embedded local gateway: contract, storage, refusals and the operator's command."""

from __future__ import annotations

import asyncio
import csv
import io
import json

import httpx
import pytest
import sqlalchemy

from publisher import gateway, storage
from publisher.gateway import embedded
from publisher.storage import subscribers
from tests.support import publisher_gateway


def client_for(db_url: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=embedded.create_app(db_url), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url=gateway.LOCAL_GATEWAY_BASE_URL)


def count_rows(db_url: str, table: str) -> int:
    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as connection:
            return connection.execute(sqlalchemy.text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
    finally:
        engine.dispose()


SUBSCRIPTION = {"email": "jo@example.com", "name": "Jo Reader", "book_updates": "yes"}
MESSAGE = {
    "sender": {"name": "Jo Reader", "email": "jo@example.com"},
    "subject": "Contact Form Submission from Jo Reader",
    "message": "When is the next book out?\nThanks!",
}


@pytest.mark.asyncio
async def test_the_site_client_delivers_both_requests_and_they_are_stored(db_url):
    client = gateway.GatewayClient(
        base_url=gateway.LOCAL_GATEWAY_BASE_URL,
        transport=httpx.ASGITransport(app=embedded.create_app(db_url), raise_app_exceptions=False),
    )
    await client.subscribe({"name": "Jo Reader", "email": "jo@example.com"})
    await client.send_email(
        {"firstName": "Jo", "lastName": "Reader", "email": "jo@example.com", "message": "Hello there, friends!"}
    )
    await client.aclose()

    [subscriber] = subscribers.list_subscribers(db_url=db_url)
    assert (subscriber.email, subscriber.name, subscriber.book_updates) == ("jo@example.com", "Jo Reader", "yes")
    [message] = storage.list_messages(db_url)
    assert (message.sender_name, message.sender_email) == ("Jo Reader", "jo@example.com")
    assert message.subject == "Contact Form Submission from Jo Reader"
    assert message.message == "Hello there, friends!"


@pytest.mark.asyncio
async def test_a_repeated_subscription_succeeds_without_a_duplicate_row(db_url):
    async with client_for(db_url) as client:
        first = await client.post("/prod/subscribe", json=SUBSCRIPTION)
        again = await client.post("/prod/subscribe", json={**SUBSCRIPTION, "email": "JO@example.com", "name": "Jo R"})
    assert (first.status_code, first.json()) == (200, {"status": "subscribed"})
    assert (again.status_code, again.json()) == (200, {"status": "already subscribed"})
    [subscriber] = subscribers.list_subscribers(db_url=db_url)
    assert subscriber.name == "Jo Reader"  # a repeat cannot overwrite the first subscription


@pytest.mark.asyncio
async def test_concurrent_duplicate_subscriptions_store_one_row(db_url):
    async with client_for(db_url) as client:
        responses = await asyncio.gather(*(client.post("/prod/subscribe", json=SUBSCRIPTION) for _ in range(20)))
    assert [r.status_code for r in responses] == [200] * 20
    assert sorted(r.json()["status"] for r in responses).count("subscribed") == 1
    assert count_rows(db_url, "subscriber") == 1


BAD_SUBSCRIPTIONS = {
    "missing email": {"name": "Jo", "book_updates": "yes"},
    "extra field": {**SUBSCRIPTION, "admin": True},
    "name not a string": {**SUBSCRIPTION, "name": 42},
    "empty name": {**SUBSCRIPTION, "name": "   "},
    "name with a line break": {**SUBSCRIPTION, "name": "Jo\r\nBcc: x@example.com"},
    "name too long": {**SUBSCRIPTION, "name": "J" * 101},
    "invalid email": {**SUBSCRIPTION, "email": "not-an-email"},
    "book_updates not yes": {**SUBSCRIPTION, "book_updates": "no"},
}


@pytest.mark.asyncio
@pytest.mark.parametrize("body", BAD_SUBSCRIPTIONS.values(), ids=BAD_SUBSCRIPTIONS.keys())
async def test_a_bad_subscription_body_is_422_and_not_stored(db_url, body):
    async with client_for(db_url) as client:
        response = await client.post("/prod/subscribe", json=body)
    assert response.status_code == 422
    assert response.json()["error"] == "Invalid request body"
    assert response.json()["details"]
    assert count_rows(db_url, "subscriber") == 0


BAD_MESSAGES = {
    "missing sender": {k: v for k, v in MESSAGE.items() if k != "sender"},
    "sender not an object": {**MESSAGE, "sender": "Jo"},
    "sender without email": {**MESSAGE, "sender": {"name": "Jo Reader"}},
    "message too long": {**MESSAGE, "message": "x" * 5001},
    "subject with a line break": {**MESSAGE, "subject": "Hi\nBcc: x@example.com"},
    "message not a string": {**MESSAGE, "message": ["a"]},
}


@pytest.mark.asyncio
@pytest.mark.parametrize("body", BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
async def test_a_bad_message_body_is_422_and_not_stored(db_url, body):
    async with client_for(db_url) as client:
        response = await client.post("/prod/send-email", json=body)
    assert response.status_code == 422
    assert count_rows(db_url, "contact_message") == 0


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"{not json", "Body must be valid JSON"),
        (b"\xff\xfe", "Body must be valid JSON"),
        (b"[1, 2]", "Body must be a JSON object"),
    ],
)
async def test_a_body_that_is_not_a_json_object_is_422(db_url, content, error):
    async with client_for(db_url) as client:
        response = await client.post("/prod/subscribe", content=content, headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json()) == (422, {"error": error})


@pytest.mark.asyncio
async def test_a_wrong_content_type_is_415(db_url):
    async with client_for(db_url) as client:
        response = await client.post("/prod/subscribe", data=SUBSCRIPTION)
    assert response.status_code == 415
    assert count_rows(db_url, "subscriber") == 0


@pytest.mark.asyncio
async def test_an_oversized_body_is_413_whether_declared_or_streamed(db_url):
    big = json.dumps({**MESSAGE, "message": "x" * (embedded.MAX_BODY_BYTES + 1)}).encode()

    async def stream():
        yield big  # no Content-Length: the size is only known while reading

    async with client_for(db_url) as client:
        declared = await client.post("/prod/send-email", content=big, headers={"Content-Type": "application/json"})
        streamed = await client.post("/prod/send-email", content=stream(), headers={"Content-Type": "application/json"})
    assert declared.status_code == 413
    assert streamed.status_code == 413
    assert count_rows(db_url, "contact_message") == 0


@pytest.mark.asyncio
async def test_only_the_two_endpoints_exist_and_only_for_post(db_url):
    async with client_for(db_url) as client:
        assert (await client.get("/prod/subscribe")).status_code == 405
        assert (await client.post("/prod/other", json={})).status_code == 404


@pytest.mark.asyncio
async def test_missing_tables_give_503_and_a_log_line_naming_the_fix(empty_db_url, caplog):
    async with client_for(empty_db_url) as client:
        response = await client.post("/prod/subscribe", json=SUBSCRIPTION)
    assert response.status_code == 503
    assert "did `publisher-gateway migrate` run?" in caplog.text


@pytest.mark.asyncio
async def test_stored_rows_survive_a_restart_and_the_command_exports_them(db_url):
    async with client_for(db_url) as client:
        await client.post("/prod/subscribe", json={**SUBSCRIPTION, "name": '=HYPERLINK("x")'})
        await client.post("/prod/subscribe", json={**SUBSCRIPTION, "email": "ann@example.com", "name": "Ann Other"})
        await client.post("/prod/send-email", json=MESSAGE)

    # A new process (the operator's command) reads the same database file.
    exported = publisher_gateway(db_url, "subscribers")
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(r["email"], r["name"], r["book_updates"]) for r in rows] == [
        ("jo@example.com", '\'=HYPERLINK("x")', "yes"),  # neutralized for spreadsheets
        ("ann@example.com", "Ann Other", "yes"),
    ]
    listed = publisher_gateway(db_url, "messages")
    assert "From: Jo Reader <jo@example.com>" in listed.stdout
    assert "Subject: Contact Form Submission from Jo Reader" in listed.stdout
    assert "When is the next book out?\nThanks!" in listed.stdout


def test_the_command_explains_a_database_without_tables(empty_db_url):
    result = publisher_gateway(empty_db_url, "subscribers", check=False)
    assert result.returncode == 1
    assert "Run `publisher-gateway migrate` first." in result.stderr


def test_configured_client_uses_the_local_gateway_only_when_no_url_is_set(monkeypatch):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    local = gateway.configured_client()
    assert local.base_url == gateway.LOCAL_GATEWAY_BASE_URL
    assert isinstance(local.transport, httpx.ASGITransport)

    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://abc123.execute-api.us-east-1.amazonaws.com")
    monkeypatch.setenv("PUBLISHER_GATEWAY_API_KEY", "secret-key")
    cloud = gateway.configured_client()
    assert cloud.base_url == "https://abc123.execute-api.us-east-1.amazonaws.com"
    assert cloud.api_key == "secret-key"
    assert cloud.transport is None


# --- The development server's schema ---


@pytest.mark.parametrize(
    ("mode", "gateway_url", "migrates"),
    [("dev", "", True), ("prod", "", False), ("dev", "https://gw.example.com", False)],
)
def test_only_the_development_server_with_the_local_gateway_migrates_at_start(monkeypatch, mode, gateway_url, migrates):
    # `reflex run` on a fresh clone must not need `publisher-gateway migrate` first; publisher-serve
    # migrates before its workers fork, and a cloud gateway stores nothing here.
    calls = []
    monkeypatch.setattr(embedded.database, "migrate", lambda: calls.append("migrate"))
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", gateway_url)
    monkeypatch.setenv("REFLEX_ENV_MODE", mode)
    embedded.migrate_on_development_start()
    assert calls == (["migrate"] if migrates else [])


def test_a_database_error_at_start_is_logged_not_raised(monkeypatch, caplog):
    def unreachable():
        raise sqlalchemy.exc.OperationalError("connect", {}, Exception("refused"))

    monkeypatch.setattr(embedded.database, "migrate", unreachable)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    embedded.migrate_on_development_start()
    assert "Could not bring the local gateway's database up to date: OperationalError" in caplog.text


def test_the_development_server_logs_why_the_database_cannot_be_migrated_without_the_password(monkeypatch, caplog):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    monkeypatch.setattr(
        embedded.database, "configured_url", lambda: "postgresql+psycopg://publisher:s3cret@127.0.0.1:1/site"
    )
    embedded.migrate_on_development_start()
    assert (
        "could not migrate the database at REFLEX_DB_URL (postgresql+psycopg://publisher:***@127.0.0.1:1/site)"
        in caplog.text
    )
    assert "s3cret" not in caplog.text
