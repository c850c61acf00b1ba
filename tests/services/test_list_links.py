"""What a list link's page and a one-click POST answer (the tokens and the masked address alone are
in tests/unit/test_list_links.py). On SQLite: a link's change is the list's SQL, which
test_new_release_list.py runs on PostgreSQL too where it differs."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from bs4 import BeautifulSoup
from reflex.istate.data import RouterData
from reflex_base import constants

from publisher import gateway, mailing_list
from publisher.config.settings import current
from publisher.content import books, list_copy
from publisher.limits import submits
from publisher.limits.submits import Limit, Limiter
from publisher.mail import outbox
from publisher.rules import bounces, list_rules
from publisher.rules.list_rules import ListStatus
from publisher.storage import bounce_records, queue, subscribers, tables
from publisher.storage.bounce_records import Report
from publisher.storage.subscribers import SignUp
from publisher.web.components.list_link import LINK_PANEL_ATTRIBUTE, checking_html
from publisher.web.states import list_link_state
from publisher.web.states.list_link_state import ConfirmState, UnsubscribeState
from publisher.web.submissions import SubscribeState
from tests.services.test_new_release_list import consent_record
from tests.unit.test_list_links import MAIL_ENV, OTHER_SECRET, SECRET, flip
from tests.unit.test_plain_forms import BOOK, SAME_SITE, book_client, client, write_build


@pytest.fixture
def list_site(db_url, monkeypatch):
    """This process as a site that keeps the list: the embedded gateway with SMTP, on ``db_url``."""
    for name, value in MAIL_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setattr(tables, "engine", lambda _url=None, real=tables.engine: real(db_url))
    submits.shared_limiter.set(Limiter())
    yield current().mail
    submits.shared_limiter.set(None)


def joined(mail, email: str = "jo@example.com") -> tables.Subscriber:
    """A subscriber who asked to join (pending, confirmation queued)."""
    body = SignUp(email=email, name="Jo Reader")
    subscribers.subscribe(body, outbox.job_for(mail))
    return next(s for s in subscribers.list_subscribers() if s.email == email)


async def opened(state_class, path: str, token: str, tab: str = "tab-1", done: bool = False):
    """The page's state as a visitor's tab opens the link (its on_load run)."""
    state = state_class(_reflex_internal_init=True)
    state.router = RouterData.from_router_data(
        {
            constants.RouteVar.HEADERS: {"origin": "https://books.example.com"},
            constants.RouteVar.ORIGIN: list_rules.link_path(path, token, done),
            constants.RouteVar.CLIENT_TOKEN: tab,
            constants.RouteVar.CLIENT_IP: "198.51.100.7",
        }
    )
    await run(state_class.open, state)
    return state


async def run(handler, state) -> None:
    result = handler.fn(state)
    if hasattr(result, "__aiter__"):
        async for _ in result:
            pass
    else:
        await result


@pytest.mark.asyncio
async def test_opening_a_confirmation_link_shows_the_masked_address_and_confirms_nothing(list_site):
    subscriber = joined(list_site)
    token = list_rules.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    before = await opened(ConfirmState, "/subscribe/confirm", token, done=True)  # typed by hand: nothing was pressed
    assert before.stage == list_link_state.ASK
    state = await opened(ConfirmState, "/subscribe/confirm", token)
    assert (state.stage, state.address) == (list_link_state.ASK, "j*@e******.com")
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING

    await run(ConfirmState.confirm, state)
    assert state.stage == list_link_state.DONE
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.CONFIRMED
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]

    await run(ConfirmState.confirm, state)  # a second press does nothing more
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]
    again = await opened(ConfirmState, "/subscribe/confirm", token, tab="tab-2")
    assert again.stage == list_link_state.ALREADY
    # The app on the page a plain press led to says what the press did, and only that.
    after = await opened(ConfirmState, "/subscribe/confirm", token, tab="tab-3", done=True)
    assert (after.stage, after.address) == (list_link_state.DONE, "j*@e******.com")


@pytest.mark.asyncio
async def test_opening_links_counts_against_the_visitors_limits(list_site):
    submits.shared_limiter.set(Limiter(per_client=Limit(2, 600), per_address=Limit(40, 600)))
    for expected in (list_link_state.INVALID, list_link_state.INVALID, list_link_state.LIMITED):
        state = await opened(UnsubscribeState, "/unsubscribe", "guess")
        assert state.stage == expected


@pytest.mark.asyncio
async def test_the_subscribe_forms_alert_asks_for_confirmation_only_where_the_site_keeps_the_list(
    list_site, monkeypatch
):
    state = SubscribeState(_reflex_internal_init=True)
    state.start()
    assert state.asks_confirmation
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")
    state.start()
    assert not state.asks_confirmation
    for name in ("PUBLISHER_GATEWAY_URL", "PUBLISHER_SMTP_URL", "PUBLISHER_NOTIFY_TO", "PUBLISHER_MAIL_FROM"):
        monkeypatch.delenv(name)
    state.start()
    assert not state.asks_confirmation
    assert list_copy.CONFIRM_FROM_INBOX == (
        "If this address is new to our list, please confirm it with the link we have just emailed you."
    )


@pytest.mark.parametrize("hours", [25, 2])  # a day after: a new confirmation goes; within it: none yet
@pytest.mark.asyncio
async def test_a_link_from_before_the_reader_left_and_signed_up_again_confirms_nothing(list_site, hours):
    """That sign-up's consent is not the old email's (it may be a stranger's)."""
    first = joined(list_site)
    old_link = list_rules.confirm_token(SECRET, first.link_key, first.confirmation_sent_at)
    subscribers.unsubscribe(first.link_key, "test")
    body = SignUp(email=first.email, name="Someone Else")
    subscribers.subscribe(body, outbox.job_for(list_site), now=first.confirmation_sent_at + timedelta(hours=hours))
    state = await opened(ConfirmState, "/subscribe/confirm", old_link)
    assert state.stage == list_link_state.REPLACED
    await run(ConfirmState.confirm, state)  # a crafted press changes nothing either
    result = subscribers.confirm(first.link_key, outbox.job_for(list_site), None, issued_at=first.confirmation_sent_at)
    assert result.outcome == "replaced"
    again = subscribers.lookup(first.link_key)
    assert again.status == ListStatus.PENDING
    assert (again.confirmation_sent_at > first.confirmation_sent_at) is (hours > 24)
    if hours > 24:  # the new confirmation's link confirms
        new_link = list_rules.confirm_token(SECRET, again.link_key, again.confirmation_sent_at)
        state = await opened(ConfirmState, "/subscribe/confirm", new_link, tab="tab-2")
        assert state.stage == list_link_state.ASK
        await run(ConfirmState.confirm, state)
        assert state.stage == list_link_state.DONE


@pytest.fixture
def build(tmp_path):
    """A stand-in for the build's pages, the two link pages with the panel's slot as the build writes it."""
    slot = f'<div class="rx-Html" {LINK_PANEL_ATTRIBUTE}="">{checking_html()}</div>'
    write_build(tmp_path, f'<main><h1>Heading</h1><section role="status">{slot}</section></main>')
    return tmp_path


def panel(response: httpx.Response) -> BeautifulSoup:
    [slot] = BeautifulSoup(response.text, "html.parser").select(f"[{LINK_PANEL_ATTRIBUTE}]")
    return slot


def button_of(response: httpx.Response) -> tuple[str, str]:
    """The panel's form: (where it posts, its button's text)."""
    [form] = panel(response).select("form")
    assert form["method"] == "post"
    return form["action"], form.select_one("button[type=submit]").get_text()


ONE_CLICK = b"List-Unsubscribe=One-Click"
FORM = "application/x-www-form-urlencoded"


async def one_click(http, token: str, body: bytes = ONE_CLICK, content_type: str = FORM, method: str = "POST"):
    """A mail provider's POST, from no page of ours."""
    headers = {"Content-Type": content_type, "Origin": "https://mail.example"}
    return await http.request(method, "/unsubscribe", params={"token": token}, content=body, headers=headers)


MULTIPART = b'--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n'


@pytest.mark.asyncio
@pytest.mark.parametrize(("body", "content_type"), [(ONE_CLICK, FORM), (MULTIPART, "multipart/form-data; boundary=b")])
async def test_a_one_click_post_unsubscribes_at_once_without_a_cookie(list_site, build, body, content_type):
    subscriber = joined(list_site)
    token = list_rules.unsubscribe_token(SECRET, subscriber.link_key)
    async with client(build) as http:
        assert (await http.get("/unsubscribe", params={"token": token})).status_code == 200
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING  # the GET changed nothing
        for _ in range(2):  # again: the same answer
            answer = await one_click(http, token, body, content_type)
            assert (answer.status_code, answer.text) == (200, "Unsubscribed.")
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "one-click unsubscribe"


@pytest.mark.asyncio
async def test_only_wrong_links_count_against_an_address(list_site, build):
    submits.shared_limiter.set(Limiter(per_address=Limit(3, 600)))
    good = list_rules.unsubscribe_token(SECRET, joined(list_site).link_key)
    async with client(build) as http:
        for _ in range(5):  # a mail provider unsubscribing many readers from one address is never held up
            assert (await http.get("/unsubscribe", params={"token": good})).status_code == 200
        guesses = [(await http.get("/unsubscribe", params={"token": "guess"})).status_code for _ in range(4)]
        assert guesses == [404, 404, 404, 429]
        assert (await one_click(http, "guess")).status_code == 429
        assert (await one_click(http, good)).status_code == 200
    async with client(build, "192.0.2.1") as http:  # another address
        assert (await http.get("/unsubscribe", params={"token": "guess"})).status_code == 404


@pytest.mark.asyncio
async def test_without_the_app_opening_changes_nothing_and_the_button_confirms_once_and_shows_the_result(
    list_site, build
):
    subscriber = joined(list_site)
    token = list_rules.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    async with client(build) as http:
        for _ in range(3):  # a mail scanner opens it, and again: nothing changes
            page = await http.get("/subscribe/confirm", params={"token": token})
            assert (await http.head("/subscribe/confirm", params={"token": token})).status_code == 200
        assert page.status_code == 200 and "Checking your link" not in page.text
        assert panel(page).select_one("strong").get_text() == "j*@e******.com"
        action, label = button_of(page)
        assert (action, label) == (f"/subscribe/confirm?token={token}", "Confirm my subscription")
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
        assert [d.kind for d in queue.list_deliveries()] == ["confirmation"]
        pressed = await http.post(action, headers=SAME_SITE)
        assert pressed.status_code == 303
        assert pressed.headers["location"] == f"/subscribe/confirm?token={token}&done=1"
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.CONFIRMED
        assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]
        result = await http.get(pressed.headers["location"])
        assert result.status_code == 200
        assert panel(result).select_one("h2").get_text() == "You are on the list"
        assert "Thank you! j*@e******.com is confirmed, and a welcome email is on its way." in panel(result).text
        assert not panel(result).select("form")

        again = await http.post(action, headers=SAME_SITE)  # the same press again (Back, then the button)
        assert again.status_code == 303
        assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]  # no second welcome
        used = await http.get("/subscribe/confirm", params={"token": token})
    assert "j*@e******.com is already confirmed: there is nothing more to do." in panel(used).text
    [event] = [e for e in consent_record("jo@example.com") if e.event == "confirmed"]
    assert event.how == "confirmation link"


