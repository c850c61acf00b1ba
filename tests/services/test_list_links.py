"""What a list link's page and a one-click POST answer (the tokens and the masked address alone are
in tests/unit/test_list_links.py). On SQLite: a link's change is the list's SQL, which
test_new_release_list.py runs on PostgreSQL too where it differs."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from bs4 import BeautifulSoup
from reflex.istate.data import RouterData
from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.token import BaseStateToken
from reflex_base import constants

from publisher.config.settings import mail_settings
from publisher.content import list_copy
from publisher.limits import submits
from publisher.limits.submits import Limit, Limiter
from publisher.mail import outbox
from publisher.reflex_internals import stored_state
from publisher.rules import bounces, list_links
from publisher.rules.list_rules import ListStatus
from publisher.server import routes
from publisher.server.link_pages import ListLinks
from publisher.storage import bounce_records, database, queue, subscribers, tables
from publisher.storage.bounce_records import Report
from publisher.storage.subscribers import SignUp
from publisher.web.components.list_link import LINK_PANEL_ATTRIBUTE, checking_html
from publisher.web.states import list_link_state
from publisher.web.states.confirm_state import ConfirmState
from publisher.web.states.subscribe_state import SubscribeState
from publisher.web.states.unsubscribe_state import UnsubscribeState
from tests.services.test_new_release_list import consent_record
from tests.unit.test_list_links import MAIL_ENV, OTHER_SECRET, SECRET, flip
from tests.unit.test_plain_forms import write_build

# --- The pages' states (the app's side) -------------------------------------------


@pytest.fixture
def list_site(db_url, monkeypatch):
    """This process as a site that keeps the list: the embedded gateway with SMTP, on ``db_url``."""
    for name, value in MAIL_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    # Every storage module reaches the database through these two (storage/database.py, storage/tables.py).
    monkeypatch.setattr(database, "engine", lambda _url=None, real=database.engine: real(db_url))
    monkeypatch.setattr(tables, "open_session", lambda _url, real=tables.open_session: real(db_url))
    submits.shared_limiter.set(Limiter())
    yield mail_settings()
    submits.shared_limiter.set(None)


def joined(mail, email: str = "jo@example.com") -> tables.Subscriber:
    """A subscriber who asked to join (pending, confirmation queued)."""
    body = SignUp(email=email, name="Jo Reader")
    subscribers.subscribe(body, outbox.job_for(mail))
    return next(s for s in subscribers.list_subscribers() if s.email == email)


def on_page(state_class, path: str, token: str, tab: str = "tab-1", address: str = "198.51.100.7", done: bool = False):
    state = state_class(_reflex_internal_init=True)
    state.router = RouterData.from_router_data(
        {
            constants.RouteVar.HEADERS: {"origin": "https://books.example.com"},
            constants.RouteVar.ORIGIN: list_links.link_path(path, token, done),
            constants.RouteVar.CLIENT_TOKEN: tab,
            constants.RouteVar.CLIENT_IP: address,
        }
    )
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
    token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    state = on_page(ConfirmState, "/subscribe/confirm", token)
    await run(ConfirmState.open, state)
    assert (state.stage, state.address) == (list_link_state.ASK, "j*@e******.com")
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING

    await run(ConfirmState.confirm, state)
    assert state.stage == list_link_state.DONE
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.CONFIRMED
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]

    await run(ConfirmState.confirm, state)  # a second press does nothing more
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation", "welcome"]
    again = on_page(ConfirmState, "/subscribe/confirm", token, tab="tab-2")
    await run(ConfirmState.open, again)
    assert again.stage == list_link_state.ALREADY


@pytest.mark.asyncio
async def test_the_app_on_the_page_a_plain_press_led_to_says_what_the_press_did_and_only_that(list_site):
    subscriber = joined(list_site)
    token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    before = on_page(ConfirmState, "/subscribe/confirm", token, done=True)  # typed by hand: nothing was pressed
    await run(ConfirmState.open, before)
    assert before.stage == list_link_state.ASK
    subscribers.confirm(subscriber.link_key, outbox.job_for(list_site), None, issued_at=subscriber.confirmation_sent_at)
    after = on_page(ConfirmState, "/subscribe/confirm", token, tab="tab-2", done=True)
    await run(ConfirmState.open, after)
    assert (after.stage, after.address) == (list_link_state.DONE, "j*@e******.com")


@pytest.mark.asyncio
async def test_the_confirmation_link_of_an_address_that_bounced_asks_for_a_new_sign_up(list_site):
    subscriber = joined(list_site, "gone@example.com")
    bounce_records.record(Report(bounces.HARD, "550 5.1.1", tables.FROM_WEBHOOK, email="gone@example.com"))
    token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    state = on_page(ConfirmState, "/subscribe/confirm", token)
    await run(ConfirmState.open, state)
    assert (state.stage, state.address) == (list_link_state.LEFT, "g**e@e******.com")
    await run(ConfirmState.confirm, state)  # no button; a crafted press changes nothing
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.BOUNCED


@pytest.mark.asyncio
async def test_an_expired_a_tampered_and_another_sites_confirmation_link(list_site, monkeypatch):
    subscriber = joined(list_site)
    old = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at - timedelta(days=8))
    state = on_page(ConfirmState, "/subscribe/confirm", old)
    await run(ConfirmState.open, state)
    assert state.stage == list_link_state.EXPIRED
    await run(ConfirmState.confirm, state)  # the button is not there; a crafted press changes nothing
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING

    forged = list_links.confirm_token(OTHER_SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    for token in (forged, "nonsense", ""):
        state = on_page(ConfirmState, "/subscribe/confirm", token)
        await run(ConfirmState.open, state)
        assert (state.stage, state.address) == (list_link_state.INVALID, "")

    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")  # the cloud keeps the list
    good = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    state = on_page(ConfirmState, "/subscribe/confirm", good)
    await run(ConfirmState.open, state)
    assert state.stage == list_link_state.INVALID
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING


@pytest.mark.asyncio
async def test_the_unsubscribe_page_removes_the_address_only_when_the_button_is_pressed(list_site):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    state = on_page(UnsubscribeState, "/unsubscribe", token)
    await run(UnsubscribeState.open, state)
    assert (state.stage, state.address) == (list_link_state.ASK, "j*@e******.com")
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
    await run(UnsubscribeState.unsubscribe, state)
    assert state.stage == list_link_state.DONE
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "unsubscribe page"


async def page_event(manager: StateManagerDisk, handler, state_class, path: str, token: str):
    """One event of the tab's page, as Reflex's event processor runs it: the tab's state from the
    manager (from its file after a restart), the router data of the event's page and connection."""
    router_data = {
        constants.RouteVar.HEADERS: {"origin": "https://books.example.com"},
        constants.RouteVar.CLIENT_IP: "198.51.100.7",
        constants.RouteVar.CLIENT_TOKEN: "tab-1",
        constants.RouteVar.SESSION_ID: "sid-1",
        constants.RouteVar.PATH: path,
        constants.RouteVar.ORIGIN: list_links.link_path(path, token),
        constants.RouteVar.QUERY: {list_links.TOKEN_PARAM: token},
    }
    async with manager.modify_state(BaseStateToken(ident="tab-1", cls=state_class)) as root:
        root.router_data = root._update_router_vars(router_data, root.router_data)
        page = await root.get_state(state_class)
        await run(handler, page)
    return page


