"""Both forms without the app (docs/product.md, Forms: two ways to send a form): JavaScript off, the
event channel blocked, a press before the app has started; and what the server refuses.

Against the production server and the recording test gateway, in Chromium. The contact form's
fill-time rule is real here, at the test servers' 2 s (tests/support.py): a visitor who is to be
accepted waits it out since the page was served (``wait_out_the_fill_time``), as a person would.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from publisher.rules import form_tokens
from publisher.rules.antispam import MathQuestion
from tests.browser import (
    MIN_FILL_TIME_S,
    QUESTION,
    assert_no_console_errors,
    axe_violations,
    fill_contact,
    submit_button,
    wait_for_question,
)
from tests.support import FORM_SECRET, RecordingGateway
from tests.visitor import question_answer

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


def block_the_event_channel(page: Page) -> None:
    """The app's websocket is closed as it opens, as a proxy that breaks websockets does."""
    page.route_web_socket(re.compile(r".*/_event.*"), lambda socket: socket.close())


def question_of(page: Page) -> tuple[str, int]:
    text = page.locator("#contact-question").inner_text()
    assert QUESTION.fullmatch(text), text
    return text, question_answer(text)


def wait_out_the_fill_time(served_at: float) -> None:
    time.sleep(max(0.0, MIN_FILL_TIME_S + 0.5 - (time.monotonic() - served_at)))


def summary_items(page: Page, form: str) -> list[str]:
    return page.locator(f"#{form}-form-summary li").all_inner_texts()


# --- JavaScript off -----------------------------------------------------------------------


