"""What a dashboard tab leaves in the tabs' stored state (reflex_internals/stored_state.py) on Redis, two
workers, once the closed tab's last state is stored: never the session's token, a reader's address or the
browser's user agent (the disk manager writes the same serialized state: tests/unit/test_stored_state.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import redis as redis_client
from playwright.sync_api import Page, expect
from reflex.istate.manager.token import BaseStateToken

from publisher.content import admin_copy
from publisher.limits import tabs
from publisher.storage import subscribers
from publisher.storage.subscribers import SignUp
from publisher.web.states.admin_state import AdminState
from tests.browser import add_passkey_authenticator, new_page
from tests.embedded.test_dashboard import enrol
from tests.support import ProductionServer, RedisServer, publisher_gateway, running_server, wait_until

READERS = ("ann.stored@example.com", "bob.stored@example.com", "cy.stored@example.com")
SEARCHED, FORGOTTEN = READERS[1], READERS[2]
NEWCOMER = "dee.stored@example.com"  # joins while the page is open


class Site:
    def __init__(self, server: ProductionServer, db_url: str, states: Path, redis: RedisServer):
        self.server, self.db_url, self.states, self.redis = server, db_url, states, redis

    def stored(self) -> dict[str, bytes]:
        found = {str(path): path.read_bytes() for path in self.states.rglob("*") if path.is_file()}
        return found | redis_values(self.redis)

    def admin_state_stored(self, token: str) -> bool:
        """The closed dashboard tab's last state is stored."""
        key = str(BaseStateToken(ident=token, cls=AdminState))
        # Once the server saw the tab close: the closed-tab expiry, or the refresh loop's last store.
        client = redis_client.Redis.from_url(self.redis.url)
        if 0 < client.ttl(key) <= tabs.CLOSED_TAB_KEEP_S:
            return True
        stored = client.get(key)
        return stored is not None and BaseStateToken.deserialize(data=stored)._watcher == ""


def redis_values(server: RedisServer) -> dict[str, bytes]:
    client = redis_client.Redis.from_url(server.url)
    values: dict[str, bytes] = {}
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        if kind == b"string":
            values[key.decode()] = client.get(key) or b""
        elif kind == b"hash":
            values[key.decode()] = b"\n".join(k + b"=" + v for k, v in client.hgetall(key).items())
        elif kind == b"zset":
            values[key.decode()] = b"\n".join(client.zrange(key, 0, -1))
        elif kind == b"set":
            values[key.decode()] = b"\n".join(client.smembers(key))
        elif kind == b"list":
            values[key.decode()] = b"\n".join(client.lrange(key, 0, -1))
    return values


@pytest.fixture(scope="module")
def site(built_site, tmp_path_factory) -> Iterator[Site]:
    workdir = tmp_path_factory.mktemp("stored-redis")
    redis = RedisServer(workdir)
    db_url, states = f"sqlite:///{workdir / 'dashboard.db'}", workdir / "states"
    publisher_gateway(db_url, "migrate")
    for email in READERS:
        subscribers.subscribe(SignUp(email=email, name="A Reader"), None, db_url)
    env = {
        "PUBLISHER_GATEWAY_URL": "",
        "REFLEX_DB_URL": db_url,
        "REFLEX_STATES_WORKDIR": str(states),
        "REFLEX_REDIS_URL": redis.url,
        "GRANIAN_WORKERS": "2",
    }
    try:
        with running_server(workdir, env, own_address=True) as server:
            yield Site(server, db_url, states, redis)
    finally:
        redis.stop()


@pytest.fixture
def passkey_page(browser) -> Iterator[Page]:
    for page in new_page(browser, {"width": 1280, "height": 900}):
        add_passkey_authenticator(page)
        yield page


def test_a_closed_dashboard_tab_leaves_no_session_token_and_no_readers_address_in_the_stored_state(
    site: Site, passkey_page: Page
):
    page = passkey_page
    channels: list[str] = []  # the event channels' URLs, which carry the page's token (kept in its memory only)
    page.on("websocket", lambda socket: channels.append(socket.url))
    enrol(page, (site.server, site.db_url), "Ada")
    # The latest sign-ups: the first rows' table and the one behind "Show all N".
    latest = page.locator("caption", has_text=admin_copy.LATEST_SIGNUPS)
    signups = page.locator("#readers table").filter(has=latest).locator("tbody tr")
    expect(signups).to_have_count(len(READERS))
    [cookie] = [c for c in page.context.cookies() if c["name"] == "publisher-admin"]
    session_token = cookie["value"]
    [tab_token] = {parse_qs(urlsplit(url).query)["token"][0] for url in channels}
    assert session_token and tab_token

    # A reader found by address, and another asked about: the page shows both addresses.
    page.get_by_label(admin_copy.SEARCH_LABEL).fill(SEARCHED)
    page.get_by_role("button", name=admin_copy.SEARCH_BUTTON, exact=True).click()
    expect(page.locator("#readers table").first.locator("tbody td").first).to_have_text(SEARCHED)
    page.get_by_label(admin_copy.FORGET_LABEL).fill(FORGOTTEN)
    page.get_by_role("button", name=admin_copy.FORGET_BUTTON).click()
    expect(page.get_by_role("alertdialog")).to_contain_text(FORGOTTEN)
    # The open page keeps itself fresh from the database, signed in, through either worker.
    subscribers.subscribe(SignUp(email=NEWCOMER, name="Dee"), None, site.db_url)
    expect(signups).to_have_count(len(READERS) + 1, timeout=15_000)
    expect(page.get_by_text("Signed in as Ada")).to_be_visible()
    # The action asked before the refreshes is still the one "Yes" does.
    page.get_by_role("alertdialog").get_by_role("button", name=admin_copy.CONFIRM_BUTTON).click()
    expect(page.get_by_role("status").filter(has_text=FORGOTTEN)).to_be_visible(timeout=15_000)
    expect(signups).to_have_count(len(READERS))
    user_agent = page.evaluate("navigator.userAgent")

    page.close()
    wait_until(lambda: site.admin_state_stored(tab_token), 30, "the closed tab's state to be stored")

    stored = site.stored()
    assert stored, "the site stored nothing: the test looks in the wrong place"
    looked_for = {"the session's token": session_token, "the browser's user agent": user_agent} | {
        address: address for address in (*READERS, NEWCOMER)
    }
    leaks = {
        what: holders
        for what, text in looked_for.items()
        if (holders := sorted(name for name, value in stored.items() if text.encode() in value))
    }
    assert leaks == {}, f"stored where they should not be: {leaks}"
