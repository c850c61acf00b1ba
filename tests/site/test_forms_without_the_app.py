"""Both forms without the app (docs/product.md, Forms: two ways to send a form): JavaScript off, the event
channel blocked, a press before the app has started (the answer pages' markup: tests/unit/test_plain_forms.py).
A visitor to be accepted waits the test servers' fill time."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.browser import (
    CONTACT_BODY,
    MIN_FILL_TIME_S,
    QUESTION,
    SUBSCRIBE_BODY,
    assert_no_console_errors,
    axe_violations,
    fill_contact,
    submit_button,
)
from tests.visitor import question_answer


@pytest.fixture
def no_js(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def test_without_javascript_subscribing_fails_then_works_and_a_reload_sends_nothing(no_js: Page, base_url, gateway):
    gateway.status = 500
    no_js.goto(base_url + "/subscribe")
    expect(submit_button(no_js)).to_be_enabled()
    no_js.fill("#subscribe-name", "Jo Reader")
    no_js.fill("#subscribe-email", "jo@example.com")
    submit_button(no_js).click()
    expect(no_js.locator("[data-form-alert]")).to_have_text("Failed to subscribe. Please try again.")
    expect(no_js.locator("#subscribe-email")).to_have_value("jo@example.com")
    assert len(gateway.requests) == 1

    gateway.reset()
    submit_button(no_js).click()
    expect(no_js).to_have_url(base_url + "/subscribe/thanks")
    expect(no_js.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect(no_js.locator("#subscribe-success")).to_contain_text("first to know when a new book")
    expect(no_js.get_by_role("link", name="Subscribe another address")).to_have_attribute("href", "/subscribe")
    assert gateway.bodies == [SUBSCRIBE_BODY]
    no_js.reload()
    expect(no_js.locator("#subscribe-success h2")).to_be_visible()
    assert gateway.bodies == [SUBSCRIBE_BODY]  # a 303 leaves nothing to send again


def expect_an_accessible_answer(page: Page, form: str) -> None:
    """An empty form pressed: the server's answer starts at its summary, whose links lead to the
    fields, and passes axe (which needs JavaScript: the same answer as without it)."""
    submit_button(page).click()
    summary = page.locator(f"#{form}-form-summary")
    expect(summary).to_be_focused()
    expect(summary.locator("h2")).to_have_text("There is a problem")
    summary.get_by_role("link").first.click()
    expect(page.locator('[aria-invalid="true"]').first).to_be_focused()
    assert axe_violations(page) == []


def test_with_the_event_channel_blocked_both_forms_post_natively_and_their_answers_are_accessible(
    page: Page, base_url: str, gateway
):
    page.route_web_socket(re.compile(r".*/_event.*"), lambda socket: socket.close())  # as a proxy may do
    page.goto(base_url + "/subscribe")
    expect_an_accessible_answer(page, "subscribe")
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect(page).to_have_url(base_url + "/subscribe/thanks")

    page.goto(base_url + "/contact-us")
    served_at = time.monotonic()
    expect_an_accessible_answer(page, "contact")
    question = page.locator("#contact-question").inner_text()  # the answer page keeps it and when it was shown
    assert QUESTION.fullmatch(question), question
    fill_contact(page, question_answer(question))
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - served_at)))
    submit_button(page).click()
    expect(page).to_have_url(base_url + "/contact-us/thanks")
    expect(page.locator("#contact-success h2")).to_have_text("Thank you for contacting us!")
    assert gateway.bodies == [SUBSCRIBE_BODY, CONTACT_BODY]


def test_a_press_before_the_app_has_started_posts_natively(page: Page, base_url: str, gateway):
    held: list[Route] = []
    page.route(re.compile(r".*/assets/.*\.js$"), lambda route: held.append(route))  # the app's scripts never arrive
    page.goto(base_url + "/subscribe", wait_until="load")
    expect(submit_button(page)).to_be_enabled()
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()
    expect(page).to_have_url(base_url + "/subscribe/thanks")
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    assert held, "the app's scripts were requested"
    assert gateway.bodies == [SUBSCRIBE_BODY]


def test_the_app_keeps_the_question_the_server_wrote_into_the_page(page: Page, base_url: str, gateway):
    held: list[Route] = []
    released = False

    def hold_until_released(route: Route) -> None:
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(re.compile(r".*/assets/.*\.js$"), hold_until_released)
    page.goto(base_url + "/contact-us", wait_until="load")
    served = page.locator("#contact-question").inner_text()
    token = page.locator("#contact-token").input_value()
    assert QUESTION.fullmatch(served) and token
    released = True
    for route in held:  # now the app starts, hydrates and runs the page's on_load
        route.continue_()
    expect(page.locator('[data-hydrated="true"]')).to_have_count(1)
    expect(page.locator("form[data-connected]")).to_have_attribute("data-connected", "true")
    assert page.locator("#contact-question").inner_text() == served
    assert page.locator("#contact-token").input_value() == token
    assert_no_console_errors(page)
