"""The publisher's dashboard in Chromium with a virtual passkey (DevTools' WebAuthn domain), against
publisher-serve on the embedded gateway: invited, enrolled, signed out and in, shut out by a revoke."""

from __future__ import annotations

import csv
import io
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, expect

from publisher.content import admin_copy, books
from publisher.storage import bounce_records, campaigns, subscribers, tables, visit_counts
from publisher.storage.bounce_records import Fetched, MailboxPlace, Report
from publisher.storage.subscribers import SignUp
from tests.browser import DESKTOP, add_passkey_authenticator, axe_violations, new_page
from tests.support import ProductionServer, clear_of_midnight, publisher_gateway, running_server
from tests.visitor import ADMIN_STATE, HYDRATE, Visitor, run_async

MARKUP = "<img src=x onerror=window.__pwned=1>"


@pytest.fixture(scope="module")
def dashboard_site(built_site, tmp_path_factory) -> Iterator[tuple[ProductionServer, str]]:
    """publisher-serve keeping the list on SQLite, at its own address (the passkeys' relying party)."""
    workdir = tmp_path_factory.mktemp("dashboard")
    db_url = f"sqlite:///{workdir / 'dashboard.db'}"
    publisher_gateway(db_url, "migrate")
    for number in range(3):  # three readers who joined, one who confirmed
        request = SignUp(email=f"reader{number}@example.com", name="Jo Reader")
        subscribers.subscribe(request, None, db_url)
    key = subscribers.list_subscribers(db_url=db_url)[0].link_key
    subscribers.confirm(key, None, None, db_url)
    # A message whose every field is markup and control characters: shown as text, never run.
    hostile = tables.ContactMessage(
        sender_name=f"{MARKUP} Eve",
        sender_email="eve@example.com",
        subject=f"Hi {MARKUP}",
        message=(
            f"<script>window.__pwned = 2</script> [javascript:window.__pwned=3](javascript:alert(1)) \x1b[31m {MARKUP}"
        ),
    )
    tables.store_message(hostile, db_url)
    # What came back, as a stranger wrote it: a bounce's reason, a left message's subject and sender.
    bounce_records.record_all(
        [Report("soft", f"452 mailbox full {MARKUP}", "webhook", email="reader0@example.com")], db_url
    )
    left = Fetched(digest="0" * 64, size=100, subject=f"Re: {MARKUP}", sender=f"{MARKUP}@example.com")
    bounce_records.record_message(
        MailboxPlace("INBOX", 1), 1, bounce_records.UNCLASSIFIED, fetched=left, note="unclassified", db_url=db_url
    )
    visit_counts.flush(visits_counted(), db_url=db_url)
    with running_server(workdir, {"PUBLISHER_GATEWAY_URL": "", "REFLEX_DB_URL": db_url}, own_address=True) as prod:
        yield prod, db_url


STORE = urlparse(str(books.BOOKS[0].book_link)).hostname


def visits_counted() -> visit_counts.Batch:
    """Today's and yesterday's counts as the flush writes them (views, and a seen row per visitor),
    with a campaign label whose text is markup, as a forged link's utm_ can be."""
    today = tables.utc_now().date()
    book = books.BOOKS[0]
    counts = {
        (today, "site", ""): (1_234, 120),
        (today - timedelta(days=1), "site", ""): (900, 80),
        (today, "page", "/"): (700, 90),
        (today, "page", book.page_path): (40, 20),
        (today, "source", "Instagram"): (15, 12),
        (today, "campaign", MARKUP): (3, 3),
        (today, "buy", f"{book.slug} {STORE}"): (6, 5),
        (today, "bot", ""): (77, 0),
    }
    return visit_counts.Batch(
        views={key: views for key, (views, _) in counts.items()},
        seen={(*key, n.to_bytes(16, "big")) for key, (_, visitors) in counts.items() for n in range(visitors)},
    )


