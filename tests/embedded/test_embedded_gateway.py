"""End to end with the embedded local gateway: both forms stored and emailed (aiosmtpd), outsiders
cannot post, and two workers on PostgreSQL send each message once."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Iterator

import httpx
import psutil
import pytest
from playwright.sync_api import Page

from publisher.storage import queue, subscribers, tables
from tests.browser import MIN_FILL_TIME_S, REAL_FILL_TIME_S, assert_no_console_errors, send_contact_message, subscribe
from tests.embedded.conftest import DELIVERY_TIMEOUT_S, delivered
from tests.postgres import PostgresServer
from tests.smtp import SmtpServer
from tests.support import RedisServer, publisher_gateway, running_server, wait_until
from tests.visitor import SUBSCRIBE_STATE, ask_here_answer_there, run_async, subscribe_over_websocket

SUBSCRIPTION = {"email": "bot@example.com", "name": "Bot", "book_updates": "yes"}
MESSAGE = {
    "sender": {"name": "Bot Net", "email": "bot@example.com"},
    "subject": "Contact Form Submission from Bot Net",
    "message": "Buy cheap followers now!!!",
}


@pytest.mark.parametrize(
    ("path", "body"),
    [("/prod/subscribe", SUBSCRIPTION), ("/prod/send-email", MESSAGE)],
)
def test_a_direct_outside_request_is_refused_and_not_stored(mail_site, path: str, body: dict):
    server, db_url = mail_site
    response = httpx.post(server.base_url + path, json=body, timeout=10)
    assert response.status_code in (404, 405)
    assert all(s.email != "bot@example.com" for s in subscribers.list_subscribers(db_url=db_url))
    assert all(m.sender_email != "bot@example.com" for m in tables.list_messages(db_url))


def test_both_forms_reach_the_publishers_inbox(page: Page, mail_site, smtp: SmtpServer):
    server, db_url = mail_site
    before = len(smtp.received)
    send_contact_message(page, server.base_url, "Do you ship to Canada?", REAL_FILL_TIME_S)  # the spec's 5 s
    subscribe(page, server.base_url, "Zoë Ångström", "zoe@example.com")

    contact, confirmation = smtp.wait_for(before + 2, timeout=DELIVERY_TIMEOUT_S)[before:]
    assert contact.authenticated_as == "site@animals.example"
    assert contact.rcpt_tos == ["books@animals.example"]
    assert str(contact.message["From"]) == "Animals We Confuse <site@animals.example>"
    assert str(contact.message["Reply-To"]) == "Jo Reader <jo@example.com>"
    assert contact.message["Subject"] == "Contact Form Submission from Jo Reader"
    assert contact.message.get_content().endswith("\r\n\r\nDo you ship to Canada?\r\n")
    # The new subscriber gets the confirmation email; the publisher's notice waits for the confirmation.
    assert confirmation.rcpt_tos == ["zoe@example.com"]
    # Nothing the visitor typed rides in the confirmation: no name in To or in the text.
    assert str(confirmation.message["To"]) == "zoe@example.com"
    assert b"=?utf-8?" not in confirmation.data.split(b"\r\n\r\n")[0]
    assert "Zoë" not in confirmation.message.get_content()
    assert confirmation.message["Subject"] == "Please confirm your subscription to Animals We Confuse"
    stored = tables.list_messages(db_url)[-1]
    assert contact.message["Message-ID"] == next(
        d.message_id
        for d in queue.list_deliveries((tables.SENT,), db_url)
        if d.source_id == stored.id and d.kind == tables.CONTACT
    )
    assert_no_console_errors(page)


# --- Two workers, PostgreSQL, Redis ------------------------------------------------------------


@pytest.fixture(scope="module")
def redis(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def test_two_workers_on_postgresql_store_both_forms_and_send_each_message_once(
    built_site, postgres: PostgresServer, redis: RedisServer, tmp_path_factory
):
    """On a fresh database, which the server migrates at start. SMTP is down while the visitors
    send, so both workers' senders find every message due together at their retry."""
    smtp = SmtpServer()
    db_url = postgres.url(postgres.create_database())
    env = {
        **smtp.mail_env(),
        "PUBLISHER_GATEWAY_URL": "",
        "REFLEX_DB_URL": db_url,
        "REFLEX_REDIS_URL": redis.url,
        "GRANIAN_WORKERS": "2",
        "PUBLISHER_RATE_LIMIT_CLIENT": "100/60",
        "PUBLISHER_RATE_LIMIT_ADDRESS": "100/60",
    }
    visitors = 12
    with running_server(tmp_path_factory.mktemp("two-workers-mail"), env) as server:
        # Ready means one worker answers; the second may still be starting on a busy machine.
        wait_until(lambda: "Started worker-2" in server.log_path.read_text(), 30, "the second worker to start")
        assert "Started worker-1" in server.log_path.read_text()
        assert len(psutil.Process(server.process.pid).children(recursive=True)) >= 2

        async def join(n: int) -> str:
            visitor, _seconds = await subscribe_over_websocket(server.base_url, f"reader{n}@example.com")
            await visitor.close()
            return visitor.var(SUBSCRIBE_STATE, "status")

        async def send_all() -> list[tuple[str, str]]:
            messages = asyncio.gather(
                *(
                    ask_here_answer_there(
                        server.base_url,
                        server.base_url,
                        {"firstName": "Visitor", "lastName": f"No{n}", "email": f"v{n}@example.com"},
                        f"Message {n} of {visitors}.",
                        fill_time_s=MIN_FILL_TIME_S,
                    )
                    for n in range(visitors)
                )
            )
            sign_ups = asyncio.gather(*(join(n) for n in range(visitors)), join(0))  # reader0 twice
            return await messages, await sign_ups

        outcomes, sign_ups = run_async(send_all())
        assert [status for status, _ in outcomes] == ["success"] * visitors
        assert sign_ups == ["success"] * (visitors + 1)
        smtp.start()
        try:
            received = smtp.wait_for(2 * visitors, timeout=DELIVERY_TIMEOUT_S)
            wait_until(lambda: delivered(db_url), 15, "every delivery to be recorded as sent")
        finally:
            smtp.stop()
    assert len(smtp.received) == 2 * visitors
    assert len(set(smtp.message_ids())) == 2 * visitors
    contacts = [r for r in received if r.rcpt_tos == ["books@animals.example"]]
    assert sorted(r.message.get_content().splitlines()[-1] for r in contacts) == sorted(
        f"Message {n} of {visitors}." for n in range(visitors)
    )
    confirmations = sorted(r.rcpt_tos[0] for r in received if r not in contacts)
    assert confirmations == sorted(f"reader{n}@example.com" for n in range(visitors))  # one each

    # The operator's commands read what the workers stored.
    exported = publisher_gateway(db_url, "subscribers").stdout
    assert exported.splitlines()[0] == "email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"
    rows = sorted((r["email"], r["name"], r["status"]) for r in csv.DictReader(io.StringIO(exported)))
    assert rows == sorted((f"reader{n}@example.com", "Jo Reader", "pending") for n in range(visitors))
    listed = publisher_gateway(db_url, "messages").stdout
    for n in range(visitors):
        sender = f"Visitor No{n}"
        sent = f"From: {sender} <v{n}@example.com>\nSubject: Contact Form Submission from {sender}\n\nMessage {n} of"
        assert sent in listed
