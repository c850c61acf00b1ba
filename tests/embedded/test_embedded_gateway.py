"""End to end with the embedded local gateway: forms store durably (SQLite, and PostgreSQL); outsiders cannot post."""

from __future__ import annotations

import csv
import io
import time

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from publisher import storage
from publisher.storage import subscribers
from tests.browser import REAL_FILL_TIME_S, assert_no_console_errors, fill_contact, send_contact_message, subscribe
from tests.support import publisher_gateway
from tests.visitor import question_answer

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
def test_a_direct_outside_request_is_refused_and_not_stored(base_url: str, db_url: str, path: str, body: dict):
    response = httpx.post(base_url + path, json=body, timeout=10)
    assert response.status_code in (404, 405)
    assert all(s.email != "bot@example.com" for s in subscribers.list_subscribers(db_url=db_url))
    assert all(m.sender_email != "bot@example.com" for m in storage.list_messages(db_url))


def test_subscribe_is_stored_and_a_repeat_is_a_success_without_a_duplicate(page: Page, base_url: str, db_url: str):
    for email in ("jo.reader@example.com", "Jo.Reader@example.com"):
        subscribe(page, base_url, "Jo Reader", email)
    rows = [s for s in subscribers.list_subscribers(db_url=db_url) if s.email_key == "jo.reader@example.com"]
    assert [(s.email, s.name) for s in rows] == [("jo.reader@example.com", "Jo Reader")]
    assert_no_console_errors(page)


def test_contact_message_is_stored_and_listed_by_the_operator_command(page: Page, base_url: str, db_url: str):
    send_contact_message(page, base_url, "Do you do school visits in the spring?", REAL_FILL_TIME_S)  # the spec's 5 s

    listed = publisher_gateway(db_url, "messages")
    assert "From: Jo Reader <jo@example.com>" in listed.stdout
    assert "Do you do school visits in the spring?" in listed.stdout
    assert_no_console_errors(page)


def test_without_javascript_both_forms_are_stored(browser: Browser, base_url: str, db_url: str):
    """The plain POST (server/plain_forms.py) reaches the embedded gateway as the app's event does."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(base_url + "/subscribe")
        page.fill("#subscribe-name", "Nojs Reader")
        page.fill("#subscribe-email", "nojs@example.com")
        page.locator("form button[type=submit]").click()
        expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")

        page.goto(base_url + "/contact-us")
        served_at = time.monotonic()
        question = page.locator("#contact-question").inner_text()
        fill_contact(page, question_answer(question), message="Sent without JavaScript.")
        time.sleep(max(0.0, REAL_FILL_TIME_S + 0.5 - (time.monotonic() - served_at)))  # the spec's 5 s
        page.locator("form button[type=submit]").click()
        expect(page.locator("#contact-success h2")).to_have_text("Thank you for contacting us!")
    finally:
        context.close()
    assert [s.name for s in subscribers.list_subscribers(db_url=db_url) if s.email == "nojs@example.com"] == [
        "Nojs Reader"
    ]
    assert [m.message for m in storage.list_messages(db_url) if m.message == "Sent without JavaScript."] == [
        "Sent without JavaScript."
    ]


# --- The same production server on PostgreSQL ------------------------------------------------


def test_on_postgresql_both_forms_are_stored_and_the_commands_read_them(page: Page, postgres_site):
    server, db_url = postgres_site
    subscribe(page, server.base_url, "Pat Reader", "pat@example.com")
    subscribe(page, server.base_url, "Pat Again", "PAT@example.com")  # a repeat: success, nothing changes
    send_contact_message(page, server.base_url, "Stored in PostgreSQL.")

    exported = publisher_gateway(db_url, "subscribers").stdout
    assert exported.splitlines()[0] == "email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"
    rows = [(r["email"], r["name"], r["book_updates"], r["status"]) for r in csv.DictReader(io.StringIO(exported))]
    assert rows == [("pat@example.com", "Pat Reader", "yes", "pending")]
    listed = publisher_gateway(db_url, "messages").stdout
    assert (
        "From: Jo Reader <jo@example.com>\nSubject: Contact Form Submission from Jo Reader\n\nStored in PostgreSQL."
        in listed
    )
    assert_no_console_errors(page)