@pytest.fixture
def passkey_page(browser) -> Iterator[Page]:
    """A phone-sized tab whose browser has a passkey authenticator that verifies its user."""
    for page in new_page(browser, {"width": 375, "height": 812}):
        add_passkey_authenticator(page)
        yield page


def enrol(page: Page, dashboard_site: tuple[ProductionServer, str], name: str) -> None:
    """Invited from the command line; the passkey created on the link's page opens the dashboard."""
    site, db_url = dashboard_site
    result = publisher_gateway(db_url, "admin", "invite", name, env={"REFLEX_DEPLOY_URL": site.base_url})
    [link] = result.stdout.splitlines()
    page.goto(link)
    page.get_by_role("button", name=admin_copy.CREATE_PASSKEY_BUTTON).click()
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible(timeout=15_000)


def expect_dashboard(page: Page, name: str) -> None:
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible(timeout=15_000)
    readers = page.locator("#readers dl")
    expect(readers.locator("dt")).to_have_text(["Confirmed", "Pending", "Unsubscribed", "Bounced"])
    expect(readers.locator("dd")).to_have_text(["1", "2", "0", "0"])


async def open_dashboard(site: ProductionServer, cookie_header: str | None, claimed: str | None) -> dict:
    """The dashboard's state after ``open`` from a tab that sends ``cookie_header`` and claims ``claimed``."""
    tab = Visitor(site.base_url, "/admin", cookie=cookie_header)
    await tab.connect()
    claims = {"headers": {"cookie": claimed}} if claimed else None
    await tab.send(HYDRATE, {}, router_data=claims)
    await tab.send(f"{ADMIN_STATE}.open", {}, router_data=claims)
    await tab.wait_for(lambda v: v.var(ADMIN_STATE, "checked") is True)
    seen = dict(tab.state.get(ADMIN_STATE, {}))
    await tab.close()
    return seen


def expect_signed_out(page: Page) -> None:
    expect(page.get_by_role("button", name=admin_copy.SIGN_IN_BUTTON)).to_be_visible(timeout=10_000)
    expect(page.locator("#readers")).to_have_count(0)
    expect(page.get_by_text("Signed in as")).to_have_count(0)


