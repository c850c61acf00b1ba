"""Release day end to end (issue 50): a forthcoming test book (tests/release_book.py) on two publisher-serve
replicas on one PostgreSQL whose clock the test moves (libfaketime): the page takes names before its moment,
the dashboard moves, holds and resumes the send, the page, Home and the feed flip at the moment on both, each
confirmed reader gets one email, and the addresses that only waited are gone once their days are past."""

from __future__ import annotations

import collections
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from publisher.content import admin_copy, books, form_copy, list_copy
from publisher.content.models import Release
from publisher.mail import release_email
from publisher.rules import list_rules, release_rules
from publisher.rules.form_fields import EMAIL, HONEYPOT_FIELD, JOIN_LIST, WAITLIST
from publisher.storage import admins, campaigns, tables
from publisher.web import feed
from tests import release_book
from tests.browser import MOBILE, add_passkey_authenticator, new_page
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.embedded.test_list import emails_to, link_in, on_this_server, readers
from tests.release_book import ZONE, ServerClock, release_project, test_book
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import (
    VENV_BIN,
    ProductionServer,
    project_path,
    running_server,
    tool_env,
    wait_until,
)

BOOK = test_book()
MOMENT = Release(at=release_book.MOMENT, zone=release_book.ZONE).utc
FORM = {"content-type": "application/x-www-form-urlencoded"}
JS, NO_JS, ON_LIST, NEVER = (f"{who}@release.example" for who in ("script", "plain", "listed", "never"))
LIST_SUBJECT, WAITED_SUBJECT = release_email.subject(BOOK), list_copy.WAITLIST_SUBJECT.format(title=BOOK.title)


@dataclass
class ReleaseDay:
    servers: tuple[ProductionServer, ProductionServer]
    db_url: str
    clock: ServerClock
    root: Path
    env: dict[str, str]

    def gateway(self, *args: str, **env: str) -> str:
        """`publisher-gateway ARGS` as the operator runs it beside the servers: their content, their clock."""
        environ = tool_env(**project_path(self.root), **self.env, **env)
        command = [str(VENV_BIN / "publisher-gateway"), *args]
        return subprocess.run(command, cwd=self.root, env=environ, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def release_day(postgres, smtp: SmtpServer, tmp_path_factory) -> Iterator[ReleaseDay]:
    workdir = tmp_path_factory.mktemp("release-day")
    root = release_project(workdir / "build.log")
    clock = ServerClock(workdir / "clock", MOMENT - timedelta(minutes=30))
    db_url = postgres.url(postgres.create_database())
    env = {
        **smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS),
        **clock.env,
        "PUBLISHER_GATEWAY_URL": "",
        "REFLEX_DB_URL": db_url,
        "PUBLISHER_RATE_LIMIT_CLIENT": "100/60",
    }
    (workdir / "one").mkdir(), (workdir / "two").mkdir()
    with (
        running_server(workdir / "one", env, root=root, own_address=True) as one,
        running_server(workdir / "two", env, root=root, own_address=True) as two,
    ):
        yield ReleaseDay((one, two), db_url, clock, root, env)


def buttons(html: str) -> list[tuple[str, str]]:
    """The test book's buy and pre-order buttons: (label, link)."""
    found = re.findall(rf'<a [^>]*data-buy="{BOOK.slug}" href="([^"]+)"[^>]*>([^<]*)', html)
    return [(label.strip(), link) for link, label in found]


def card(home: str) -> str:
    return home.split(f'id="{BOOK.slug}"', 1)[1].split("</article>", 1)[0]