@pytest.mark.asyncio
async def test_without_the_app_the_unsubscribe_button_removes_the_address_and_presses_count_as_the_apps_do(
    list_site, build
):
    submits.shared_limiter.set(Limiter(per_address=Limit(2, 600)))
    subscriber = joined(list_site)
    token = list_rules.unsubscribe_token(SECRET, subscriber.link_key)
    async with client(build) as http:
        page = await http.get("/unsubscribe", params={"token": token})
        assert button_of(page) == (f"/unsubscribe?token={token}", "Unsubscribe")
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
        # What a browser posts: the form's urlencoded body, empty (its button has no name).
        pressed = await http.post(button_of(page)[0], content=b"", headers={**SAME_SITE, "Content-Type": FORM})
        assert pressed.status_code == 303
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED
        result = await http.get(pressed.headers["location"])
        assert (await http.post(button_of(page)[0], headers=SAME_SITE)).status_code == 303
        limited = await http.post(button_of(page)[0], headers=SAME_SITE)  # the third press from this address
    assert limited.status_code == 429
    assert panel(limited).get_text() == "Too many attempts. Please wait a few minutes and try again."
    assert panel(result).select_one("h2").get_text() == "You have been unsubscribed"
    assert "j*@e******.com will get no more emails from us." in panel(result).text
    assert panel(result).select_one("a")["href"] == "/subscribe"
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "unsubscribe page"


