"""What a tab's stored state holds (reflex_internals/stored_state.py): nothing of the connection, no page's
query (a list link's token), no tab-only field, in a folder of the site's user alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import urlencode

import pytest
from reflex.istate.manager.token import BaseStateToken
from reflex.state import BaseState, State
from reflex_base import constants

from publisher.limits import submits
from publisher.reflex_internals import stored_state
from publisher.rules import admin_access, list_rules
from publisher.web import submissions
from publisher.web.states.admin_state import AdminState
from publisher.web.submissions import SubscribeState

SESSION = admin_access.new_token()
COOKIE = f"theme=dark; __Host-publisher-admin={SESSION}"
READER = "ann.reader@example.com"
ADDRESS = "198.51.100.23"
AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
LANGUAGE = "fr-CH, fr;q=0.9, de;q=0.7"
LINK_TOKEN = list_rules.unsubscribe_token("a-list-secret-of-enough-length-0123456789", "AbCdEfGhIjKlMnOpQrStUv")


@pytest.fixture(autouse=True)
def installed() -> None:
    stored_state.install()  # as the app's entry point does (publisher.py)


CONNECTION_HEADERS = {
    "host": "books.example.com",
    "origin": "https://books.example.com",
    "user-agent": AGENT,
    "accept-language": LANGUAGE,
    "x-forwarded-for": ADDRESS,
    "asgi-scope-client": ADDRESS,  # Reflex writes the connection's address among the headers too
    "cookie": COOKIE,
    "authorization": f"Bearer {SESSION}",
}


def event_router_data(pathname: str = "/admin", query: dict[str, str] | None = None, fragment: str = "") -> dict:
    """The router data of an event from the tab's connection, as Reflex builds it."""
    data = {
        "headers": dict(CONNECTION_HEADERS),
        "ip": ADDRESS,
        "token": "tab-1",
        "sid": "sid-1",
        "pathname": pathname,
        "asPath": pathname + (f"?{urlencode(query)}" if query else "") + fragment,
    }
    return {**data, "query": query} if query else data


def connected_root(pathname: str = "/admin", query: dict[str, str] | None = None, fragment: str = "") -> BaseState:
    root = State(_reflex_internal_init=True)
    root.router_data = root._update_router_vars(event_router_data(pathname, query, fragment), {})
    return root


def test_the_stored_root_state_has_no_address_agent_language_nor_cookie_and_the_live_one_keeps_them():
    root = connected_root()
    stored = BaseStateToken.serialize(root)  # what the disk and Redis managers write
    private = {"address": ADDRESS, "agent": AGENT, "language": LANGUAGE, "cookie": SESSION}
    assert [name for name, text in private.items() if text.encode() in stored] == []
    assert b"Mozilla" not in stored and b"fr-CH" not in stored  # not even a part of them
    again = BaseStateToken.deserialize(data=stored)
    assert again.router.session.client_ip == "" and again.router.headers.user_agent == ""
    assert again.router.session.client_token == "tab-1"  # what the tab is known by stays
    assert again.router.url.path == "/admin" and again.router_data["pathname"] == "/admin"
    # The live state is untouched, and the next event fills the stored one again from its connection.
    assert root.router.session.client_ip == ADDRESS and root.router.headers.user_agent == AGENT
    assert root.router.headers.cookie == COOKIE and root.router_data["headers"]["cookie"] == COOKIE
    assert admin_access.session_token(root.router.headers.cookie, https=True) == SESSION
    again.router_data = again._update_router_vars(event_router_data(), again.router_data)
    assert again.router.session.client_ip == ADDRESS and again.router.headers.accept_language == LANGUAGE
    assert again.router.headers.cookie == COOKIE


def test_a_link_pages_stored_state_has_no_token_and_its_next_event_reads_the_token_again():
    link = {list_rules.TOKEN_PARAM: LINK_TOKEN}
    root = connected_root(list_rules.UNSUBSCRIBE_PATH, link, fragment="#top")
    assert dict(root.router.url.query_parameters) == link == root.rx_router_page.params  # as the page reads it
    stored = BaseStateToken.serialize(root)
    assert LINK_TOKEN.encode() not in stored and LINK_TOKEN[:12].encode() not in stored
    assert b"token=" not in stored and b"#top" not in stored
    again = BaseStateToken.deserialize(data=stored)
    assert again.router.url == "https://books.example.com/unsubscribe" and not again.router.url.query_parameters
    page = again.rx_router_page
    assert page.path == page.raw_path == "/unsubscribe" and page.params == {}
    assert page.full_raw_path == "https://books.example.com/unsubscribe"
    assert again.router_data["asPath"] == again.router_data["pathname"] == "/unsubscribe"
    assert "query" not in again.router_data
    assert dict(root.router.url.query_parameters) == link == root.router_data["query"]  # the live state's
    # The page's next event (a reconnect's on_load) carries its address: the page reads the token again.
    again.router_data = again._update_router_vars(
        event_router_data(list_rules.UNSUBSCRIBE_PATH, link, fragment="#top"), again.router_data
    )
    assert dict(again.router.url.query_parameters) == link == again.rx_router_page.params
    assert again.router.url.fragment == "top"


