"""The embedded gateway emails the publisher: publisher-serve on the host, a real SMTP server (aiosmtpd).

The visitor's flow never changes with SMTP: the same success alert and toast
while it is down. What was stored is delivered once it is back, after a restart
too, and exactly once with two workers sharing PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import psutil
import pytest
from playwright.sync_api import Page

from publisher import storage
from publisher.storage import subscribers
from tests.browser import MIN_FILL_TIME_S, assert_no_console_errors, send_contact_message, subscribe
from tests.embedded.conftest import DELIVERY_TIMEOUT_S, delivered
from tests.postgres import PostgresServer
from tests.smtp import SmtpServer
from tests.support import RedisServer, publisher_gateway, running_server, wait_until
from tests.visitor import (
    CONTACT_STATE,
    SUBSCRIBE_STATE,
    Visitor,
    ask_here_answer_there,
    hydrated,
    question_answer,
    run_async,
    served_question,
    subscribe_over_websocket,
)


def test_both_forms_reach_the_publishers_inbox(page: Page, mail_site, smtp: SmtpServer):
    server, db_url = mail_site
    before = len(smtp.received)
    send_contact_message(page, server.base_url, "Do you ship to Canada?")
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
    stored = storage.list_messages(db_url)[-1]
    assert contact.message["Message-ID"] == next(
        d.message_id
        for d in storage.list_deliveries((storage.SENT,), db_url)
        if d.source_id == stored.id and d.kind == storage.CONTACT
    )
    assert_no_console_errors(page)


def test_an_international_address_is_sent_in_ascii_and_the_site_keeps_delivering(
    page: Page, mail_site, smtp: SmtpServer
):
    """One address with a Unicode domain once silenced every email of the site (the SMTP
    client could not write it, and the sender's task died with the job leased)."""
    server, db_url = mail_site
    before = len(smtp.received)
    subscribe(page, server.base_url, "Ünal Bücherwurm", "leser@bücher.example")
    [confirmation] = smtp.wait_for(before + 1, timeout=DELIVERY_TIMEOUT_S)[before:]
    assert confirmation.rcpt_tos == ["leser@xn--bcher-kva.example"]
    assert b"\r\nTo: leser@xn--bcher-kva.example\r\n" in confirmation.data
    assert [row.email for row in subscribers.list_subscribers(db_url=db_url)][-1] == "leser@xn--bcher-kva.example"
    send_contact_message(page, server.base_url, "Still delivered after an international address.")
    [contact] = smtp.wait_for(before + 2, timeout=DELIVERY_TIMEOUT_S)[before + 1 :]
    assert contact.message.get_content().endswith("Still delivered after an international address.\r\n")


def test_smtp_down_the_visitor_still_succeeds_and_the_message_arrives_once_when_it_is_back(
    page: Page, mail_site, smtp: SmtpServer
):
    server, db_url = mail_site
    smtp.stop()
    try:
        before = len(smtp.received)
        send_contact_message(page, server.base_url, "Sent while the mail server was down.")  # alert and toast
        wait_until(
            lambda: "last error: cannot connect" in publisher_gateway(db_url, "outbox").stdout,
            20,
            "the outbox to show the failed attempt",
        )
    finally:
        smtp.start()
    [arrived] = smtp.wait_for(before + 1, timeout=DELIVERY_TIMEOUT_S)[before:]
    assert arrived.message.get_content().endswith("Sent while the mail server was down.\r\n")
    wait_until(lambda: delivered(db_url), 10, "the delivery to be recorded as sent")
    assert len(smtp.received) == before + 1
    assert publisher_gateway(db_url, "outbox").stdout == "Outbox: nothing pending or failed.\n"
    assert_no_console_errors(page)


def test_deliveries_pending_at_a_restart_are_sent_by_the_restarted_server(page: Page, mail_site, smtp: SmtpServer):
    server, db_url = mail_site
    smtp.stop()
    before = len(smtp.received)
    send_contact_message(page, server.base_url, "Pending across a restart.")
    # Its first attempt made and refused (SMTP down): a stop in the middle of an attempt would
    # leave the job claimed until its lease ends (outbox.LEASE), a case of its own.
    wait_until(
        lambda: [d.last_error is not None for d in storage.list_deliveries((storage.PENDING,), db_url)] == [True],
        20,
        "the message to wait in the outbox after a refused attempt",
    )
    assert "1 pending, 0 failed." in publisher_gateway(db_url, "outbox").stdout
    server.stop()
    smtp.start()
    server.start()
    [arrived] = smtp.wait_for(before + 1, timeout=DELIVERY_TIMEOUT_S)[before:]
    assert arrived.message.get_content().endswith("Pending across a restart.\r\n")
    wait_until(lambda: delivered(db_url), 10, "the delivery to be recorded as sent")
    assert len(smtp.received) == before + 1


def test_a_refused_message_is_reported_and_the_operator_sends_it_again(page: Page, mail_site, smtp: SmtpServer):
    server, db_url = mail_site
    before = len(smtp.received)
    smtp.replies.append("550 5.7.1 Message content rejected")
    send_contact_message(page, server.base_url, "Refused once, then sent by the operator.")
    wait_until(
        lambda: "0 pending, 1 failed." in publisher_gateway(db_url, "outbox").stdout,
        DELIVERY_TIMEOUT_S,
        "the refusal to be reported",
    )
    listing = publisher_gateway(db_url, "outbox").stdout
    assert "    last error: 550 5.7.1 Message content rejected\n" in listing
    assert "Outbox: delivery #" in server.log_path.read_text()  # and in the server's log, as an error

    retried = publisher_gateway(db_url, "outbox", "--retry", env=smtp.mail_env())
    assert retried.stdout.endswith("  sent\n")
    [arrived] = smtp.wait_for(before + 1, timeout=10)[before:]
    assert arrived.message.get_content().endswith("Refused once, then sent by the operator.\r\n")


def test_a_crafted_event_with_a_line_break_in_a_name_adds_no_header_and_sends_nothing(mail_site, smtp: SmtpServer):
    server, db_url = mail_site
    stored_before, received_before = len(storage.list_messages(db_url)), len(smtp.received)

    async def crafted_submit() -> Visitor:
        visitor = Visitor(server.base_url, "/contact-us")
        await visitor.open_page(hydrated)
        question, token = await served_question(server.base_url)
        # Sent at once: the field rules are judged before the fill time, so the name is refused
        # for its line break whatever the clock says (web/submissions.judge_contact).
        await visitor.send(
            f"{CONTACT_STATE}.submit",
            {
                "form_data": {
                    "firstName": "Jo\r\nBcc: victim@example.com",
                    "lastName": "Reader",
                    "email": "jo@example.com",
                    "message": "Injected?",
                    "answer": str(question_answer(question)),
                    "website": "",
                    "token": token,
                }
            },
        )
        await visitor.wait_for(lambda v: bool(v.var(CONTACT_STATE, "first_name_error")))
        await visitor.close()
        return visitor

    visitor = run_async(crafted_submit())
    refused = "First name must not contain line breaks or control characters"
    assert visitor.var(CONTACT_STATE, "first_name_error") == refused
    assert len(storage.list_messages(db_url)) == stored_before
    assert storage.list_deliveries((storage.PENDING, storage.FAILED), db_url) == []
    assert len(smtp.received) == received_before
    assert all("victim@example.com" not in r.data.decode("ascii", "replace") for r in smtp.received)


# --- Two workers, PostgreSQL, Redis ------------------------------------------------------------


@pytest.fixture(scope="module")
def redis(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def test_two_workers_on_postgresql_send_each_message_once(
    built_site, postgres: PostgresServer, redis: RedisServer, tmp_path_factory
):
    smtp = SmtpServer()  # down while the visitors send, so both workers' senders find them due together
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
            sign_ups = asyncio.gather(*(join(n) for n in range(visitors)))
            return await messages, await sign_ups

        outcomes, sign_ups = run_async(send_all())
        assert [status for status, _ in outcomes] == ["success"] * visitors
        assert sign_ups == ["success"] * visitors
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