def test_a_passkey_enrolled_from_an_invitation_opens_the_dashboard_until_sign_out_or_revoke(
    dashboard_site, passkey_page: Page
):
    site, db_url = dashboard_site
    page = passkey_page
    enrol(page, dashboard_site, "Ada")
    expect_dashboard(page, "Ada")

    [cookie] = [c for c in page.context.cookies() if c["name"] == "publisher-admin"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # no script can read it
    # A state event sent by hand gets no data without the session's cookie.
    session_cookie = f"publisher-admin={cookie['value']}"
    stranger = run_async(open_dashboard(site, None, session_cookie))  # the cookie claimed in the event, not sent
    assert stranger["signed_in"] is False and stranger.get("parts", {}) == {}
    assert not stranger.get("admin_name")
    holder = run_async(open_dashboard(site, session_cookie, None))  # the same cookie, as the browser sends it
    assert holder["signed_in"] is True and holder["admin_name"] == "Signed in as Ada"

    page.get_by_role("button", name=admin_copy.SIGN_OUT_BUTTON).click()
    expect_signed_out(page)
    assert [c for c in page.context.cookies() if c["name"] == "publisher-admin"] == []

    page.get_by_role("button", name=admin_copy.SIGN_IN_BUTTON).click()  # no user name to type
    expect_dashboard(page, "Ada")

    # From the command line, while the page stays open: it empties itself within seconds.
    publisher_gateway(db_url, "admin", "revoke", "Ada")
    expect_signed_out(page)
    page.get_by_role("button", name=admin_copy.SIGN_IN_BUTTON).click()
    expect(page.get_by_text(admin_copy.PASSKEY_REFUSED)).to_be_visible(timeout=15_000)
    # Nothing went wrong in the page but the refused sign-in's answer (400), which the page showed.
    assert [e for e in page.console.errors if "status of 400" not in e] == []  # type: ignore[attr-defined]


def test_every_part_of_the_dashboard_is_shown_as_text_and_a_reader_is_found_by_address(
    dashboard_site, passkey_page: Page
):
    page = passkey_page
    enrol(page, dashboard_site, "Dee")
    for heading in ("Readers", "Messages", "Releases", "Bounces", "Health"):
        expect(page.get_by_role("heading", name=heading, level=2)).to_be_visible()
    charts = page.locator("#readers figure img")
    expect(charts).to_have_count(2)
    expect(charts.first).to_have_attribute("alt", "Confirmed readers per day, the last 90 days: 0 then, 1 now.")
    assert page.evaluate("[...document.querySelectorAll('#readers figure img')].every(i => i.naturalWidth > 0)")
    signups = page.locator("#readers table").last
    expect(signups.locator("tbody tr")).to_have_count(3)
    expect(signups.locator("tbody tr").first.locator("td").first).to_have_text("reader2@example.com")

    message = page.locator("#messages tbody tr").first
    expect(message.locator("td").nth(1)).to_have_text(f"{MARKUP} Eve")  # the markup, as text
    expect(message.locator("td").nth(3)).to_have_text(f"Hi {MARKUP}")
    expect(message.locator("td").nth(4)).to_have_text("stored")  # no SMTP here: kept, not emailed
    expect(message.locator("td").nth(5)).to_contain_text("<script>window.__pwned = 2</script>")
    assert page.locator("#messages img, #messages script, #messages a").count() == 0
    expect(page.locator("#bounces tbody tr").first.locator("td").nth(4)).to_have_text(f"452 mailbox full {MARKUP}")
    left = page.locator("#bounces table").nth(1).locator("tbody td")
    expect(left.nth(1)).to_have_text(f"{MARKUP}@example.com")
    expect(left.nth(2)).to_have_text(f"Re: {MARKUP}")
    assert page.locator("#bounces img, #bounces script").count() == 0
    assert page.evaluate("window.__pwned") is None  # nothing of it ran
    releases = page.locator("#releases tbody tr")
    expect(releases).to_have_count(len(books.BOOKS))  # every book, announced or not
    expect(releases.first.locator("td").nth(1)).to_have_text(admin_copy.NOT_ANNOUNCED)
    # No SMTP here: Announce says why it cannot send, and asks nothing.
    page.get_by_role("button", name=f"Announce {books.BOOKS[0].title}", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="PUBLISHER_SMTP_URL is not set")).to_be_visible()
    expect(page.get_by_role("alertdialog")).to_have_count(0)
    health = page.locator("#health dl")
    expect(health.locator("dt")).to_have_text(
        [
            "Emails waiting",
            "Emails failed",
            "Oldest waiting since",
            "SMTP",
            "Bounce mailbox",
            "Bounce mailbox last read",
            "Bounce mailbox last error",
        ]
    )
    expect(health.locator("dd").nth(3)).to_have_text("not configured")

    page.get_by_label(admin_copy.SEARCH_LABEL).fill("READER1")
    page.get_by_role("button", name=admin_copy.SEARCH_BUTTON, exact=True).click()
    found = page.locator("#readers table").first
    expect(found.locator("tbody tr")).to_have_count(1)
    expect(found.locator("tbody td").first).to_have_text("reader1@example.com")
    page.get_by_label(admin_copy.SEARCH_LABEL).fill("%")  # a wildcard is a character like any other
    page.get_by_role("button", name=admin_copy.SEARCH_BUTTON, exact=True).click()
    expect(page.get_by_text(admin_copy.NO_READER_FOUND)).to_be_visible()


