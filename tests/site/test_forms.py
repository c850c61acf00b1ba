"""Both forms end to end in the browser, against the production server and a test gateway: one journey
per form, each sent again from the same tab (from the menu, after a reload), which must start a fresh form
every time. The rules behind each message: tests/unit/test_form_states.py; here, what the browser shows."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from tests.browser import (
    CONTACT_BODY,
    CONTACT_SUCCESS_TOAST,
    MIN_FILL_TIME_S,
    QUESTION,
    SUBSCRIBE_BODY,
    SUBSCRIBE_SUCCESS_TOAST,
    answer_and_send,
    assert_no_console_errors,
    axe_violations,
    expect_toast,
    fill_contact,
    open_page,
    submit_button,
    wait_for_question,
)
from tests.support import RecordingGateway

# Records, in every document of the tab, whether a form's success alert was ever put into the
# page: a new load must show the fresh form, never (not even for a moment) the last success.
SUCCESS_WATCH = """
window.__successShown = [];
new MutationObserver(() => {
  for (const id of ["contact-success", "subscribe-success"]) {
    if (document.getElementById(id) && !window.__successShown.includes(id)) window.__successShown.push(id);
  }
}).observe(document, { childList: true, subtree: true });
"""


def expect_invalid(page: Page, field_id: str, message: str) -> None:
    """The message is shown beside the field, which is marked invalid and described by it."""
    field = page.locator(f"#{field_id}")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_attribute("aria-describedby", f"{field_id}-error")
    expect(page.locator(f"#{field_id}-error")).to_have_text(message)


def expect_valid(page: Page, field_id: str) -> None:
    expect(page.locator(f"#{field_id}")).to_have_attribute("aria-invalid", "false")
    expect(page.locator(f"#{field_id}-error")).to_have_text("")


def open_from_the_menu(page: Page, label: str) -> None:
    """The visitor follows the main menu's link (a document load), and the app connects."""
    page.get_by_role("navigation", name="Main", exact=True).get_by_role("link", name=label).click()
    page.wait_for_load_state("load")
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)


def reload(page: Page) -> None:
    page.reload(wait_until="load")
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)


def subscribe_on_this_page(page: Page, name: str, email: str) -> None:
    """A fresh form (no earlier success shown in this document) sent at once."""
    expect(page.locator("#subscribe-name")).to_have_value("")
    expect(submit_button(page)).to_have_text("Subscribe")
    assert page.evaluate("window.__successShown") == []
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)


def send_on_this_page(page: Page, message: str) -> None:
    """A fresh form with the question the server wrote and its token, still there now the app is
    connected: answered, sent after the fill time a person takes."""
    expect(page.locator("#contact-question")).to_have_text(QUESTION)
    expect(page.locator("#contact-token")).not_to_have_value("")
    expect(page.locator("#contact-first-name")).to_have_value("")
    assert page.evaluate("window.__successShown") == []
    answer_and_send(page, message)


def test_subscribe_journey_messages_a_failure_a_success_and_again_from_the_same_tab(
    page: Page, base_url: str, gateway: RecordingGateway
):
    page.add_init_script(SUCCESS_WATCH)
    open_page(page, base_url, "/subscribe")
    submit_button(page).click()
    expect_invalid(page, "subscribe-name", "Please enter your name")
    expect_invalid(page, "subscribe-email", "Please enter your email")
    expect(page.locator("#subscribe-name")).to_be_focused()

    page.fill("#subscribe-name", "Jo")
    page.fill("#subscribe-email", "jo@example")
    submit_button(page).click()
    expect_valid(page, "subscribe-name")
    expect_invalid(page, "subscribe-email", "Please enter a valid email address")
    assert axe_violations(page) == []
    expect(page.locator("#subscribe-email")).to_be_focused()
    assert gateway.requests == []

    gateway.status = 500  # the gateway fails: the form and its values stay
    page.fill("#subscribe-name", "  Jo Reader ")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()
    expect_toast(page, "Failed to subscribe. Please try again.")
    expect(submit_button(page)).to_have_text("Subscribe")
    expect(submit_button(page)).to_be_enabled()
    expect(page.locator("#subscribe-name")).to_have_value("  Jo Reader ")
    expect(page.locator("#subscribe-email")).to_have_value("jo@example.com")
    assert len(gateway.requests) == 1

    gateway.reset()  # the visitor retries and it works, once the busy state has been seen
    gateway.delay_s = 30
    submit_button(page).click()
    expect(submit_button(page)).to_have_text("Subscribing...")
    expect(submit_button(page)).to_be_disabled()
    expect(submit_button(page)).to_have_attribute("aria-busy", "true")
    gateway.release.set()
    success = page.locator("#subscribe-success")
    expect(success.locator("h2")).to_have_text("Thank you for joining our email list!")
    expect(success).to_contain_text("first to know when a new book")
    expect(success).to_be_focused()
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)
    expect(page.locator("form")).to_have_count(0)
    [request] = gateway.requests
    assert (request["method"], request["path"]) == ("POST", "/prod/subscribe")
    assert request["headers"]["Content-Type"] == "application/json"
    assert gateway.bodies == [SUBSCRIBE_BODY]

    page.get_by_role("button", name="Subscribe another address").click()
    expect(page.locator("#subscribe-name")).to_have_value("")  # the fields were reset
    expect(page.locator("#subscribe-email")).to_have_value("")
    assert_no_console_errors(page)

    open_from_the_menu(page, "Subscribe")
    subscribe_on_this_page(page, "Ann Other", "ann@example.com")
    reload(page)
    subscribe_on_this_page(page, "Bo Third", "bo@example.com")
    assert [body["email"] for body in gateway.bodies] == ["jo@example.com", "ann@example.com", "bo@example.com"]


