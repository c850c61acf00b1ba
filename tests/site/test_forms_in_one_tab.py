"""A form sent twice from one tab: every load of a form page starts a fresh form (issue 40, item 0).

Reflex keeps a tab's state across the page loads of that tab. The finished form's state
then won over what the server wrote into the next page: the contact question turned into
"…" and its token was emptied as soon as the app connected, so the second message was
refused with "Please try again.". Each load now has a state of its own; these tests send
two messages, two subscriptions, and one again after a reload of the thank-you state, all in
one tab, and look for each at the recording gateway.
"""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from tests.browser import (
    CONTACT_SUCCESS_TOAST,
    MIN_FILL_TIME_S,
    QUESTION,
    SUBSCRIBE_SUCCESS_TOAST,
    expect_toast,
    fill_contact,
    send_contact_message,
    submit_button,
    subscribe,
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


def open_from_the_menu(page: Page, label: str) -> None:
    """The visitor follows the main menu's link (a document load), and the app connects."""
    page.get_by_role("navigation", name="Main", exact=True).get_by_role("link", name=label).click()
    page.wait_for_load_state("load")
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)


def expect_fresh_contact_form(page: Page) -> None:
    """The question the server wrote and its token, still there now the app is connected."""
    expect(page.locator("#contact-question")).to_have_text(QUESTION)
    expect(page.locator("#contact-token")).not_to_have_value("")
    expect(page.locator("#contact-first-name")).to_have_value("")
    assert page.evaluate("window.__successShown") == []


def send_on_this_page(page: Page, message: str) -> None:
    """Answer the question on the page as it is, take the fill time a person takes, send."""
    _, answer = wait_for_question(page)
    shown_at = time.monotonic()
    fill_contact(page, answer, message=message)
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(page.locator("#contact-success h2")).to_have_text("Thank you for contacting us!")
    expect_toast(page, CONTACT_SUCCESS_TOAST)


def test_a_second_contact_message_from_the_same_tab_arrives(page: Page, base_url: str, gateway: RecordingGateway):
    page.add_init_script(SUCCESS_WATCH)
    send_contact_message(page, base_url, "The first message from this tab.")

    open_from_the_menu(page, "Contact Us")
    expect_fresh_contact_form(page)
    send_on_this_page(page, "The second message from this tab.")

    assert [body["message"] for body in gateway.bodies] == [
        "The first message from this tab.",
        "The second message from this tab.",
    ]


def test_a_contact_message_after_reloading_the_thank_you_state_arrives(
    page: Page, base_url: str, gateway: RecordingGateway
):
    page.add_init_script(SUCCESS_WATCH)
    send_contact_message(page, base_url, "Sent before the reload.")

    page.reload(wait_until="load")
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)
    expect_fresh_contact_form(page)
    send_on_this_page(page, "Sent after the reload.")

    assert [body["message"] for body in gateway.bodies] == ["Sent before the reload.", "Sent after the reload."]


def subscribe_on_this_page(page: Page, name: str, email: str) -> None:
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)


def expect_fresh_subscribe_form(page: Page) -> None:
    expect(page.locator("#subscribe-name")).to_have_value("")
    expect(submit_button(page)).to_have_text("Subscribe")
    assert page.evaluate("window.__successShown") == []


def test_two_subscriptions_from_the_same_tab_both_arrive(page: Page, base_url: str, gateway: RecordingGateway):
    page.add_init_script(SUCCESS_WATCH)
    subscribe(page, base_url, "Jo Reader", "jo@example.com")

    open_from_the_menu(page, "Subscribe")
    expect_fresh_subscribe_form(page)
    subscribe_on_this_page(page, "Ann Other", "ann@example.com")

    assert [body["email"] for body in gateway.bodies] == ["jo@example.com", "ann@example.com"]


def test_a_subscription_after_reloading_the_thank_you_state_arrives(
    page: Page, base_url: str, gateway: RecordingGateway
):
    page.add_init_script(SUCCESS_WATCH)
    subscribe(page, base_url, "Jo Reader", "jo@example.com")

    page.reload(wait_until="load")
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)
    expect_fresh_subscribe_form(page)
    subscribe_on_this_page(page, "Ann Other", "ann@example.com")

    assert [body["email"] for body in gateway.bodies] == ["jo@example.com", "ann@example.com"]
