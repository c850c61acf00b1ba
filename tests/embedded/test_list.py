"""The new-release list with consent, as a reader lives it: publisher-serve with SMTP (aiosmtpd), on
SQLite (what differs on PostgreSQL: tests/services/test_new_release_list.py)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser import assert_no_console_errors, axe_violations, open_page, submit_button
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.smtp import Received, SmtpServer
from tests.support import ProductionServer, publisher_gateway, wait_until

CONFIRM_FROM_INBOX = "If this address is new to our list, please confirm it with the link we have just emailed you."


@dataclass
class ListSite:
    server: ProductionServer
    db_url: str
    email: str  # this test's own reader


@pytest.fixture
def site(request, mail_site) -> ListSite:
    """The site that keeps the list (mail_site, on SQLite), and a reader of this test's own. The links'
    rules over ASGI: tests/services/test_list_links.py; what PostgreSQL runs differently (the mailbox
    lock, the inserts once): tests/services/test_new_release_list.py."""
    server, db_url = mail_site
    email = f"{request.node.name.split('[')[0][5:29]}@example.com".lower()
    return ListSite(server, db_url, email)


def notices_about(smtp: SmtpServer, email: str) -> list[Received]:
    """The publisher's new-subscriber notices for ``email`` (Reply-To names the reader)."""
    return [r for r in emails_to(smtp, "books@animals.example") if email in str(r.message["Reply-To"])]


def status_of(db_url: str, email: str) -> str:
    rows = csv.DictReader(io.StringIO(publisher_gateway(db_url, "subscribers").stdout))
    return next(row["status"] for row in rows if row["email"] == email)


def emails_to(smtp: SmtpServer, address: str) -> list[Received]:
    return [received for received in smtp.received if address in received.rcpt_tos]


def wait_for_email(smtp: SmtpServer, address: str, subject: str) -> Received:
    def arrived() -> bool:
        return any(r.message["Subject"] == subject for r in emails_to(smtp, address))

    wait_until(arrived, DELIVERY_TIMEOUT_S, f"{subject!r} to {address}")
    return next(r for r in emails_to(smtp, address) if r.message["Subject"] == subject)


def on_this_server(server: ProductionServer, link: str) -> str:
    """A link from an email (the site's public address) as a path on the server under test."""
    parts = urlsplit(link)
    return f"{server.base_url}{parts.path}?{parts.query}"


def link_in(received: Received, path: str) -> str:
    [link] = [word for word in received.message.get_content().split() if f"{path}?token=" in word]
    return link


def join(page: Page, server: ProductionServer, email: str, name: str = "Jo Reader") -> None:
    """The subscribe form, as a visitor sends it: the spec's alert, and the sentence about the inbox."""
    open_page(page, server.base_url, "/subscribe")
    page.fill("#subscribe-name", name)
    page.fill("#subscribe-email", email)
    submit_button(page).click()
    expect(page.locator("#subscribe-success h2")).to_have_text("Thank you for joining our email list!")
    expect(page.locator("#subscribe-success p").nth(0)).to_have_text(
        "You will be the first to know when a new book in the Animals We Confuse series is released."
    )
    expect(page.locator("#subscribe-success p").nth(1)).to_have_text(CONFIRM_FROM_INBOX)
    expect(page.locator("[data-sonner-toast]", has_text="Successfully subscribed to our email list!")).to_be_visible()


