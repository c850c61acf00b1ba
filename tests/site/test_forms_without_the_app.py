"""Both forms without the app (docs/product.md, Forms: two ways to send a form): JavaScript off, the event
channel blocked, a press before the app has started; the server's answer pages, read as markup (edge cases
over ASGI: tests/unit/test_plain_forms.py). A visitor to be accepted waits the test servers' fill time."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from bs4 import BeautifulSoup
from playwright.sync_api import Browser, Page, Route, expect

from tests.browser import (
    MIN_FILL_TIME_S,
    QUESTION,
    assert_no_console_errors,
    axe_violations,
    fill_contact,
    submit_button,
)
from tests.visitor import TOKEN_ANSWER, form_token_shown_ago, question_answer

SUBSCRIBE_BODY = {"email": "jo@example.com", "name": "Jo Reader", "book_updates": "yes"}
CONTACT_BODY = {
    "sender": {"name": "Jo Reader", "email": "jo@example.com"},
    "subject": "Contact Form Submission from Jo Reader",
    "message": "When is the next book coming out?",
}


@pytest.fixture
def no_js(browser: Browser) -> Iterator[Page]:
    """A visitor whose browser runs no JavaScript at all."""
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


# --- JavaScript off -----------------------------------------------------------------------


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


# --- The server's answer pages, as markup ----------------------------------------------------


def answered(base_url: str, path: str, **fields: str) -> BeautifulSoup:
    """The page the server answers a refused post from its own page with (422)."""
    response = httpx.post(base_url + path, data=fields, headers={"Origin": base_url}, timeout=10)
    assert response.status_code == 422, response.status_code
    return BeautifulSoup(response.text, "html.parser")


def text_of(page: BeautifulSoup, selector: str) -> str:
    return page.select_one(selector).get_text(" ", strip=True)


def expect_messages(page: BeautifulSoup, form: str, messages: dict[str, str]) -> None:
    """Each message beside its field, the field marked invalid, all of them in the error summary."""
    assert page.title.string.startswith("Error: ")
    for field_id, message in messages.items():
        assert page.find(id=field_id)["aria-invalid"] == "true", field_id
        assert text_of(page, f"#{field_id}-error") == message
    assert [li.get_text(" ", strip=True) for li in page.select(f"#{form}-form-summary li")] == list(messages.values())


def contact(**fields: str) -> dict[str, str]:
    """The contact form as a browser posts it with a form_token_shown_ago's answer; ``fields`` changed."""
    form = {"firstName": "Jo", "lastName": "Reader", "email": "jo@example.com", "website": ""}
    return {**form, "message": "When is the next book coming out?", "answer": str(TOKEN_ANSWER), **fields}


def test_every_subscribe_message_is_shown_beside_its_field_with_the_values_kept(base_url, gateway):
    short = answered(base_url, "/subscribe", name=" J ", email="jo@example", website="")
    expect_messages(
        short,
        "subscribe",
        {
            "subscribe-name": "Name must be at least 2 characters",
            "subscribe-email": "Please enter a valid email address",
        },
    )
    assert (short.find(id="subscribe-name")["value"], short.find(id="subscribe-email")["value"]) == (
        " J ",
        "jo@example",
    )
    assert short.select_one('#subscribe-form-summary a[href="#subscribe-email"]') is not None

    bot = answered(base_url, "/subscribe", name="Jo Reader", email="jo@example.com", website="https://spam.example")
    assert text_of(bot, "[data-form-alert]") == "Please try again."
    assert gateway.requests == []


def test_every_contact_message_is_shown_and_the_answer_asked_again(base_url, gateway):
    empty = answered(base_url, "/contact-us", **dict.fromkeys(contact(), ""), token=form_token_shown_ago())
    expect_messages(
        empty,
        "contact",
        {
            "contact-first-name": "Please enter your first name",
            "contact-last-name": "Please enter your last name",
            "contact-email": "Please enter your email",
            "contact-message": "Please enter your message",
            "contact-answer": "Please answer the math question",
        },
    )
    short = answered(
        base_url,
        "/contact-us",
        **contact(firstName="J", lastName="R", email="jo@", message="Too short", answer="3"),
        token=form_token_shown_ago(),
    )
    assert text_of(short, "#contact-first-name-error") == "First name must be at least 2 characters"
    assert short.find(id="contact-first-name")["value"] == "J"
    assert text_of(short, "#contact-message") == "Too short"
    assert short.find(id="contact-answer").get("value", "") == ""  # never kept
    assert QUESTION.fullmatch(text_of(short, "#contact-question"))
    assert gateway.requests == []


# --- JavaScript on, the app not connected --------------------------------------------------


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
