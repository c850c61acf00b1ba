"""End to end with the embedded local gateway: both forms stored and emailed (aiosmtpd), and outsiders
cannot post (two workers on PostgreSQL and Redis: tests/container/test_scale_out.py; their senders:
tests/services/test_outbox.py)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page

from publisher.storage import queue, subscribers, tables
from tests.browser import REAL_FILL_TIME_S, assert_no_console_errors, send_contact_message, subscribe
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.smtp import SmtpServer

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