def test_the_publisher_pauses_a_release_forgets_an_address_and_exports_the_list_each_asked_first_and_logged(
    dashboard_site, passkey_page: Page
):
    db_url = dashboard_site[1]
    book = books.BOOKS[0]
    campaigns.create_campaign(
        book.slug,
        book.title,
        lambda reader: f"<r{reader}-{uuid.uuid4().hex}@test>",
        tables.utc_now(),
        timedelta(days=1),
        db_url,
    )  # a release under way (this site has no SMTP, so it stays sending until paused)
    page = passkey_page
    enrol(page, dashboard_site, "Eve")

    # Pause: asks with the numbers, does nothing on Cancel, pauses on Yes.
    expect(page.locator("#releases tbody td").nth(2)).to_have_text("0 of 1")  # "N of total", from the campaign
    page.get_by_role("button", name=f"Pause {book.title}", exact=True).click()
    question = page.get_by_role("alertdialog")
    expect(question).to_contain_text(f"Pause the release of {book.title}? 0 of 1 sent")
    question.get_by_role("button", name=admin_copy.CANCEL_BUTTON).click()
    expect(page.get_by_role("alertdialog")).to_have_count(0)
    expect(page.locator("#releases tbody td").nth(1)).to_have_text("sending")
    page.get_by_role("button", name=f"Pause {book.title}", exact=True).click()
    page.get_by_role("alertdialog").get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
    expect(page.get_by_role("status").filter(has_text="is paused")).to_be_visible()
    expect(page.locator("#releases tbody td").nth(1)).to_have_text("paused")
    expect(page.locator("#releases tbody td").nth(8)).to_have_text("paused by Eve from the dashboard")

    # Resume: the same function as `publisher-gateway announce SLUG` after its question.
    page.get_by_role("button", name=f"Resume {book.title}", exact=True).click()
    expect(page.get_by_role("alertdialog")).to_contain_text(
        f"Resume the release of {book.title}? It paused: paused by Eve from the dashboard. 0 of 1 sent so far."
    )
    page.get_by_role("alertdialog").get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
    expect(page.locator("#releases tbody td").nth(1)).to_have_text("sending")

    # Forget: the same function as `publisher-gateway forget`.
    page.get_by_label(admin_copy.FORGET_LABEL).fill("reader2@example.com")
    page.get_by_role("button", name=admin_copy.FORGET_BUTTON).click()
    expect(page.get_by_role("alertdialog")).to_contain_text("Erase everything stored about reader2@example.com")
    page.get_by_role("alertdialog").get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
    expect(
        page.get_by_role("status").filter(has_text="reader2@example.com: Removed its place on the list (pending)")
    ).to_be_visible()
    expect(page.locator("#readers dl dd").nth(1)).to_have_text("1")  # pending: 2 before

    # Export: the CLI's columns, downloaded through the page's own form.
    with page.expect_download() as download:
        page.get_by_role("button", name=admin_copy.EXPORT_BUTTON).click()
    exported = list(csv.reader(io.StringIO(Path(download.value.path()).read_text())))
    assert ",".join(exported[0]) == "email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"
    assert sorted(row[0] for row in exported[1:]) == ["reader0@example.com", "reader1@example.com"]

    page.locator("#audit summary").first.click()  # on a phone the part starts closed
    audit = page.locator("#audit tbody tr")
    expect(audit).to_have_count(4)  # the first three, and one behind "Show all 4"
    expect(audit.nth(0).locator("td").nth(2)).to_have_text("export")
    expect(audit.nth(1).locator("td")).to_have_text([re.compile(".+"), "Eve", "forget", "reader2@example.com"])
    expect(audit.nth(2).locator("td")).to_have_text([re.compile(".+"), "Eve", "resume", book.slug])
    expect(audit.nth(3).locator("td")).to_have_text([re.compile(".+"), "Eve", "pause", book.slug])
    with page.expect_download() as download:
        page.get_by_role("button", name=admin_copy.AUDIT_DOWNLOAD_BUTTON).click()
    lines = list(csv.reader(io.StringIO(Path(download.value.path()).read_text())))
    assert lines[0] == ["at", "admin", "action", "target"]
    assert [row[2] for row in lines[1:5]] == ["export", "forget", "resume", "pause"]