@pytest.mark.asyncio
async def test_a_submit_counts_under_the_address_of_its_event_when_its_state_comes_back_from_storage(monkeypatch):
    """With Redis, a submit's ``async with self`` loads the state as stored, without the address."""
    counted: list[tuple[str, str, str]] = []

    async def allow(_limiter, form: str, client: str, address: str) -> bool:
        counted.append((form, client, address))
        return False  # over the limit: the submit stops here

    async def as_stored(self):
        root = self._get_root_state()
        stored = BaseStateToken.deserialize(data=BaseStateToken.serialize(root))
        for name in (constants.ROUTER_DATA, *constants.ROUTER_VARS):
            setattr(root, name, getattr(stored, name))
        return self

    monkeypatch.setattr(submits.Limiter, "allow", allow)
    monkeypatch.setattr(SubscribeState, "__aenter__", as_stored)
    form = connected_root("/subscribe").get_substate(SubscribeState.get_full_name().split("."))
    assert [event async for event in SubscribeState.submit.fn(form, {"name": "Jo", "email": "jo@example.com"})] == []
    assert counted == [(submissions.SUBSCRIBE.name, "tab-1", ADDRESS)]


def test_the_dashboards_figures_and_questions_are_never_stored_and_the_live_page_keeps_them():
    admin = connected_root().get_substate(AdminState.get_full_name().split("."))
    assert isinstance(admin, AdminState)
    admin.signed_in = True
    admin.parts = {
        "readers": [{"label": "Confirmed", "count": "1"}],
        "signups": [{"email": READER, "status": "confirmed", "date": ""}],
        "messages": [{"sender": "Ann", "email": READER, "subject": "Hi", "date": "", "delivery": "", "text": "x"}],
        "bounces": [{"date": "", "email": READER, "kind": "soft", "source": "", "reason": ""}],
        "audit": [{"date": "", "admin": "Ada", "action": "forget", "target": READER}],
    }
    admin.found = [{"email": READER, "status": "confirmed", "date": ""}]
    admin.searched = True
    admin.question = f"Erase everything stored about {READER}?"
    admin.notice = f"{READER}: forgotten"
    admin.admin_name = "Signed in as Ada"
    stored = BaseStateToken.serialize(admin)
    assert READER.encode() not in stored and b"Ada" not in stored
    again = BaseStateToken.deserialize(data=stored)
    assert isinstance(again, AdminState)
    assert again.parts == {} and again.found == [] and again.question == ""
    assert again.notice == "" and again.admin_name == "" and again.searched is False
    assert again.signed_in is True  # not a figure: kept
    assert admin.parts["signups"][0]["email"] == READER and admin.question.endswith(f"{READER}?")  # the live page's


def test_a_tab_only_field_must_be_a_field_of_the_state():
    with pytest.raises(ValueError, match="no field nonexistent"):
        stored_state.tab_only("nonexistent")(AdminState)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_states_folder_and_its_files_are_the_site_users_alone_also_those_written_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, usual_umask: None
):
    folder = tmp_path / "states"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    old = folder / "0123abcd.pkl"
    old.write_bytes(b"a state an older version wrote")
    old.chmod(0o644)
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(folder))
    stored_state.keep_private()
    assert mode(folder) == stored_state.PRIVATE_FOLDER_MODE == 0o700
    assert mode(old) == stored_state.PRIVATE_FILE_MODE == 0o600
    new = folder / "written-after.pkl"  # as the disk manager writes: Path.write_bytes
    new.write_bytes(b"x")
    assert mode(new) == 0o600
    made = tmp_path / "made-after"
    made.mkdir()
    assert mode(made) == 0o700


def test_keeping_private_never_loosens_a_stricter_umask(tmp_path: Path, monkeypatch, usual_umask: None):
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(tmp_path / "absent"))  # Redis: no folder
    os.umask(0o277)
    stored_state.keep_private()
    assert os.umask(0o077) == 0o277
    assert not (tmp_path / "absent").exists()
