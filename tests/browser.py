"""Browser helpers shared by the suites that drive Chromium against a running server."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect, sync_playwright

from publisher.rules import antispam
from tests.support import QUICK_FILL_TIME_MS
from tests.visitor import question_answer

# The minimum fill time on the tests' servers (tests/support.py), and the spec's own (docs/product.md).
MIN_FILL_TIME_S = QUICK_FILL_TIME_MS / 1000
REAL_FILL_TIME_S = antispam.MIN_FILL_TIME_MS / 1000
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# What the test gateway receives from Jo Reader's sign-up and message.
SUBSCRIBE_BODY = {"email": "jo@example.com", "name": "Jo Reader", "book_updates": "yes"}
CONTACT_BODY = {
    "sender": {"name": "Jo Reader", "email": "jo@example.com"},
    "subject": "Contact Form Submission from Jo Reader",
    "message": "When is the next book coming out?",
}
DESKTOP = {"width": 1280, "height": 900}
MOBILE = {"width": 375, "height": 740}


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


class ConsoleRecorder:
    def __init__(self, page: Page):
        self.errors: list[str] = []
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))


# What an action or `expect` waits: a hang guard far above a page's time on a machine running two lanes
# of stages (Playwright's own 5 s was once too short for a confirmation page in a container).
WAIT_MS = 15_000
expect.set_options(timeout=WAIT_MS)


def new_page(browser: Browser, viewport: dict[str, int]) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport, base_url=None)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.console = ConsoleRecorder(page)  # type: ignore[attr-defined]
    yield page
    context.close()


def add_passkey_authenticator(page: Page) -> None:
    """A platform passkey authenticator (DevTools' WebAuthn) verifying its user at once, as a fingerprint does."""
    devtools = page.context.new_cdp_session(page)
    devtools.send("WebAuthn.enable")
    devtools.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from new_page(browser, DESKTOP)


@pytest.fixture
def mobile_page(browser: Browser) -> Iterator[Page]:
    yield from new_page(browser, MOBILE)


def open_page(page: Page, base_url: str, path: str) -> None:
    """Load a page and, on a form page, wait until the app has the visitor's state (``data-hydrated``)."""
    page.goto(base_url + path, wait_until="networkidle")
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator('[data-hydrated="false"]')).to_have_count(0)


def expect_loaded_image(img, alt: str) -> None:
    expect(img).to_have_attribute("alt", alt)
    assert img.evaluate("img => img.complete && img.naturalWidth > 0"), f"image not loaded: {alt}"


def expect_new_tab_link(link, href: str) -> None:
    expect(link).to_have_attribute("href", href)
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")


def assert_no_console_errors(page: Page, allow_document_404: bool = False) -> None:
    errors = page.console.errors  # type: ignore[attr-defined]
    if allow_document_404:
        errors = [e for e in errors if "status of 404" not in e]
    assert errors == []


def axe_violations(page: Page) -> list[str]:
    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_TAGS}})
    return [
        f"{v['id']}: {v['help']} ({', '.join(n['target'][0] for n in v['nodes'])})"
        for v in results.response["violations"]
    ]


def submit_button(page: Page):
    return page.locator("form button[type=submit]")


QUESTION = re.compile(r"What is \d+ [+-] \d+\?")


def wait_for_question(page: Page) -> tuple[str, int]:
    """The question shown to the visitor and its answer, worked out as a person would."""
    label = page.locator("label[for=contact-answer]")
    expect(label).to_contain_text(QUESTION)
    question = QUESTION.search(label.inner_text()).group(0)
    return question, question_answer(question)


def fill_contact(page: Page, answer: int | str, message: str = "When is the next book coming out?") -> None:
    page.fill("#contact-first-name", "Jo")
    page.fill("#contact-last-name", "Reader")
    page.fill("#contact-email", "jo@example.com")
    page.fill("#contact-message", message)
    page.fill("#contact-answer", str(answer))


def expect_toast(page: Page, text: str) -> None:
    expect(page.locator("[data-sonner-toast]", has_text=text)).to_be_visible()


SUBSCRIBE_SUCCESS_TOAST = "Successfully subscribed to our email list!"
CONTACT_SUCCESS_TOAST = "Your message has been sent successfully!"


def subscribe(page: Page, base_url: str, name: str, email: str) -> None:
    """A visitor joins the list: the success alert and toast (docs/product.md, Forms)."""
    open_page(page, base_url, "/subscribe")
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect_toast(page, SUBSCRIBE_SUCCESS_TOAST)


def send_contact_message(page: Page, base_url: str, message: str, fill_time_s: float = MIN_FILL_TIME_S) -> None:
    """A visitor sends a message as a person would: answers the question, waits out ``fill_time_s``."""
    open_page(page, base_url, "/contact-us")
    answer_and_send(page, message, fill_time_s)


def answer_and_send(page: Page, message: str, fill_time_s: float = MIN_FILL_TIME_S) -> None:
    """The open contact page's question answered, sent after the fill time, thanked for."""
    _, answer = wait_for_question(page)
    shown_at = time.monotonic()
    fill_contact(page, answer, message=message)
    time.sleep(max(0.0, fill_time_s + 0.5 - (time.monotonic() - shown_at)))
    submit_button(page).click()
    expect(page.locator("#contact-success h2")).to_have_text("Thank you for contacting us!")
    expect_toast(page, CONTACT_SUCCESS_TOAST)