@pytest.mark.asyncio
async def test_a_press_from_another_site_or_no_page_or_a_post_not_one_click_is_refused_and_changes_nothing(
    list_site, build
):
    subscriber = joined(list_site)
    confirm_token = list_rules.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    confirm = list_rules.link_path("/subscribe/confirm", confirm_token)
    token = list_rules.unsubscribe_token(SECRET, subscriber.link_key)
    unsubscribe = list_rules.link_path("/unsubscribe", token)
    elsewhere = ({"Origin": "https://evil.example"}, {})  # every header's rule: tests/unit/test_same_site.py
    async with client(build) as http:
        for headers in elsewhere:
            for action in (confirm, unsubscribe):
                refused = await http.post(action, headers={**headers, "Content-Type": FORM}, content=b"")
                assert refused.status_code == 403, (action, headers)
        assert (await one_click(http, token, b"x" * 5000)).status_code == 400
        wrong = await one_click(http, flip(token, -1))
        assert (wrong.status_code, wrong.text) == (404, "This link is not valid")
        one_click_confirm = await http.post(confirm, content=ONE_CLICK, headers={"Content-Type": FORM})
        assert one_click_confirm.status_code == 403  # one-click only unsubscribes
        assert (await one_click(http, token, method="PUT")).status_code == 405
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation"]


