"""`make run` serves a working site: both forms end to end on the embedded gateway, hot reload; Vite and
the backend on ports of their own, so the browser reaches the backend on its own port."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import psutil
from playwright.sync_api import Browser, Page, expect

from publisher.content import admin_copy, books
from publisher.rules import release_rules
from publisher.storage import subscribers, tables
from tests import release_book
from tests.browser import (
    DESKTOP,
    add_passkey_authenticator,
    assert_no_console_errors,
    open_page,
    send_contact_message,
    subscribe,
)
from tests.development.conftest import BOUNCE_FOLDER, BOUNCE_HOOK_SECRET, START_TIMEOUT_S, DevServer
from tests.embedded.test_list import link_in, on_this_server, readers
from tests.imap import DovecotServer
from tests.samples import bounce_sample
from tests.support import PROJECT_ROOT, clear_of_midnight, publisher_gateway, wait_until
from tests.unit.test_visit_rules import DESKTOP_CHROME


def listening_addresses(port: int) -> set[str]:
    listening = psutil.net_connections("tcp")  # IPv4 and IPv6, every process's
    return {c.laddr.ip for c in listening if c.status == psutil.CONN_LISTEN and c.laddr.port == port}


def test_both_servers_listen_on_loopback_only(dev_server: DevServer):
    assert listening_addresses(dev_server.frontend_port) == {"127.0.0.1"}
    assert listening_addresses(dev_server.backend_port) == {"127.0.0.1"}


def emails_to(smtp, address: str, subject: str):
    def matching():
        return [r for r in smtp.received if address in r.rcpt_tos and r.message["Subject"] == subject]

    wait_until(matching, 30, f"{subject!r} to {address}")
    return matching()


def test_the_search_both_forms_and_the_lists_links_work_with_the_app_on_the_backends_own_port(
    page: Page, dev_server: DevServer, smtp
):
    """The search runs once the app has rendered Home; the websocket goes to the backend's port; the
    contact message is stored and emailed; a link's button and a one-click POST to the page's port work."""
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    open_page(page, dev_server.base_url, "/?q=word%20search")
    expect(page.get_by_role("status").locator("p")).to_have_text("Showing 1 of 3 books matching “word search”.")
    expect(page.locator("article:visible")).to_have_count(1)
    expect(page.locator("article:visible")).to_have_id("word-search-book")

    subject = "Contact Form Submission from Jo Reader"
    send_contact_message(page, dev_server.base_url, "Sent from the development server.")
    [email] = emails_to(smtp, "books@animals.example", subject)
    assert email.message.get_content().endswith("Sent from the development server.\r\n")
    messages = [(m.sender_name, m.sender_email, m.subject, m.message) for m in tables.list_messages(dev_server.db_url)]
    assert messages == [("Jo Reader", "jo@example.com", subject, "Sent from the development server.")]

    address = f"links.{dev_server.frontend_port}@example.com"
    subscribe(page, dev_server.base_url, "Link Reader", address)
    app_sockets = [url for url in sockets if "/_event" in url]
    assert app_sockets and all(
        url.startswith(f"ws://127.0.0.1:{dev_server.backend_port}/_event/") for url in app_sockets
    ), sockets
    stored = [
        (s.name, s.book_updates) for s in subscribers.list_subscribers(db_url=dev_server.db_url) if s.email == address
    ]
    assert stored == [("Link Reader", "yes")]
    [confirmation] = emails_to(smtp, address, "Please confirm your subscription to Animals We Confuse")
    page.goto(on_this_server(dev_server, link_in(confirmation, "/subscribe/confirm")))
    page.get_by_role("button", name="Confirm my subscription").click()
    expect(page.locator("main section h2")).to_have_text("You are on the list")

    [welcome] = emails_to(smtp, address, "Welcome to the Animals We Confuse new-release list")
    answer = httpx.post(
        on_this_server(dev_server, welcome.message["List-Unsubscribe"].strip("<>")),
        content=b"List-Unsubscribe=One-Click",
        headers={"content-type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert (answer.status_code, answer.text) == (200, "Unsubscribed.")
    assert readers(dev_server.db_url)[address] == "unsubscribed"
    assert_no_console_errors(page)


def test_the_development_server_reads_the_bounce_mailbox_and_serves_the_bounce_webhook(
    page: Page, dev_server: DevServer, dovecot: DovecotServer, smtp, tmp_path
):
    annoyed = f"annoyed.{dev_server.frontend_port}@example.com"
    listing = tmp_path / "list.csv"
    listing.write_text(f"email,name,status\n{annoyed},Reader,confirmed\n")
    publisher_gateway(dev_server.db_url, "import", str(listing))

    # A bounce of the confirmation, with its VERP Return-Path and Message-ID (only proof changes a reader).
    gone = f"gone.{dev_server.frontend_port}@example.com"
    subscribe(page, dev_server.base_url, "Gone Reader", gone)
    [confirmation] = emails_to(smtp, gone, "Please confirm your subscription to Animals We Confuse")
    assert confirmation.mail_from.startswith("bounces+")  # VERP: the token names the email
    dovecot.append(
        bounce_sample(
            "qmail-hard", verp=confirmation.mail_from, reader=gone, message_id=confirmation.message["Message-ID"]
        ),
        folder=BOUNCE_FOLDER,
    )
    wait_until(
        lambda: readers(dev_server.db_url)[gone] == "bounced",
        30,
        "the development backend to read the bounce mailbox",
    )
    # The provider's POST reaches the backend through the page server's port, as on one origin.
    answer = httpx.post(
        f"{dev_server.base_url}/hooks/bounce",
        json={"email": annoyed, "type": "complaint"},
        headers={"Authorization": f"Bearer {BOUNCE_HOOK_SECRET}"},
        timeout=30,
    )
    assert (answer.status_code, answer.json()) == (200, {"accepted": 1})
    assert readers(dev_server.db_url)[annoyed] == "unsubscribed"


def test_a_forthcoming_book_turns_out_at_its_moment_without_a_reload(page: Page, dev_server: DevServer):
    """An edit of publisher/content/ shows after a reload; `reflex run` renders pages in the browser, so
    the book's part switches on the browser's clock (set twenty seconds before the test book's moment)."""
    books_file = PROJECT_ROOT / "publisher" / "content" / "books.py"
    original = books_file.read_text()
    book = release_book.test_book()
    assert book.release is not None
    buy = page.get_by_role("link", name=re.compile(books.GET_YOUR_COPY))
    try:
        books_file.write_text(original + release_book.book_source())

        def reloaded_with_the_book() -> bool:
            page.goto(dev_server.base_url + book.page_path, wait_until="domcontentloaded")
            try:  # the browser renders it (a page not compiled yet is a 404's)
                expect(page.get_by_role("heading", name=book.title, level=1)).to_be_visible(timeout=10_000)
            except AssertionError:
                return False
            return True

        # A recompile after the edit, as long as a start on a loaded machine (120 s was once too short).
        wait_until(reloaded_with_the_book, START_TIMEOUT_S, "the test book's page", interval=2)
        page.clock.set_system_time(book.release.utc - timedelta(seconds=20))
        page.reload()
        expect(page.get_by_text(release_rules.coming_words(book))).to_be_visible()
        expect(page.get_by_role("link", name=re.compile(books.PREORDER))).to_be_visible()
        expect(buy).to_have_count(0)
        expect(buy).to_have_attribute("href", str(book.book_link), timeout=60_000)
        expect(page.get_by_text(release_rules.coming_words(book))).to_have_count(0)
    finally:
        books_file.write_text(original)


def visits_csv(dev_server: DevServer) -> list[list[str]]:
    shown = publisher_gateway(dev_server.db_url, "visits", "--days", "1", "--csv", env={"PUBLISHER_GATEWAY_URL": ""})
    return list(csv.reader(io.StringIO(shown.stdout)))


def test_a_buy_press_counts_and_a_passkey_signs_in_to_the_dashboard_that_shows_it(
    browser: Browser, dev_server: DevServer
):
    """Vite answers the pages, uncounted; the beacon is a POST, passed to the backend: it counts. The
    passkey's relying party is `make run`'s page on localhost (never an IP address)."""
    clear_of_midnight()  # the day it counts is the day it reads back
    book = books.BOOKS[0]
    store = urlsplit(str(book.book_link))
    # A reader's browser (Chromium's headless user agent is a bot, counted apart).
    context = browser.new_context(viewport=DESKTOP, user_agent=DESKTOP_CHROME)
    context.set_default_timeout(15_000)
    # The store's page is answered here: nothing leaves the machine.
    context.route(f"{store.scheme}://{store.netloc}/**", lambda route: route.fulfill(body="<title>Store</title>"))
    try:
        page = context.new_page()
        page.goto(f"{dev_server.base_url}/books/{book.slug}", timeout=120_000)  # the first visit compiles it
        with page.expect_popup() as store_page:
            page.locator(f'a[data-buy="{book.slug}"]').first.click()
        assert urlsplit(store_page.value.url).netloc == store.netloc

        pressed = ["buy", "", f"{book.slug} {store.hostname}", "1", "1"]
        wait_until(lambda: pressed in visits_csv(dev_server), 60, "the press's count, flushed")
        assert [row for row in visits_csv(dev_server) if row[0] == "page"] == []  # Vite answered the page

        dashboard = context.new_page()  # its authenticator before its first page, as a phone has one
        add_passkey_authenticator(dashboard)
        site = f"http://localhost:{dev_server.frontend_port}"
        invited = publisher_gateway(dev_server.db_url, "admin", "invite", "Bea", env={"REFLEX_DEPLOY_URL": site})
        dashboard.goto(invited.stdout.strip(), timeout=120_000)  # the first visit compiles the page
        dashboard.get_by_role("button", name=admin_copy.CREATE_PASSKEY_BUTTON).click()
        expect(dashboard.get_by_text("Signed in as Bea")).to_be_visible(timeout=60_000)
        expect(dashboard.locator("#readers dt")).to_have_text(["Confirmed", "Pending", "Unsubscribed", "Bounced"])
        visits = dashboard.locator("#visits")
        expect(visits).to_be_visible(timeout=60_000)
        expect(visits).to_contain_text(book.title)  # its press, under the book's title
        dashboard.get_by_role("button", name=admin_copy.SIGN_OUT_BUTTON).click()
        expect(dashboard.get_by_role("button", name=admin_copy.SIGN_IN_BUTTON)).to_be_visible(timeout=60_000)
        dashboard.get_by_role("button", name=admin_copy.SIGN_IN_BUTTON).click()
        expect(dashboard.get_by_text("Signed in as Bea")).to_be_visible(timeout=60_000)
    finally:
        context.close()