def is_coming(server: ProductionServer) -> bool:
    page, home, atom = (
        httpx.get(server.base_url + path, timeout=10).text for path in (BOOK.page_path, "/", feed.FEED_PATH)
    )
    coming = release_rules.coming_words(BOOK)
    if coming in page:
        assert buttons(page) == [(books.PREORDER, str(BOOK.preorder_link))]  # no buy button
        assert "https://schema.org/PreOrder" in page and form_copy.WAITLIST_TITLE in page
        assert coming in card(home) and buttons(card(home)) == [(books.PREORDER, str(BOOK.preorder_link))]
        assert BOOK.page_path not in atom
        return True
    assert buttons(page) == [(books.GET_YOUR_COPY, str(BOOK.book_link))]
    assert "PreOrder" not in page and form_copy.WAITLIST_TITLE not in page
    assert coming not in card(home) and buttons(card(home)) == [(books.GET_YOUR_COPY, str(BOOK.book_link))]
    assert BOOK.page_path in atom
    return False


def wait_on_page(page: Page, server: ProductionServer, email: str, join: bool) -> None:
    """ "Tell me when it's out" as a reader fills it in (with or without JavaScript): the thanks in place."""
    page.goto(server.base_url + BOOK.page_path)
    page.fill(f"#{WAITLIST.element_id(EMAIL.name)}", email)
    if join:
        page.get_by_label(JOIN_LIST.label).check()
    page.get_by_role("button", name=form_copy.WAITLIST_BUTTON).click()
    expect(page.locator(f"#{WAITLIST.element_id('success')}")).to_be_visible()
    assert page.url == f"{server.base_url}{BOOK.page_path}#{WAITLIST.element_id('success')}"


def wait_plainly(server: ProductionServer, email: str) -> None:
    """The form's POST as a browser sends it, from the site's own page."""
    body = {EMAIL.name: email, HONEYPOT_FIELD: ""}
    sent = httpx.post(server.base_url + BOOK.page_path, data=body, headers={"Origin": server.base_url}, timeout=10)
    assert sent.status_code == 303


def press_confirmation(smtp: SmtpServer, server: ProductionServer, address: str) -> None:
    wait_until(lambda: emails_to(smtp, address), DELIVERY_TIMEOUT_S, f"the confirmation to {address}")
    [confirmation] = emails_to(smtp, address)
    assert BOOK.title in confirmation.message.get_body(("plain",)).get_content()  # it names the book
    url = on_this_server(server, link_in(confirmation, "/subscribe/confirm"))
    pressed = httpx.post(url, headers={"Origin": server.base_url, **FORM}, timeout=10)
    assert pressed.status_code == 303  # to the link's page, which says it is done


def steer_from_the_dashboard(browser: Browser, day: ReleaseDay) -> None:
    """The publisher moves the send a minute later, holds it and lets it go, each asked first."""
    site = day.servers[0]
    link = day.gateway("admin", "invite", "Ada", REFLEX_DEPLOY_URL=site.base_url)
    for page in new_page(browser, MOBILE):
        add_passkey_authenticator(page)
        page.goto(link.strip())
        page.get_by_role("button", name=admin_copy.CREATE_PASSKEY_BUTTON).click()
        row = page.locator("#forthcoming li", has_text=BOOK.title)
        when = release_rules.publisher_words(MOMENT, ZONE)
        line = admin_copy.FORTHCOMING_LINE.format(when=when, state=tables.SCHEDULED, confirmed=3, pending=1)
        expect(row).to_contain_text(line)  # the list reader, the two who confirmed; the one who did not
        row.get_by_label(admin_copy.MOVE_LABEL.format(title=BOOK.title, zone=ZONE)).fill("2031-06-02T09:01")
        row.get_by_role("button", name=admin_copy.MOVE_BUTTON).click()
        page.get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
        moved = release_rules.publisher_words(MOMENT + timedelta(minutes=1), ZONE)
        expect(page.get_by_text(admin_copy.MOVED_SEND.format(title=BOOK.title, when=moved))).to_be_visible()
        for button, said in (
            (admin_copy.HOLD_BUTTON, admin_copy.HELD_SEND),
            (admin_copy.UNHOLD_BUTTON, admin_copy.UNHELD_SEND),
        ):
            row.get_by_role("button", name=button.format(title=BOOK.title)).click()
            page.get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
            expect(page.get_by_text(said.format(title=BOOK.title))).to_be_visible()


