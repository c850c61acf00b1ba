"""Both forms end to end in the browser, against the production server and a test gateway."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from tests.browser import (
    MIN_FILL_TIME_S,
    assert_no_console_errors,
    axe_violations,
    expect_toast,
    fill_contact,
    open_page,
    submit_button,
    wait_for_question,
)
from tests.support import RecordingGateway


def error_of(page: Page, field_id: str):
    return page.locator(f"#{field_id}-error")


def expect_invalid(page: Page, field_id: str, message: str) -> None:
    """The message is shown beside the field, which is marked invalid and described by it."""
    field = page.locator(f"#{field_id}")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_attribute("aria-describedby", f"{field_id}-error")
    expect(error_of(page, field_id)).to_have_text(message)


def expect_valid(page: Page, field_id: str) -> None:
    expect(page.locator(f"#{field_id}")).to_have_attribute("aria-invalid", "false")
    expect(error_of(page, field_id)).to_have_text("")


# --- Subscribe ---------------------------------------------------------------------


def test_subscribe_validation_messages_are_shown_accessibly(page: Page, base_url: str, gateway: RecordingGateway):
    open_page(page, base_url, "/subscribe")
    submit_button(page).click()
    expect_invalid(page, "subscribe-name", "Please enter your name")
    expect_invalid(page, "subscribe-email", "Please enter your email")
    expect(page.locator("#subscribe-name")).to_be_focused()

    page.fill("#subscribe-name", "J")
    page.fill("#subscribe-email", "jo@example")
    submit_button(page).click()
    expect_invalid(page, "subscribe-name", "Name must be at least 2 characters")
    expect_invalid(page, "subscribe-email", "Please enter a valid email address")
    assert axe_violations(page) == []

    page.fill("#subscribe-name", "Jo")
    submit_button(page).click()
    expect_valid(page, "subscribe-name")
    expect(page.locator("#subscribe-email")).to_be_focused()
    assert gateway.requests == []
    assert_no_console_errors(page)


def test_subscribe_success(page: Page, base_url: str, gateway: RecordingGateway):
    gateway.delay_s = 30  # hold the answer until the busy state has been seen
    open_page(page, base_url, "/subscribe")
    page.fill("#subscribe-name", "  Jo Reader ")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()

    expect(submit_button(page)).to_have_text("Subscribing...")
    expect(submit_button(page)).to_be_disabled()
    expect(submit_button(page)).to_have_attribute("aria-busy", "true")
    gateway.release.set()

    success = page.locator("#subscribe-success")
    expect(success.locator("h2")).to_have_text("Thank you for joining our email list!")
    expect(success).to_contain_text("first to know when a new book")
    expect(success).to_be_focused()
    expect_toast(page, "Successfully subscribed to our email list!")
    expect(page.locator("form")).to_have_count(0)

    assert len(gateway.requests) == 1
    request = gateway.requests[0]
    assert (request["method"], request["path"]) == ("POST", "/prod/subscribe")
    assert request["headers"]["Content-Type"] == "application/json"
    assert gateway.bodies == [{"email": "jo@example.com", "name": "Jo Reader", "book_updates": "yes"}]

    page.get_by_role("button", name="Subscribe another address").click()
    expect(page.locator("#subscribe-name")).to_have_value("")  # the fields were reset
    expect(page.locator("#subscribe-email")).to_have_value("")
    assert_no_console_errors(page)


def test_subscribe_gateway_failure_keeps_the_form_and_its_values(page: Page, base_url: str, gateway: RecordingGateway):
    gateway.status = 500
    open_page(page, base_url, "/subscribe")
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()

    expect_toast(page, "Failed to subscribe. Please try again.")
    expect(submit_button(page)).to_have_text("Subscribe")
    expect(submit_button(page)).to_be_enabled()
    expect(page.locator("#subscribe-name")).to_have_value("Jo Reader")
    expect(page.locator("#subscribe-email")).to_have_value("jo@example.com")
    assert len(gateway.requests) == 1

    gateway.status = 200  # the visitor retries and it works
    submit_button(page).click()
    expect(page.locator("#subscribe-success")).to_be_visible()
    assert len(gateway.requests) == 2


# --- Contact -------------------------------------------------------------------------


def form_alert(page: Page):
    return page.locator("form [role=alert]")


def test_contact_validation_messages_are_shown_accessibly(page: Page, base_url: str, gateway: RecordingGateway):
    open_page(page, base_url, "/contact-us")
    wait_for_question(page)
    submit_button(page).click()
    expect_invalid(page, "contact-first-name", "Please enter your first name")
    expect_invalid(page, "contact-last-name", "Please enter your last name")
    expect_invalid(page, "contact-email", "Please enter your email")
    expect_invalid(page, "contact-message", "Please enter your message")
    expect_invalid(page, "contact-answer", "Please answer the math question")
    expect(page.locator("#contact-first-name")).to_be_focused()
    assert axe_violations(page) == []

    page.fill("#contact-first-name", "J")
    page.fill("#contact-last-name", "R")
    page.fill("#contact-email", "jo@")
    page.fill("#contact-message", "Too short")
    submit_button(page).click()
    expect_invalid(page, "contact-first-name", "First name must be at least 2 characters")
    expect_invalid(page, "contact-last-name", "Last name must be at least 2 characters")
    expect_invalid(page, "contact-email", "Please enter a valid email address")
    expect_invalid(page, "contact-message", "Message must be at least 10 characters")
    assert axe_violations(page) == []
    assert gateway.requests == []
    assert_no_console_errors(page)


def test_contact_honeypot_is_hidden_from_people_and_rejects_bots(page: Page, base_url: str, gateway: RecordingGateway):
    open_page(page, base_url, "/contact-us")
    _, answer = wait_for_question(page)
    honeypot = page.locator("input[name=website]")
    expect(honeypot).to_have_attribute("tabindex", "-1")
    expect(honeypot).to_have_attribute("autocomplete", "off")
    expect(page.locator("div[aria-hidden=true]").filter(has=honeypot)).to_have_count(1)
    box = honeypot.bounding_box()
    assert box is not None and box["x"] + box["width"] < 0  # off-screen

    fill_contact(page, answer)
    honeypot.evaluate("input => { input.value = 'https://spam.example' }")  # what a bot does
    submit_button(page).click()
    expect(form_alert(page)).to_have_text("Please try again.")
    assert gateway.requests == []


def test_contact_too_fast_is_rejected(page: Page, base_url: str, gateway: RecordingGateway):
    open_page(page, base_url, "/contact-us")
    question, answer = wait_for_question(page)
    fill_contact(page, answer)
    submit_button(page).click()
    expect(form_alert(page)).to_have_text("Please take your time to fill out the form completely.")
    assert wait_for_question(page)[0] == question  # same question: the visitor only has to wait
    assert gateway.requests == []


def test_contact_journey_wrong_answer_then_gateway_failure_then_success(
    page: Page, base_url: str, gateway: RecordingGateway
):
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    open_page(page, base_url, "/contact-us")
    _, answer = wait_for_question(page)
    shown_at = time.monotonic()
    fill_contact(page, answer + 1)

    # The fill-time rule, honestly: the visitor takes the server's fill time, as a person would.
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(form_alert(page)).to_have_text("Incorrect answer to the math question. Please try again.")
    expect_invalid(page, "contact-answer", "Incorrect answer")
    expect(page.locator("#contact-answer")).to_have_value("")
    expect(page.locator("#contact-answer")).to_be_focused()
    assert gateway.requests == []

    # A new question was asked; the gateway now fails.
    _, answer = wait_for_question(page)
    gateway.status = 500
    page.fill("#contact-answer", str(answer))
    submit_button(page).click()
    expect_toast(page, "Failed to send message. Please try again.")
    expect(page.locator("#contact-answer")).to_have_value("")
    expect(page.locator("#contact-message")).to_have_value("When is the next book coming out?")
    expect(form_alert(page)).to_have_text("")
    assert len(gateway.requests) == 1

    # Another new question; this time it goes through.
    gateway.reset()
    gateway.delay_s = 30
    _, answer = wait_for_question(page)
    page.fill("#contact-answer", str(answer))
    submit_button(page).click()
    expect(submit_button(page)).to_have_text("Sending...")
    expect(submit_button(page)).to_be_disabled()
    gateway.release.set()

    success = page.locator("#contact-success")
    expect(success.locator("h2")).to_have_text("Thank you for contacting us!")
    expect(success).to_contain_text("24-48 hours during business days")
    expect_toast(page, "Your message has been sent successfully!")
    assert gateway.bodies == [
        {
            "sender": {"name": "Jo Reader", "email": "jo@example.com"},
            "subject": "Contact Form Submission from Jo Reader",
            "message": "When is the next book coming out?",
        }
    ]
    assert gateway.requests[0]["path"] == "/prod/send-email"
    assert_no_console_errors(page)

    # The answer and the time the form was shown never reached the browser.
    assert frames, "no websocket frames were recorded"
    for frame in frames:
        assert '"_answer' not in frame and "shown_at" not in frame
    assert "What is" in " ".join(frames)  # the question itself did (the check above is not vacuous)

    page.get_by_role("button", name="Send another message").click()
    expect(page.locator("#contact-first-name")).to_have_value("")
    wait_for_question(page)
    fill_contact(page, 1)
    submit_button(page).click()  # a fresh form restarts the fill-time clock
    expect(form_alert(page)).to_have_text("Please take your time to fill out the form completely.")