@pytest.mark.asyncio
async def test_a_link_pages_stored_state_keeps_no_token_and_after_a_restart_the_page_acts_on_its_link(
    list_site, tmp_path, monkeypatch
):
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(tmp_path))
    stored_state.install()  # as the app's entry point does (publisher.py)
    other, reader = joined(list_site), joined(list_site, "ann@example.org")
    token = list_links.unsubscribe_token(SECRET, reader.link_key)
    before = StateManagerDisk(token_expiration=3600)
    page = await page_event(before, UnsubscribeState.open, UnsubscribeState, "/unsubscribe", token)
    assert (page.stage, page.address) == (list_link_state.ASK, "a*n@e******.org")
    await before.close()  # the worker stops: every state is in its file
    files = list(tmp_path.glob("*.pkl"))
    assert files and [file.name for file in files if token.encode() in file.read_bytes()] == []
    after = StateManagerDisk(token_expiration=3600)  # the next worker reads the files
    page = await page_event(after, UnsubscribeState.open, UnsubscribeState, "/unsubscribe", token)  # the reconnect
    assert (page.stage, page.address) == (list_link_state.ASK, "a*n@e******.org")
    page = await page_event(after, UnsubscribeState.unsubscribe, UnsubscribeState, "/unsubscribe", token)
    assert page.stage == list_link_state.DONE
    assert subscribers.lookup(reader.link_key).status == ListStatus.UNSUBSCRIBED
    assert subscribers.lookup(other.link_key).status == ListStatus.PENDING
    await after.close()