@pytest.mark.asyncio
async def test_without_the_app_each_link_gets_its_status_and_its_page(list_site, build, monkeypatch):
    left_reader = joined(list_site, "gone@example.com")
    bounce_records.record_all([Report(bounces.HARD, "550 5.1.1", tables.FROM_WEBHOOK, email="gone@example.com")])
    bounced = list_rules.confirm_token(SECRET, left_reader.link_key, left_reader.confirmation_sent_at)
    subscriber = joined(list_site)
    sent_at = subscriber.confirmation_sent_at
    changed = flip(list_rules.confirm_token(SECRET, subscriber.link_key, sent_at), -1)
    expired = list_rules.confirm_token(SECRET, subscriber.link_key, sent_at - timedelta(days=8))
    older = list_rules.confirm_token(SECRET, subscriber.link_key, sent_at - timedelta(days=1))
    unsubscribe = list_rules.unsubscribe_token(SECRET, subscriber.link_key)
    async with client(build) as http:
        assert (await http.get("/unsubscribe", params={"token": unsubscribe})).status_code == 200
        other_sites = list_rules.unsubscribe_token(OTHER_SECRET, subscriber.link_key)
        assert (await http.get("/unsubscribe", params={"token": other_sites})).status_code == 404
        assert (await http.get("/about")).text == "the site"  # other paths pass untouched
        invalid = await http.get("/subscribe/confirm", params={"token": changed})
        pressed = await http.post(f"/subscribe/confirm?token={changed}", headers=SAME_SITE)
        after_press = await http.get(pressed.headers["location"])
        gone = await http.get("/subscribe/confirm", params={"token": expired})
        await http.post(f"/subscribe/confirm?token={expired}", headers=SAME_SITE)  # no button; a crafted press
        left = await http.get("/subscribe/confirm", params={"token": bounced})
        await http.post(f"/subscribe/confirm?token={bounced}", headers=SAME_SITE)
        replaced = await http.get("/subscribe/confirm", params={"token": older})
        changed_unsubscribe = await http.get("/unsubscribe", params={"token": flip(changed, 0)})
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING  # no press did anything
        assert subscribers.lookup(left_reader.link_key).status == ListStatus.BOUNCED
        monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")  # the cloud keeps the list
        on_the_cloud = await http.get("/subscribe/confirm", params={"token": bounced})
        monkeypatch.delenv("PUBLISHER_GATEWAY_URL")
        subscribers.forget("jo@example.com")  # a genuine link whose address is gone: the same 404
        forgotten = await http.get("/unsubscribe", params={"token": unsubscribe})
    assert (left.status_code, panel(left).select_one("strong").get_text()) == (200, "g**e@e******.com")
    assert "has left the list since this link was sent" in panel(left).get_text()  # asks for a new sign-up
    for page in (invalid, after_press, changed_unsubscribe, forgotten, on_the_cloud):
        assert page.status_code == 404
        assert panel(page).select_one("h2").get_text() == "This link is not valid"
        assert not panel(page).select("form")
    assert pressed.status_code == 303
    assert (gone.status_code, panel(gone).select_one("h2").get_text()) == (410, "This confirmation link has expired")
    assert replaced.status_code == 200
    assert panel(replaced).select_one("h2").get_text() == "This confirmation link has been replaced"
    assert not panel(gone).select("form") and not panel(replaced).select("form")