def the_send(db_url: str) -> tables.Campaign:
    campaign = campaigns.find_campaign(BOOK.slug, db_url)
    assert campaign is not None
    return campaign


def test_a_forthcoming_book_takes_names_flips_at_its_minute_and_each_reader_gets_one_email(
    release_day: ReleaseDay, browser: Browser, smtp: SmtpServer, tmp_path: Path
):
    (one, two), db_url, clock = release_day.servers, release_day.db_url, release_day.clock
    assert is_coming(one) and is_coming(two)

    # Four readers: with JavaScript on one replica, without it (joining the list too) on the other, a list
    # reader who also waits (a confirmed address is not asked again), and one who never confirms.
    for javascript, server, email in ((True, one, JS), (False, two, NO_JS)):
        context = browser.new_context(java_script_enabled=javascript)
        wait_on_page(context.new_page(), server, email, join=not javascript)
        context.close()
    (tmp_path / "list.csv").write_text(f"email,name,status\n{ON_LIST},Lou,confirmed\n")
    release_day.gateway("import", str(tmp_path / "list.csv"))
    wait_plainly(one, ON_LIST)
    wait_plainly(two, NEVER)
    for server, email in ((one, JS), (two, NO_JS)):
        press_confirmation(smtp, server, email)
    wait_until(lambda: emails_to(smtp, NEVER), DELIVERY_TIMEOUT_S, "the confirmation nobody presses")
    assert emails_to(smtp, ON_LIST) == []
    assert readers(db_url) == {JS: "confirmed", NO_JS: "confirmed", ON_LIST: "confirmed", NEVER: "pending"}

    wait_until(lambda: campaigns.find_campaign(BOOK.slug, db_url), 30, "the send to be scheduled")
    steer_from_the_dashboard(browser, release_day)
    moved = release_rules.publisher_words(MOMENT + timedelta(minutes=1), ZONE)
    line = admin_copy.FORTHCOMING_LINE.format(when=moved, state=tables.MOVED, confirmed=3, pending=1)
    assert line in release_day.gateway("schedule")  # the command line tells the same
    audit = [(line.admin, line.action, line.target.split()[0]) for line in admins.audit_log(3, db_url)]
    assert audit == [("Ada", action, BOOK.slug) for action in ("unhold", "hold", "move")]

    # At the moment, the page, Home and the feed flip on both replicas; the send waits for its minute.
    clock.set(MOMENT + timedelta(seconds=1))
    for server in (one, two):
        wait_until(lambda server=server: not is_coming(server), 30, f"{server.base_url} to show the book out")
    assert the_send(db_url).status == tables.MOVED

    clock.set(MOMENT + timedelta(seconds=61))
    wait_until(lambda: the_send(db_url).status == tables.FINISHED, DELIVERY_TIMEOUT_S, "the send")
    releases = [r for r in smtp.received if r.message["Subject"] in (LIST_SUBJECT, WAITED_SUBJECT)]
    sent = collections.Counter((address, r.message["Subject"]) for r in releases for address in r.rcpt_tos)
    assert sent == {(JS, WAITED_SUBJECT): 1, (NO_JS, LIST_SUBJECT): 1, (ON_LIST, LIST_SUBJECT): 1}  # none to NEVER
    its_out = next(r for r in releases if JS in r.rcpt_tos)
    assert b"\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in its_out.data
    assert str(BOOK.book_link) in its_out.message.get_body(("plain",)).get_content()

    # The addresses that only waited are erased once their days are past; the list's readers stay.
    finished = the_send(db_url).finished_at
    clock.set(tables.as_utc(finished) + timedelta(days=list_rules.WAITLIST_KEEP_DAYS, seconds=1))
    wait_until(lambda: set(readers(db_url)) == {NO_JS, ON_LIST}, 60, "the waitlist-only addresses to be erased")