@pytest.mark.asyncio
async def test_opening_links_counts_against_the_visitors_limits(list_site):
    submits.shared_limiter.set(Limiter(per_client=Limit(2, 600), per_address=Limit(40, 600)))
    for expected in (list_link_state.INVALID, list_link_state.INVALID, list_link_state.LIMITED):
        state = on_page(UnsubscribeState, "/unsubscribe", "guess")
        await run(UnsubscribeState.open, state)
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
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL")
    monkeypatch.delenv("PUBLISHER_SMTP_URL")
    monkeypatch.delenv("PUBLISHER_NOTIFY_TO")
    monkeypatch.delenv("PUBLISHER_MAIL_FROM")
    state.start()
    assert not state.asks_confirmation
    assert list_copy.CONFIRM_FROM_INBOX == (
        "If this address is new to our list, please confirm it with the link we have just emailed you."
    )


# --- HTTP: the status of a link's page, and one-click unsubscribe ---------------------


class Page:
    """The prerendered page behind the middleware: answers 200 and records what it was asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send):
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"<html>the page</html>"})


def request(method: str, path: str, token: str, body: bytes = b"", content_type: str = "", client="203.0.113.9"):
    """One request through the middleware: (status, body, whether the page was served)."""
    page = Page()
    app = routes.route_table(page)
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": f"token={token}".encode(),
        "headers": [(b"content-type", content_type.encode())] if content_type else [],
        "client": (client, 5000),
    }
    sent: list[dict] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    body_out = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body_out.decode(), bool(page.paths)


ONE_CLICK = b"List-Unsubscribe=One-Click"
FORM = "application/x-www-form-urlencoded"


def test_a_links_page_answers_200_404_or_410(list_site):
    subscriber = joined(list_site)
    now = tables.utc_now()
    fresh = list_links.confirm_token(SECRET, subscriber.link_key, now)
    expired = list_links.confirm_token(SECRET, subscriber.link_key, now - timedelta(days=8))
    assert request("GET", "/subscribe/confirm", fresh)[::2] == (200, True)
    assert request("GET", "/subscribe/confirm", expired)[::2] == (410, True)
    assert request("GET", "/subscribe/confirm", flip(fresh, -1))[::2] == (404, True)  # tampered
    assert request("GET", "/unsubscribe", list_links.unsubscribe_token(SECRET, subscriber.link_key))[0] == 200
    assert request("GET", "/unsubscribe", list_links.unsubscribe_token(OTHER_SECRET, subscriber.link_key))[0] == 404
    subscribers.forget("jo@example.com")  # a genuine link whose address is gone: the same 404
    assert request("GET", "/unsubscribe", list_links.unsubscribe_token(SECRET, subscriber.link_key))[0] == 404
    assert request("GET", "/about", "x")[::2] == (200, True)  # other paths pass untouched


def test_a_one_click_post_unsubscribes_at_once_without_a_cookie(list_site):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    assert request("GET", "/unsubscribe", token)[0] == 200
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING  # the GET changed nothing
    assert request("POST", "/unsubscribe", token, ONE_CLICK, FORM) == (200, "Unsubscribed.", False)
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED
    assert request("POST", "/unsubscribe", token, ONE_CLICK, FORM)[:2] == (200, "Unsubscribed.")  # again: the same
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "one-click unsubscribe"


def test_a_one_click_post_as_multipart_form_data_is_understood(list_site):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    body = b'--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n'
    assert request("POST", "/unsubscribe", token, body, "multipart/form-data; boundary=b")[0] == 200
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED


def test_a_post_that_is_not_one_click_or_whose_token_is_not_ours_changes_nothing(list_site):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    # Not one-click: a press of the page's button, which a request from no page of ours is not.
    assert request("POST", "/unsubscribe", token, b"", FORM)[0] == 403
    assert request("POST", "/unsubscribe", token, b"x" * 5000, FORM)[0] == 400
    assert request("POST", "/unsubscribe", flip(token, -1), ONE_CLICK, FORM)[:2] == (404, "This link is not valid")
    assert request("POST", "/subscribe/confirm", token, ONE_CLICK, FORM)[0] == 403  # one-click only unsubscribes
    assert request("PUT", "/unsubscribe", token, ONE_CLICK, FORM)[0] == 405
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING


def test_only_wrong_links_count_against_an_address(list_site):
    submits.shared_limiter.set(Limiter(per_address=Limit(3, 600)))
    subscriber = joined(list_site)
    good = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    for _ in range(5):  # a mail provider unsubscribing many readers from one address is never held up
        assert request("GET", "/unsubscribe", good)[0] == 200
    assert [request("GET", "/unsubscribe", "guess")[0] for _ in range(4)] == [404, 404, 404, 429]
    assert request("POST", "/unsubscribe", "guess", ONE_CLICK, FORM)[0] == 429
    assert request("GET", "/unsubscribe", "guess", client="192.0.2.1")[0] == 404  # another address
    assert request("POST", "/unsubscribe", good, ONE_CLICK, FORM)[0] == 200


@pytest.mark.asyncio
async def test_only_the_latest_confirmations_link_confirms(list_site):
    """A link from before the reader left and was signed up again, or one a newer
    confirmation replaced, confirms nothing: that sign-up's consent is not the old email's."""
    first = joined(list_site)
    old_link = list_links.confirm_token(SECRET, first.link_key, first.confirmation_sent_at)
    subscribers.unsubscribe(first.link_key, "test")
    body = SignUp(email=first.email, name="Jo Reader")
    subscribers.subscribe(body, outbox.job_for(list_site), now=first.confirmation_sent_at + timedelta(hours=25))
    again = subscribers.lookup(first.link_key)
    assert again.status == ListStatus.PENDING and again.confirmation_sent_at > first.confirmation_sent_at

    state = on_page(ConfirmState, "/subscribe/confirm", old_link)
    await run(ConfirmState.open, state)
    assert state.stage == list_link_state.REPLACED
    await run(ConfirmState.confirm, state)  # a crafted press changes nothing either
    assert subscribers.lookup(first.link_key).status == ListStatus.PENDING
    result = subscribers.confirm(first.link_key, outbox.job_for(list_site), None, issued_at=first.confirmation_sent_at)
    assert result.outcome == "replaced"
    assert subscribers.lookup(first.link_key).status == ListStatus.PENDING

    new_link = list_links.confirm_token(SECRET, again.link_key, again.confirmation_sent_at)
    state = on_page(ConfirmState, "/subscribe/confirm", new_link, tab="tab-2")
    await run(ConfirmState.open, state)
    assert state.stage == list_link_state.ASK
    await run(ConfirmState.confirm, state)
    assert state.stage == list_link_state.DONE


@pytest.mark.asyncio
async def test_a_link_older_than_a_rejoin_within_the_day_does_not_confirm(list_site):
    """Left and signed up again within 24 hours: no new confirmation yet, and the old one's
    link no longer confirms (the new sign-up may be a stranger's)."""
    first = joined(list_site)
    old_link = list_links.confirm_token(SECRET, first.link_key, first.confirmation_sent_at)
    subscribers.unsubscribe(first.link_key, "test")
    body = SignUp(email=first.email, name="Someone Else")
    subscribers.subscribe(body, outbox.job_for(list_site), now=first.confirmation_sent_at + timedelta(hours=2))
    state = on_page(ConfirmState, "/subscribe/confirm", old_link)
    await run(ConfirmState.open, state)
    assert state.stage == list_link_state.REPLACED
    assert subscribers.lookup(first.link_key).status == ListStatus.PENDING


# --- Without the app: the page the server writes, and its button's plain POST ---------------


@pytest.fixture
def build(tmp_path):
    """A stand-in for the build's pages, the two link pages with the panel's slot as the build writes it."""
    slot = f'<div class="rx-Html" {LINK_PANEL_ATTRIBUTE}="">{checking_html()}</div>'
    write_build(tmp_path, f'<main><h1>Heading</h1><section role="status">{slot}</section></main>')
    return tmp_path


def site_client(build) -> httpx.AsyncClient:
    """The production server's link pages, over ASGI (the page behind them is never asked)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=routes.route_table(Page(), build_dir=build)), base_url=SITE
    )


SITE = "http://127.0.0.1:8000"
SAME_SITE = {"Origin": SITE}


def panel(response: httpx.Response) -> BeautifulSoup:
    [slot] = BeautifulSoup(response.text, "html.parser").select(f"[{LINK_PANEL_ATTRIBUTE}]")
    return slot


def button_of(response: httpx.Response) -> tuple[str, str]:
    """The panel's form: (where it posts, its button's text)."""
    [form] = panel(response).select("form")
    assert form["method"] == "post"
    return form["action"], form.select_one("button[type=submit]").get_text()


@pytest.mark.asyncio
async def test_without_the_app_the_confirmation_page_carries_its_button_and_a_get_changes_nothing(list_site, build):
    subscriber = joined(list_site)
    token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    async with site_client(build) as http:
        for _ in range(3):  # a mail scanner opens it, and again
            page = await http.get("/subscribe/confirm", params={"token": token})
            head = await http.head("/subscribe/confirm", params={"token": token})
    assert (page.status_code, head.status_code) == (200, 200)
    assert panel(page).select_one("strong").get_text() == "j*@e******.com"
    assert "Press the button to add j*@e******.com to the Animals We Confuse new-release list." in panel(page).text
    assert button_of(page) == (f"/subscribe/confirm?token={token}", "Confirm my subscription")
    assert "Checking your link" not in page.text
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation"]


@pytest.mark.asyncio
async def test_without_the_app_the_confirm_button_confirms_once_and_leads_to_the_result(list_site, build):
    subscriber = joined(list_site)
    token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    async with site_client(build) as http:
        action, _label = button_of(await http.get("/subscribe/confirm", params={"token": token}))
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
async def test_without_the_app_the_unsubscribe_button_removes_the_address(list_site, build):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    async with site_client(build) as http:
        page = await http.get("/unsubscribe", params={"token": token})
        assert button_of(page) == (f"/unsubscribe?token={token}", "Unsubscribe")
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
        # What a browser posts: the form's urlencoded body, empty (its button has no name).
        pressed = await http.post(button_of(page)[0], content=b"", headers={**SAME_SITE, "Content-Type": FORM})
        assert pressed.status_code == 303
        assert subscribers.lookup(subscriber.link_key).status == ListStatus.UNSUBSCRIBED
        result = await http.get(pressed.headers["location"])
    assert panel(result).select_one("h2").get_text() == "You have been unsubscribed"
    assert "j*@e******.com will get no more emails from us." in panel(result).text
    assert panel(result).select_one("a")["href"] == "/subscribe"
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "unsubscribe page"


@pytest.mark.asyncio
async def test_a_press_from_another_site_or_from_no_page_is_refused_and_changes_nothing(list_site, build):
    subscriber = joined(list_site)
    confirm_token = list_links.confirm_token(SECRET, subscriber.link_key, subscriber.confirmation_sent_at)
    confirm = list_links.link_path("/subscribe/confirm", confirm_token)
    unsubscribe = list_links.link_path("/unsubscribe", list_links.unsubscribe_token(SECRET, subscriber.link_key))
    elsewhere = (
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Referer": "https://evil.example/page"},
        {},
    )
    async with site_client(build) as http:
        for headers in elsewhere:
            for action in (confirm, unsubscribe):
                refused = await http.post(action, headers={**headers, "Content-Type": FORM}, content=b"")
                assert refused.status_code == 403, (action, headers)
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING
    assert [d.kind for d in queue.list_deliveries()] == ["confirmation"]


@pytest.mark.asyncio
async def test_without_the_app_a_changed_an_expired_or_a_replaced_link_shows_its_page(list_site, build):
    subscriber = joined(list_site)
    sent_at = subscriber.confirmation_sent_at
    changed = flip(list_links.confirm_token(SECRET, subscriber.link_key, sent_at), -1)
    expired = list_links.confirm_token(SECRET, subscriber.link_key, sent_at - timedelta(days=8))
    older = list_links.confirm_token(SECRET, subscriber.link_key, sent_at - timedelta(days=1))
    async with site_client(build) as http:
        invalid = await http.get("/subscribe/confirm", params={"token": changed})
        pressed = await http.post(f"/subscribe/confirm?token={changed}", headers=SAME_SITE)
        after_press = await http.get(pressed.headers["location"])
        gone = await http.get("/subscribe/confirm", params={"token": expired})
        replaced = await http.get("/subscribe/confirm", params={"token": older})
        unsubscribe = await http.get("/unsubscribe", params={"token": flip(changed, 0)})
    for page in (invalid, after_press, unsubscribe):
        assert page.status_code == 404
        assert panel(page).select_one("h2").get_text() == "This link is not valid"
        assert not panel(page).select("form")
    assert pressed.status_code == 303
    assert (gone.status_code, panel(gone).select_one("h2").get_text()) == (410, "This confirmation link has expired")
    assert (replaced.status_code, panel(replaced).select_one("h2").get_text()) == (
        200,
        "This confirmation link has been replaced",
    )
    assert not panel(gone).select("form") and not panel(replaced).select("form")
    assert subscribers.lookup(subscriber.link_key).status == ListStatus.PENDING


@pytest.mark.asyncio
async def test_without_the_app_presses_count_against_the_address_as_the_apps_do(list_site, build):
    submits.shared_limiter.set(Limiter(per_address=Limit(2, 600)))
    subscriber = joined(list_site)
    action = f"/unsubscribe?token={list_links.unsubscribe_token(SECRET, subscriber.link_key)}"
    async with site_client(build) as http:
        statuses = [(await http.post(action, headers=SAME_SITE)).status_code for _ in range(2)]
        limited = await http.post(action, headers=SAME_SITE)
    assert statuses == [303, 303]
    assert limited.status_code == 429
    assert panel(limited).get_text() == "Too many attempts. Please wait a few minutes and try again."


@pytest.mark.asyncio
async def test_one_click_from_a_mail_provider_is_unchanged_beside_the_page(list_site, build):
    subscriber = joined(list_site)
    token = list_links.unsubscribe_token(SECRET, subscriber.link_key)
    async with site_client(build) as http:
        one_click = await http.post(
            "/unsubscribe",
            params={"token": token},
            content=ONE_CLICK,
            headers={"Content-Type": FORM, "Origin": "https://mail.example"},  # not our page: no matter
        )
    assert (one_click.status_code, one_click.text) == (200, "Unsubscribed.")
    [event] = [e for e in consent_record("jo@example.com") if e.event == "unsubscribed"]
    assert event.how == "one-click unsubscribe"


def test_a_build_without_the_panels_slot_is_named_at_start(tmp_path):
    for route in ("subscribe/confirm", "unsubscribe"):
        (tmp_path / route).mkdir(parents=True)
        (tmp_path / route / "index.html").write_text("<html><body><p>Checking your link…</p></body></html>")
    with pytest.raises(LookupError, match=r"no \[data-link-panel\] element.*make build"):
        ListLinks(Page(), tmp_path)