def test_from_sign_up_to_one_click_unsubscribe(page: Page, site, smtp: SmtpServer):
    server, db_url, email = site.server, site.db_url, site.email
    join(page, server, email)
    confirmation = wait_for_email(smtp, email, "Please confirm your subscription to Animals We Confuse")
    assert str(confirmation.message["From"]) == "Animals We Confuse <site@animals.example>"
    confirm_url = on_this_server(server, link_in(confirmation, "/subscribe/confirm"))
    assert notices_about(smtp, email) == []  # the publisher hears of a reader once they confirm

    # A mail scanner opens the link: a page, and the address still waits for its owner.
    with httpx.Client(timeout=10) as scanner:
        opened = scanner.get(confirm_url)
    assert opened.status_code == 200 and "Confirm your subscription" in opened.text
    assert status_of(db_url, email) == "pending"

    # Its owner opens it, sees the address masked, and presses the button.
    page.goto(confirm_url)
    masked = f"{email[0]}{'*' * (len(email.split('@')[0]) - 2)}{email.split('@')[0][-1]}@e******.com"
    expect(page.locator("main section strong")).to_have_text(masked)
    assert axe_violations(page) == []
    assert status_of(db_url, email) == "pending"
    page.get_by_role("button", name="Confirm my subscription").click()
    expect(page.locator("main section h2")).to_have_text("You are on the list")
    assert axe_violations(page) == []
    assert status_of(db_url, email) == "confirmed"
    assert_no_console_errors(page)

    welcome = wait_for_email(smtp, email, "Welcome to the Animals We Confuse new-release list")
    # mail_site has PUBLISHER_NOTIFY_SUBSCRIBERS=1: the notice comes on confirmation, not on sign-up.
    wait_until(lambda: notices_about(smtp, email), DELIVERY_TIMEOUT_S, "the publisher's notice")
    unsubscribe_link = welcome.message["List-Unsubscribe"].removeprefix("<").removesuffix(">")
    assert welcome.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert f"Unsubscribe with one click: {unsubscribe_link}" in welcome.message.get_content()
    assert urlsplit(unsubscribe_link).path == "/unsubscribe"
    unsubscribe_url = on_this_server(server, unsubscribe_link)

    with httpx.Client(timeout=10) as provider:  # a mail provider's server: no cookies, no page
        assert provider.get(unsubscribe_url).status_code == 200  # a GET only shows the page
        assert status_of(db_url, email) == "confirmed"
        tampered = unsubscribe_url[:-1] + ("A" if unsubscribe_url[-1] != "A" else "B")
        assert provider.get(tampered).status_code == 404
        refused = provider.post(tampered, content=b"List-Unsubscribe=One-Click", headers=FORM)
        assert refused.status_code == 404
        assert status_of(db_url, email) == "confirmed"
        one_click = provider.post(unsubscribe_url, content=b"List-Unsubscribe=One-Click", headers=FORM)
    assert (one_click.status_code, one_click.text) == (200, "Unsubscribed.")
    assert one_click.cookies == {} and not one_click.headers.get("set-cookie")
    assert status_of(db_url, email) == "unsubscribed"

    page.goto(unsubscribe_url)  # the page says so, and offers the way back
    expect(page.locator("main section h2")).to_have_text("You have been unsubscribed")
    expect(page.get_by_role("link", name="Changed your mind? Subscribe again")).to_have_attribute("href", "/subscribe")


FORM = {"content-type": "application/x-www-form-urlencoded"}


def test_a_changed_link_gets_a_clear_page_and_the_unsubscribe_button_removes_the_address(
    page: Page, site, smtp: SmtpServer
):
    server, db_url, email = site.server, site.db_url, site.email
    join(page, server, email)
    confirmation = wait_for_email(smtp, email, "Please confirm your subscription to Animals We Confuse")
    confirm_url = on_this_server(server, link_in(confirmation, "/subscribe/confirm"))
    tampered = confirm_url[:-1] + ("A" if confirm_url[-1] != "A" else "B")
    with httpx.Client(timeout=10) as client:
        assert client.get(tampered).status_code == 404
    page.goto(tampered)
    expect(page.locator("main section h2")).to_have_text("This link is not valid")
    expect(page.get_by_role("button", name="Confirm my subscription")).to_have_count(0)
    assert status_of(db_url, email) == "pending"

    page.goto(confirm_url)
    # The app takes the page over once connected, and answers the press itself: no page load.
    expect(page.locator('form[data-app-form][data-connected="true"]')).to_be_visible()
    page.get_by_role("button", name="Confirm my subscription").click()
    expect(page.locator("main section h2")).to_have_text("You are on the list")
    expect(page).to_have_url(confirm_url)
    welcome = wait_for_email(smtp, email, "Welcome to the Animals We Confuse new-release list")
    unsubscribe_url = on_this_server(server, welcome.message["List-Unsubscribe"].strip("<>"))
    page.goto(unsubscribe_url)
    expect(page.locator("main section strong")).to_contain_text("@e******.com")
    assert status_of(db_url, email) == "confirmed"  # opening the page changed nothing
    assert axe_violations(page) == []
    expect(page.locator('form[data-app-form][data-connected="true"]')).to_be_visible()
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.locator("main section h2")).to_have_text("You have been unsubscribed")
    expect(page).to_have_url(unsubscribe_url)
    assert status_of(db_url, email) == "unsubscribed"
    assert_no_console_errors(page, allow_document_404=True)


def test_with_the_event_channel_blocked_the_link_pages_buttons_post_themselves(
    page: Page, site: ListSite, smtp: SmtpServer
):
    """JavaScript on, but the app never connects (a proxy that breaks websockets): the page the
    server wrote works as it is, and the app does not take it away. (axe needs JavaScript: the
    server's pages are checked here, as a reader without it gets them.)"""
    server, db_url, email = site.server, site.db_url, site.email
    join(page, server, email)
    confirmation = wait_for_email(smtp, email, "Please confirm your subscription to Animals We Confuse")
    confirm_url = on_this_server(server, link_in(confirmation, "/subscribe/confirm"))
    page.route_web_socket(re.compile(r".*/_event.*"), lambda socket: socket.close())
    page.goto(confirm_url, wait_until="networkidle")
    expect(page.locator("main section strong")).to_contain_text("@e******.com")
    assert axe_violations(page) == []
    page.get_by_role("button", name="Confirm my subscription").click()
    expect(page).to_have_url(confirm_url + "&done=1")
    expect(page.locator("main section h2")).to_have_text("You are on the list")
    assert status_of(db_url, email) == "confirmed"
    assert axe_violations(page) == []