def test_contact_journey_messages_a_wrong_answer_a_failure_a_success_and_again_from_the_same_tab(
    page: Page, base_url: str, gateway: RecordingGateway
):
    page.add_init_script(SUCCESS_WATCH)
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    open_page(page, base_url, "/contact-us")
    question, answer = wait_for_question(page)
    shown_at = time.monotonic()
    honeypot = page.locator("input[name=website]")  # hidden from people (a bot's is refused: unit tests)
    expect(honeypot).to_have_attribute("tabindex", "-1")
    expect(honeypot).to_have_attribute("autocomplete", "off")
    expect(page.locator("div[aria-hidden=true]").filter(has=honeypot)).to_have_count(1)
    box = honeypot.bounding_box()
    assert box is not None and box["x"] + box["width"] < 0  # off-screen

    submit_button(page).click()
    expect_invalid(page, "contact-first-name", "Please enter your first name")
    expect_invalid(page, "contact-last-name", "Please enter your last name")
    expect_invalid(page, "contact-email", "Please enter your email")
    expect_invalid(page, "contact-message", "Please enter your message")
    expect_invalid(page, "contact-answer", "Please answer the math question")
    expect(page.locator("#contact-first-name")).to_be_focused()
    assert axe_violations(page) == []
    assert wait_for_question(page)[0] == question  # a correction keeps the question
    assert gateway.requests == []

    # The fill-time rule, honestly: the visitor takes the server's fill time since the form was shown.
    fill_contact(page, answer + 1)
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(page.locator("form [role=alert]")).to_have_text("Incorrect answer to the math question. Please try again.")
    expect_invalid(page, "contact-answer", "Incorrect answer")
    expect(page.locator("#contact-answer")).to_have_value("")
    expect(page.locator("#contact-answer")).to_be_focused()
    assert gateway.requests == []

    _, answer = wait_for_question(page)
    gateway.status = 500
    page.fill("#contact-answer", str(answer))
    submit_button(page).click()
    expect_toast(page, "Failed to send message. Please try again.")
    expect(page.locator("#contact-answer")).to_have_value("")
    expect(page.locator("#contact-message")).to_have_value("When is the next book coming out?")
    expect(page.locator("form [role=alert]")).to_have_text("")
    assert len(gateway.requests) == 1

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
    expect_toast(page, CONTACT_SUCCESS_TOAST)
    assert gateway.bodies == [CONTACT_BODY]
    assert gateway.requests[0]["path"] == "/prod/send-email"
    assert_no_console_errors(page)

    # The answer and the time the form was shown never reached the browser.
    assert frames, "no websocket frames were recorded"
    for frame in frames:
        assert '"_answer' not in frame and "shown_at" not in frame
    assert "What is" in " ".join(frames)  # the question itself did (the check above is not vacuous)

    page.get_by_role("button", name="Send another message").click()
    expect(page.locator("#contact-first-name")).to_have_value("")
    question, _ = wait_for_question(page)
    fill_contact(page, 1)
    submit_button(page).click()  # a fresh form restarts the fill-time clock
    expect(page.locator("form [role=alert]")).to_have_text("Please take your time to fill out the form completely.")
    assert wait_for_question(page)[0] == question  # the same question: the visitor only has to wait

    open_from_the_menu(page, "Contact Us")
    send_on_this_page(page, "Sent after following the menu.")
    reload(page)
    send_on_this_page(page, "Sent after a reload.")
    assert [body["message"] for body in gateway.bodies] == [
        "When is the next book coming out?",
        "Sent after following the menu.",
        "Sent after a reload.",
    ]
