"""What a tab's stored state holds (reflex_internals/stored_state.py): no secret header of the
connection, none of the dashboard's tab-only fields, in a folder of the site's user alone."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from reflex.istate.manager.token import BaseStateToken
from reflex.state import BaseState, State

from publisher.reflex_internals import stored_state
from publisher.rules import admin_access
from publisher.web.states.admin_state import AdminState

SESSION = admin_access.new_token()
COOKIE = f"theme=dark; __Host-publisher-admin={SESSION}"
READER = "ann.reader@example.com"


@pytest.fixture(autouse=True)
def installed() -> None:
    stored_state.install()  # as the app's entry point does (publisher.py)


def connection_headers() -> dict[str, str]:
    """The headers of a tab's event channel as Reflex keeps them (ASGI's lowercase names)."""
    return {
        "host": "books.example.com",
        "origin": "https://books.example.com",
        "user-agent": "Mozilla/5.0",
        "cookie": COOKIE,
        "authorization": f"Bearer {SESSION}",
    }


def connected_root() -> BaseState:
    """A tab's state tree after an event from its connection, as Reflex's event processor leaves it."""
    root = State(_reflex_internal_init=True)
    router_data = {"headers": connection_headers(), "token": "tab-1", "sid": "sid-1", "pathname": "/admin"}
    root.router_data = root._update_router_vars(router_data, {})
    return root


def admin_of(root: BaseState) -> AdminState:
    state = root.get_substate(AdminState.get_full_name().split("."))
    assert isinstance(state, AdminState)
    return state


def test_the_secret_headers_are_left_out_in_any_letter_case_and_the_rest_kept():
    headers = {"Cookie": "a=b", "AUTHORIZATION": "Basic x", "Proxy-Authorization": "y", "Host": "h", "Origin": "o"}
    assert stored_state.without_secret_headers(headers) == {"Host": "h", "Origin": "o"}
    assert stored_state.stored_router_data({"headers": headers, "token": "t"}) == {
        "headers": {"Host": "h", "Origin": "o"},
        "token": "t",
    }
    assert stored_state.stored_router_data({"token": "t"}) == {"token": "t"}  # no headers: nothing to do
    assert {"cookie", "authorization", "proxy-authorization"} <= stored_state.SECRET_HEADERS


def test_the_stored_root_state_has_no_cookie_nor_authorization_and_the_live_one_keeps_them():
    root = connected_root()
    stored = BaseStateToken.serialize(root)  # what the disk and Redis managers write
    assert SESSION.encode() not in stored
    again = BaseStateToken.deserialize(data=stored)
    assert again.router_data["headers"] == {
        "host": "books.example.com",
        "origin": "https://books.example.com",
        "user-agent": "Mozilla/5.0",
    }
    assert again.router.headers.cookie == "" and "cookie" not in again.router.headers.raw_headers
    assert again.router.headers.host == "books.example.com"  # what is not secret stays
    assert again.router.session.client_token == "tab-1"
    # The live state, which the event being handled reads, is untouched.
    assert root.router.headers.cookie == COOKIE and root.router_data["headers"]["cookie"] == COOKIE
    assert admin_access.session_token(root.router.headers.cookie, https=True) == SESSION


def test_the_dashboards_figures_and_questions_are_never_stored_and_the_live_page_keeps_them():
    root = connected_root()
    admin = admin_of(root)
    admin.signed_in = True
    admin.readers = [{"label": "Confirmed", "count": "1"}]
    admin.signups = [{"email": READER, "status": "confirmed", "date": ""}]
    admin.found = [{"email": READER, "status": "confirmed", "date": ""}]
    admin.searched = True
    admin.messages = [{"sender": "Ann", "email": READER, "subject": "Hi", "date": "", "delivery": "", "text": "x"}]
    admin.bounces = [{"date": "", "email": READER, "kind": "soft", "source": "", "reason": ""}]
    admin.audit = [{"date": "", "admin": "Ada", "action": "forget", "target": READER}]
    admin.question = f"Erase everything stored about {READER}?"
    admin.notice = f"{READER}: forgotten"
    admin.admin_name = "Signed in as Ada"
    stored = BaseStateToken.serialize(admin)
    assert READER.encode() not in stored and b"Ada" not in stored
    again = BaseStateToken.deserialize(data=stored)
    assert isinstance(again, AdminState)
    assert again.signups == [] and again.found == [] and again.messages == [] and again.question == ""
    assert again.notice == "" and again.admin_name == "" and again.searched is False
    assert again.signed_in is True  # not a figure: kept
    assert admin.signups[0]["email"] == READER and admin.question.endswith(f"{READER}?")  # the live page's


def test_a_tab_only_field_must_be_a_field_of_the_state():
    with pytest.raises(ValueError, match="no field nonexistent"):
        stored_state.tab_only("nonexistent")(AdminState)


@pytest.fixture
def umask_restored() -> Iterator[None]:
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_states_folder_and_its_files_are_the_site_users_alone_also_those_written_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_restored: None
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


def test_keeping_private_never_loosens_a_stricter_umask(tmp_path: Path, monkeypatch, umask_restored: None):
    monkeypatch.setenv("REFLEX_STATES_WORKDIR", str(tmp_path / "absent"))  # Redis: no folder
    os.umask(0o277)
    stored_state.keep_private()
    assert os.umask(0o077) == 0o277
    assert not (tmp_path / "absent").exists()
