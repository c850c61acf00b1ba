"""The embedded gateway's journey: both forms to the inbox and the new-release list as a reader lives it,
publisher-serve with SMTP (aiosmtpd) on SQLite (what differs on PostgreSQL: tests/services/test_new_release_list.py;
two workers on PostgreSQL and Redis: tests/container/test_scale_out.py)."""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from tests.browser import (
    REAL_FILL_TIME_S,
    assert_no_console_errors,
    axe_violations,
    send_contact_message,
    subscribe,
)
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.smtp import Received, SmtpServer
from tests.support import ProductionServer, publisher_gateway, wait_until

BOOKS = "books@animals.example"  # the publisher's inbox
CONFIRM_FROM_INBOX = "If this address is new to our list, please confirm it with the link we have just emailed you."


def notices_about(smtp: SmtpServer, email: str) -> list[Received]:
    """The publisher's new-subscriber notices for ``email`` (Reply-To names the reader)."""
    return [r for r in emails_to(smtp, BOOKS) if email in str(r.message["Reply-To"])]


def readers(db_url: str) -> dict[str, str]:
    """Each address the site keeps, and its status."""
    rows = csv.DictReader(io.StringIO(publisher_gateway(db_url, "subscribers").stdout))
    return {row["email"]: row["status"] for row in rows}


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
    subscribe(page, server.base_url, name, email)
    expect(page.locator("#subscribe-success p").nth(0)).to_have_text(
        "You will be the first to know when a new book in the Animals We Confuse series is released."
    )
    expect(page.locator("#subscribe-success p").nth(1)).to_have_text(CONFIRM_FROM_INBOX)


def test_a_contact_message_and_a_reader_from_sign_up_to_the_unsubscribe_button(page: Page, mail_site, smtp: SmtpServer):
    """Both forms to the inbox on the embedded gateway, the contact form in the spec's five seconds; a link's
    page with and without the app (one-click, a scanner, a changed link's status: tests/services)."""
    server, db_url = mail_site
    email = "list.reader@example.com"
    text = f"Do you ship to Canada? ({email})"
    send_contact_message(page, server.base_url, text, REAL_FILL_TIME_S)

    def contact_arrived() -> bool:
        return any(r.message.get_content().endswith(f"\r\n\r\n{text}\r\n") for r in emails_to(smtp, BOOKS))

    wait_until(contact_arrived, DELIVERY_TIMEOUT_S, "the contact message in the publisher's inbox")
    join(page, server, email, name="Zoë Ångström")
    confirmation = wait_for_email(smtp, email, "Please confirm your subscription to Animals We Confuse")
    assert str(confirmation.message["From"]) == "Animals We Confuse <site@animals.example>"
    # Nothing the visitor typed rides in the confirmation: no name in To or in the text.
    assert str(confirmation.message["To"]) == email and "Zoë" not in confirmation.message.get_content()
    confirm_url = on_this_server(server, link_in(confirmation, "/subscribe/confirm"))
    assert notices_about(smtp, email) == []  # the publisher hears of a reader once they confirm

    page.goto(confirm_url[:-1] + ("A" if confirm_url[-1] != "A" else "B"))
    expect(page.locator("main section h2")).to_have_text("This link is not valid")
    expect(page.get_by_role("button", name="Confirm my subscription")).to_have_count(0)

    # Its owner opens it with the event channel blocked (a proxy that breaks websockets): the page the
    # server wrote works as it is and the app does not take it away (axe as a reader without it gets it).
    blocked = page.context.new_page()
    blocked.route_web_socket(re.compile(r".*/_event.*"), lambda socket: socket.close())
    blocked.goto(confirm_url, wait_until="networkidle")
    masked = "l*********r@e******.com"
    expect(blocked.locator("main section strong")).to_have_text(masked)
    assert axe_violations(blocked) == []
    assert readers(db_url)[email] == "pending"
    blocked.get_by_role("button", name="Confirm my subscription").click()
    expect(blocked).to_have_url(confirm_url + "&done=1")
    expect(blocked.locator("main section h2")).to_have_text("You are on the list")
    assert axe_violations(blocked) == []
    assert readers(db_url)[email] == "confirmed"
    blocked.close()

    welcome = wait_for_email(smtp, email, "Welcome to the Animals We Confuse new-release list")
    # mail_site has PUBLISHER_NOTIFY_SUBSCRIBERS=1: the notice comes on confirmation, not on sign-up.
    wait_until(lambda: notices_about(smtp, email), DELIVERY_TIMEOUT_S, "the publisher's notice")
    unsubscribe_url = on_this_server(server, welcome.message["List-Unsubscribe"].strip("<>"))
    # The app takes the unsubscribe page over and answers the press itself: no page load.
    page.goto(unsubscribe_url)
    expect(page.locator("main section strong")).to_have_text(masked)
    assert readers(db_url)[email] == "confirmed"  # opening the page changed nothing
    assert axe_violations(page) == []
    expect(page.locator('form[data-app-form][data-connected="true"]')).to_be_visible()
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.locator("main section h2")).to_have_text("You have been unsubscribed")
    expect(page).to_have_url(unsubscribe_url)
    assert readers(db_url)[email] == "unsubscribed"
    expect(page.get_by_role("link", name="Changed your mind? Subscribe again")).to_have_attribute("href", "/subscribe")
    assert_no_console_errors(page, allow_document_404=True)