@pytest.fixture
def waitlist_site(list_site, smtp_server, monkeypatch):
    """The list site mailing through aiosmtpd, a forthcoming test book in its content, its embedded gateway."""
    for name, value in smtp_server.mail_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(books, "BOOKS", (*books.BOOKS, BOOK))
    gateway.shared_gateway.set(mailing_list.EmbeddedList(mail=current().mail))
    yield current().mail
    gateway.shared_gateway.set(None)


async def confirmations(mail, smtp_server, count: int) -> list[str]:
    """The outbox sends what is due; the text of each confirmation aiosmtpd received (its raw bytes, parsed)."""
    await outbox.Sender(mail).send_due()
    received = smtp_server.wait_for(count, timeout=10)
    assert len(received) == count and all(b"\r\nList-Unsubscribe:" not in r.data for r in received)
    return [r.message.get_content().replace("\r\n", "\n") for r in received]


async def press_confirmation(build, text: str) -> tuple[str, str]:
    """The confirmation link of an email's ``text`` opened, then its button pressed: each panel's text."""
    path = text[text.index("/subscribe/confirm?") :].split()[0]
    async with client(build) as http:
        asked = panel(await http.get(path)).get_text(" ", strip=True)
        pressed = await http.post(path, headers=SAME_SITE)
        done = panel(await http.get(pressed.headers["location"])).get_text(" ", strip=True)
    return asked, done


@pytest.mark.asyncio
async def test_a_waitlist_address_gets_one_confirmation_naming_the_book_whoever_asks_again(
    waitlist_site, build, smtp_server
):
    async with book_client(build) as http:
        answers = [
            await http.post(BOOK.page_path, data={"email": email}, headers=SAME_SITE)
            for email in ("jo@example.com", "jo@example.com", "Jo+books@example.com")
        ]
    assert {(a.status_code, a.headers["location"]) for a in answers} == {(303, f"{BOOK.page_path}#waitlist-success")}
    [text] = await confirmations(waitlist_site, smtp_server, 1)  # one per mailbox a day
    assert f"asked to hear when {BOOK.title} is out\nwith this address" in text
    asked, done = await press_confirmation(build, text)
    assert asked == "Press the button to confirm j*@e******.com : we will email it once, when the book is out. " + (
        "Confirm my subscription"
    )
    assert done == "Your address is confirmed Thank you! We will email j*@e******.com once, when the book is out."
    reader = next(row for row in subscribers.list_subscribers() if row.email == "jo@example.com")
    assert (reader.status, reader.book_updates) == (ListStatus.CONFIRMED, tables.WAITLIST_ONLY)
    assert [d.kind for d in queue.list_deliveries((tables.PENDING, tables.SENT))] == ["confirmation"]  # no welcome


@pytest.mark.asyncio
async def test_a_confirmed_waiting_reader_who_ticks_the_box_is_asked_to_join_and_joins_with_a_press(
    waitlist_site, build, smtp_server
):
    yesterday = tables.utc_now() - timedelta(days=2)
    subscribers.wait(
        SignUp(email="jo@example.com", name=""), BOOK.slug, False, outbox.job_for(waitlist_site), now=yesterday
    )
    [reader] = subscribers.list_subscribers()
    subscribers.confirm(reader.link_key, None, None, now=yesterday, issued_at=reader.confirmation_sent_at)
    async with book_client(build) as http:
        ticked = await http.post(BOOK.page_path, data={"email": "jo@example.com", "joinList": "yes"}, headers=SAME_SITE)
    assert ticked.status_code == 303
    [text] = await confirmations(waitlist_site, smtp_server, 1)  # yesterday's, replaced, is not sent
    assert f"asked to join {list_copy.LIST_NAME}\nwith this address" in text  # confirmed for the book already
    asked, done = await press_confirmation(build, text)
    assert asked.startswith("Press the button to add j*@e******.com to")
    assert done.startswith("You are on the list")
    [reader] = subscribers.list_subscribers()
    assert reader.book_updates == tables.ON_LIST