PARTS = "section > details:has(> summary > h2)"  # the parts a phone shows closed
CELLS_OUTSIDE = """() => [...document.querySelectorAll('td')]
    .filter(cell => cell.offsetParent !== null)
    .map(cell => cell.getBoundingClientRect())
    .filter(box => box.left < 0 || box.right > document.documentElement.clientWidth).length"""


def test_visits_are_shown_as_text_and_every_table_reads_on_a_phone_with_nothing_for_axe(
    dashboard_site, passkey_page: Page
):
    clear_of_midnight()  # the day it counts is the day it reads back
    book = books.BOOKS[0]
    page = passkey_page  # 375 px wide
    enrol(page, dashboard_site, "Gus")
    # Four screens of a phone before any list or part is opened (it was 9,239 px: fourteen).
    assert page.evaluate("document.documentElement.scrollHeight") <= 4 * 812
    opened = page.locator(PARTS).evaluate_all(
        "parts => parts.filter(part => !part.open).map(part => (part.open = true))"
    )
    assert opened == [True] * 4  # Visits, Messages, Bounces, Audit log: closed on a phone, and now open
    visits = page.locator("#visits")
    expect(visits.get_by_role("heading", name=admin_copy.VISITS, level=2)).to_be_visible()
    figures = visits.locator("dl").first  # now, today, yesterday, bots: labelled as tests/unit/test_dashboard_visits.py
    figure = re.compile(r"^\d[\d,]*$")
    expect(figures.locator("dd")).to_have_text([figure, "120", "1,234", "80", "900", figure])
    # The 77 bot requests stored, and those of this module's headless browser (a bot) counted since.
    assert int(figures.locator("dd").last.inner_text().replace(",", "")) >= 77
    chart = visits.locator("figure img").first
    expect(chart).to_have_attribute(
        "alt", re.compile(r"^Visitors \(solid line\) and page views .*: 120 visitors and 1,234")
    )
    assert chart.evaluate("img => img.complete && img.naturalWidth > 0")
    expect(visits.locator("figcaption").first).to_have_text(chart.get_attribute("alt") or "")
    expect(visits.locator("figcaption").last).to_contain_text("the 14 days to")  # what the visits led to
    tables = visits.locator("table")
    expect(tables).to_have_count(5)
    expect(tables.nth(0).locator("tbody tr").first.locator("td")).to_have_text(["/", "90", "700"])
    expect(tables.nth(1).locator("tbody td").first).to_have_text("Instagram")
    expect(tables.nth(2).locator("tbody td").first).to_have_text(MARKUP)  # a campaign's label, as text
    expect(tables.nth(3).locator("tbody tr").first.locator("td")).to_have_text([book.title, STORE, "6", "5"])
    expect(tables.nth(4).locator("tbody tr").first.locator("td")).to_have_text([book.title, "20", "6", "5"])
    expect(visits.get_by_text(admin_copy.NO_SCRIPT_NOTE)).to_be_visible()
    assert page.locator("#visits script").count() == 0 and page.evaluate("window.__pwned") is None

    # A phone: every row a paragraph, its headings beside the values, nothing wider than the screen.
    first_cell = page.locator("#messages tbody td").first
    assert first_cell.evaluate("td => getComputedStyle(td, '::before').content") == '"Date"'
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.evaluate(CELLS_OUTSIDE) == 0
    assert axe_violations(page) == []

    page.set_viewport_size(DESKTOP)  # a computer: tables as tables, and still nothing for axe
    expect(page.locator("#visits thead").first).to_be_visible()
    assert first_cell.evaluate("td => getComputedStyle(td).display") == "table-cell"
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    assert page.evaluate(CELLS_OUTSIDE) == 0
    assert axe_violations(page) == []
    page.reload()  # drawn on a computer: every part open
    expect(page.get_by_text("Signed in as Gus")).to_be_visible(timeout=15_000)
    expect(page.locator(f"{PARTS}[open]")).to_have_count(4)