def test_without_javascript_subscribing_works_and_a_reload_sends_nothing(no_js: Page, base_url: str, gateway):
    no_js.goto(base_url + "/subscribe")
    expect(submit_button(no_js)).to_be_enabled()
    no_js.fill("#subscribe-name", "Jo Reader")
    no_js.fill("#subscribe-email", "jo@example.com")
    submit_button(no_js).click()
    expect(no_js).to_have_url(base_url + "/subscribe/thanks")
    expect(no_js.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect(no_js.locator("#subscribe-success")).to_contain_text("first to know when a new book")
    expect(no_js.get_by_role("link", name="Subscribe another address")).to_have_attribute("href", "/subscribe")
    assert gateway.bodies == [SUBSCRIBE_BODY]
    no_js.reload()
    expect(no_js.locator("#subscribe-success h2")).to_be_visible()
    assert gateway.bodies == [SUBSCRIBE_BODY]  # a 303 leaves nothing to send again


def test_without_javascript_every_subscribe_message_is_shown_beside_its_field_with_the_values_kept(
    no_js: Page, base_url: str, gateway: RecordingGateway
):
    no_js.goto(base_url + "/subscribe")
    submit_button(no_js).click()
    expect(no_js).to_have_title(re.compile(r"^Error: "))
    for field, message in (("name", "Please enter your name"), ("email", "Please enter your email")):
        expect(no_js.locator(f"#subscribe-{field}")).to_have_attribute("aria-invalid", "true")
        expect(no_js.locator(f"#subscribe-{field}-error")).to_have_text(message)
    assert summary_items(no_js, "subscribe") == ["Please enter your name", "Please enter your email"]

    no_js.fill("#subscribe-name", " J ")
    no_js.fill("#subscribe-email", "jo@example")
    submit_button(no_js).click()
    expect(no_js.locator("#subscribe-name-error")).to_have_text("Name must be at least 2 characters")
    expect(no_js.locator("#subscribe-email-error")).to_have_text("Please enter a valid email address")
    expect(no_js.locator("#subscribe-name")).to_have_value(" J ")
    expect(no_js.locator("#subscribe-email")).to_have_value("jo@example")
    summary = no_js.locator("#subscribe-form-summary")
    expect(summary.get_by_role("link", name="Please enter a valid email address")).to_have_attribute(
        "href", "#subscribe-email"
    )

    no_js.fill("#subscribe-name", "Jo Reader")  # the honeypot, filled by a bot, is refused
    no_js.fill("#subscribe-email", "jo@example.com")
    no_js.fill("#subscribe-website", "https://spam.example", force=True)
    submit_button(no_js).click()
    expect(no_js.locator("[data-form-alert]")).to_have_text("Please try again.")
    assert gateway.requests == []


def test_without_javascript_a_gateway_failure_says_so_and_keeps_the_values(no_js: Page, base_url: str, gateway):
    gateway.status = 500
    no_js.goto(base_url + "/subscribe")
    no_js.fill("#subscribe-name", "Jo Reader")
    no_js.fill("#subscribe-email", "jo@example.com")
    submit_button(no_js).click()
    expect(no_js.locator("[data-form-alert]")).to_have_text("Failed to subscribe. Please try again.")
    expect(no_js.locator("#subscribe-email")).to_have_value("jo@example.com")
    assert len(gateway.requests) == 1


def test_without_javascript_a_contact_message_is_sent(no_js: Page, base_url: str, gateway: RecordingGateway):
    no_js.goto(base_url + "/contact-us")
    served_at = time.monotonic()
    _, answer = question_of(no_js)  # the question is in the page the server sent
    fill_contact(no_js, answer)
    wait_out_the_fill_time(served_at)
    submit_button(no_js).click()
    expect(no_js).to_have_url(base_url + "/contact-us/thanks")
    expect(no_js.locator("#contact-success h2")).to_have_text("Thank you for contacting us!")
    expect(no_js.locator("#contact-success")).to_contain_text("24-48 hours during business days")
    assert gateway.bodies == [CONTACT_BODY]
    no_js.reload()
    no_js.go_back()  # back to the form page: served afresh (no-store), nothing is posted again
    expect(no_js).to_have_url(base_url + "/contact-us")
    assert gateway.bodies == [CONTACT_BODY]


def test_without_javascript_every_contact_message_is_shown_and_the_answer_asked_again(
    no_js: Page, base_url: str, gateway: RecordingGateway
):
    no_js.goto(base_url + "/contact-us")
    first_question, _ = question_of(no_js)
    submit_button(no_js).click()
    expected = {
        "contact-first-name": "Please enter your first name",
        "contact-last-name": "Please enter your last name",
        "contact-email": "Please enter your email",
        "contact-message": "Please enter your message",
        "contact-answer": "Please answer the math question",
    }
    for field_id, message in expected.items():
        expect(no_js.locator(f"#{field_id}-error")).to_have_text(message)
        expect(no_js.locator(f"#{field_id}")).to_have_attribute("aria-invalid", "true")
    assert summary_items(no_js, "contact") == list(expected.values())

    no_js.fill("#contact-first-name", "J")
    no_js.fill("#contact-last-name", "R")
    no_js.fill("#contact-email", "jo@")
    no_js.fill("#contact-message", "Too short")
    no_js.fill("#contact-answer", "3")
    submit_button(no_js).click()
    expect(no_js.locator("#contact-first-name-error")).to_have_text("First name must be at least 2 characters")
    expect(no_js.locator("#contact-last-name-error")).to_have_text("Last name must be at least 2 characters")
    expect(no_js.locator("#contact-email-error")).to_have_text("Please enter a valid email address")
    expect(no_js.locator("#contact-message-error")).to_have_text("Message must be at least 10 characters")
    expect(no_js.locator("#contact-first-name")).to_have_value("J")
    expect(no_js.locator("#contact-message")).to_have_value("Too short")
    expect(no_js.locator("#contact-answer")).to_have_value("")  # never kept
    assert QUESTION.fullmatch(no_js.locator("#contact-question").inner_text())
    assert gateway.requests == []
    del first_question


def test_without_javascript_the_anti_spam_checks_refuse_with_the_specs_words(
    no_js: Page, base_url: str, gateway: RecordingGateway
):
    no_js.goto(base_url + "/contact-us")
    served_at = time.monotonic()
    _, answer = question_of(no_js)
    fill_contact(no_js, answer)
    submit_button(no_js).click()  # at once: under the fill time
    expect(no_js.locator("[data-form-alert]")).to_have_text("Please take your time to fill out the form completely.")
    expect(no_js.locator("#contact-message")).to_have_value("When is the next book coming out?")

    _, answer = question_of(no_js)
    wait_out_the_fill_time(served_at)  # the new page's token keeps when the form was first shown
    no_js.fill("#contact-answer", str(answer + 1))
    submit_button(no_js).click()
    expect(no_js.locator("[data-form-alert]")).to_have_text("Incorrect answer to the math question. Please try again.")
    expect(no_js.locator("#contact-answer-error")).to_have_text("Incorrect answer")

    _, answer = question_of(no_js)
    no_js.fill("#contact-answer", str(answer))
    no_js.fill("#contact-website", "https://spam.example", force=True)
    submit_button(no_js).click()
    expect(no_js.locator("[data-form-alert]")).to_have_text("Please try again.")
    assert gateway.requests == []


# --- JavaScript on, the app not connected --------------------------------------------------


@pytest.mark.parametrize("form", ["subscribe", "contact"])
def test_the_servers_answer_is_accessible_and_starts_at_its_summary(page: Page, base_url: str, gateway, form):
    """axe needs JavaScript: the same answer as without it, reached with the event channel blocked."""
    block_the_event_channel(page)
    page.goto(base_url + ("/subscribe" if form == "subscribe" else "/contact-us"))
    submit_button(page).click()
    summary = page.locator(f"#{form}-form-summary")
    expect(summary).to_be_focused()
    expect(summary.locator("h2")).to_have_text("There is a problem")
    summary.get_by_role("link").first.click()
    expect(page.locator('[aria-invalid="true"]').first).to_be_focused()
    assert axe_violations(page) == []
    assert gateway.requests == []


def test_with_the_event_channel_blocked_both_forms_post_natively(page: Page, base_url: str, gateway):
    block_the_event_channel(page)
    page.goto(base_url + "/subscribe")
    page.fill("#subscribe-name", "Jo Reader")
    page.fill("#subscribe-email", "jo@example.com")
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect(page).to_have_url(base_url + "/subscribe/thanks")

    page.goto(base_url + "/contact-us")
    served_at = time.monotonic()
    _, answer = wait_for_question(page)
    fill_contact(page, answer)
    wait_out_the_fill_time(served_at)
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


# --- What the server refuses -----------------------------------------------------------------


def contact_post(base_url: str, token: str, answer: int, headers: dict[str, str] | None = None, **extra: str):
    data = {
        "firstName": "Jo",
        "lastName": "Reader",
        "email": "jo@example.com",
        "message": "When is the next book coming out?",
        "answer": str(answer),
        "website": "",
        "token": token,
        **extra,
    }
    sent = {"Origin": base_url} if headers is None else headers
    return httpx.post(base_url + "/contact-us", data=data, headers=sent, follow_redirects=False, timeout=10)


def signed(question: MathQuestion, *, age_ms: float = 10_000, issued_ago_ms: float = 10_000) -> str:
    now = time.time() * 1000
    return form_tokens.issue(FORM_SECRET, question, now_ms=now - issued_ago_ms, shown_ms=now - age_ms)


def alert_of(response: httpx.Response) -> str:
    match = re.search(r"<p[^>]*data-form-alert[^>]*>([^<]*)</p>", response.text)
    return match.group(1) if match else ""


def test_a_token_is_accepted_once(base_url: str, gateway: RecordingGateway):
    token = signed(MathQuestion(3, "+", 4))
    assert contact_post(base_url, token, 7).status_code == 303
    replayed = contact_post(base_url, token, 7)
    assert (replayed.status_code, alert_of(replayed)) == (422, "Please try again.")
    assert len(gateway.requests) == 1


def test_an_expired_or_changed_token_sends_nothing(base_url: str, gateway: RecordingGateway):
    expired = contact_post(base_url, signed(MathQuestion(3, "+", 4), age_ms=3_700_000, issued_ago_ms=3_700_000), 7)
    assert (expired.status_code, alert_of(expired)) == (422, "Please try again.")
    changed = signed(MathQuestion(3, "+", 4)).replace(".3p4.", ".1p1.")
    assert (contact_post(base_url, changed, 2).status_code, contact_post(base_url, changed, 7).status_code) == (
        422,
        422,
    )
    forged = form_tokens.issue("another-secret-0123456789abcdef0123456789", MathQuestion(3, "+", 4), now_ms=0)
    assert alert_of(contact_post(base_url, forged, 7)) == "Please try again."
    assert gateway.requests == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://spam.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Referer": "https://spam.example/form.html"},
        {},
    ],
    ids=["other-origin", "opaque-origin", "cross-site-fetch", "other-referer", "nothing-said"],
)
def test_a_post_from_another_site_is_refused(base_url: str, gateway: RecordingGateway, headers):
    response = contact_post(base_url, signed(MathQuestion(3, "+", 4)), 7, headers=headers)
    assert response.status_code == 403
    subscribed = httpx.post(
        base_url + "/subscribe", data={"name": "Jo Reader", "email": "jo@example.com"}, headers=headers
    )
    assert subscribed.status_code == 403
    assert gateway.requests == []


def test_the_same_site_said_by_fetch_metadata_or_referer_is_accepted(base_url: str, gateway: RecordingGateway):
    by_fetch = contact_post(base_url, signed(MathQuestion(3, "+", 4)), 7, headers={"Sec-Fetch-Site": "same-origin"})
    by_referer = contact_post(
        base_url, signed(MathQuestion(2, "+", 2)), 4, headers={"Referer": base_url + "/contact-us"}
    )
    assert (by_fetch.status_code, by_referer.status_code) == (303, 303)
    assert len(gateway.requests) == 2


def test_a_body_over_16_kb_is_refused_before_it_is_read(base_url: str, gateway: RecordingGateway):
    response = contact_post(base_url, signed(MathQuestion(3, "+", 4)), 7, message="x" * 17_000)
    assert response.status_code == 413
    assert gateway.requests == []
