"""What docs/privacy.md says a page with a form, the dashboard's sign-in and the site's files keep
(issue 48), each sentence written from the code's own values: a figure that moves in the code, or
a sentence edited away, fails here. What the sentences promise is tested where it happens:
tests/unit/test_stored_state.py (no address, agent, language or link's token stored), tests/unit/test_build_plugins.py
and tests/embedded/test_visits_in_browser.py (nothing in the browser), tests/services/test_admin_sign_in.py
(a ceremony gone within a minute), tests/services/test_database.py (the database's modes)."""

from __future__ import annotations

from pathlib import Path

from reflex.istate.manager.disk import StateManagerDisk
from reflex_base import config as reflex_config

from publisher.reflex_internals import stored_state
from publisher.rules import admin_access, visitor_limits
from publisher.server import admin_sign_in
from publisher.storage import database
from publisher.web import tab_states

ROOT = Path(__file__).resolve().parents[2]


def privacy_doc() -> str:
    return " ".join((ROOT / "docs" / "privacy.md").read_text(encoding="utf-8").split())


def mode(bits: int) -> str:
    return f"`{bits:04o}`"


def kept_sentences() -> list[str]:
    """The sentences (and table rows) of docs/privacy.md about what is kept of a visitor outside
    counting, written from the code's values (tests/unit/test_visit_rules.py takes their figures
    as read)."""
    closed_minutes, rest = divmod(tab_states.CLOSED_TAB_KEEP_S, 60)
    ceremony_minutes, left = divmod(int(admin_access.CEREMONY_VALID_FOR.total_seconds()), 60)
    assert (rest, left) == (0, 0)
    an_hour = 3600  # "an hour": Reflex's expiry of a tab's state, in memory, on disk and in Redis
    assert reflex_config.get_config().redis_token_expiration == an_hour == tab_states.keep_s()
    assert StateManagerDisk.__dataclass_fields__["token_expiration"].default_factory() == an_hour  # type: ignore[misc]
    assert admin_sign_in.CEREMONY_SWEEP_S == 60  # "at most a minute after it ran out"
    assert "REFLEX_STATES_WORKDIR=/data/states" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    file_mode, folder_mode = mode(database.PRIVATE_FILE_MODE), mode(stored_state.PRIVATE_FOLDER_MODE)
    assert mode(stored_state.PRIVATE_FILE_MODE) == file_mode
    return [
        "A page that starts the app (subscribe, contact, a list link's page) has a state on the server while it "
        "is open: where its form is, its messages, the contact question and its token, on a link page the "
        "reader's address partly masked and the link's key, and the page's own address.",
        "What is written to a file or to Redis never holds the visitor's network address, user agent, languages or "
        "cookies, nor the query of the page's address (where a link's page has the reader's token): the server "
        "reads them from the page and its connection at each event, keeps them in the worker's memory with the "
        "open page's state, and leaves them out of what it writes.",
        "| Without Redis (one worker) | the worker's memory, and a file in `REFLEX_STATES_WORKDIR` (`/data/states` "
        f"in the container) | in memory until {closed_minutes} minutes after the page closed, or an hour after "
        "its last event once it sent its form; the file until an hour after its last write (deleted by the "
        "running site, or at its next start) |",
        f"| With Redis (`REFLEX_REDIS_URL`) | Redis | until {closed_minutes} minutes after the page closed, or an "
        "hour after its last event once it sent its form |",
        "No public page stores anything in the browser or reads anything from it, the pages with a form "
        "included: the app keeps its page's token in the page's memory, and each page load starts a new one.",
        "A sign-in to the dashboard (only where the site keeps the list itself) keeps the address it was asked "
        f"from (for IPv6 its /{visitor_limits.IPV6_BLOCK_PREFIX}) in the database (table `admin_ceremony`) until "
        f"its answer comes, or at most a minute after it ran out, {ceremony_minutes} minutes after it was asked, "
        "whether or not anyone signs in again.",
        "The site's own files are readable by its user alone: the SQLite database with its `-wal` and `-shm` "
        f"(mode {file_mode} from the moment it is made, whatever the umask), the states folder ({folder_mode}, its "
        f"files {file_mode}) and the secrets the site makes ({file_mode}).",
        "Nothing is stored in the visitor's browser or read from it: no cookie, no `localStorage` or "
        "`sessionStorage` entry, on any public page, no fingerprinting",
        "and a dashboard sign-in's address, gone within minutes",
    ]


def test_docs_privacy_says_what_a_form_page_the_sign_in_and_the_sites_files_keep():
    text = privacy_doc()
    missing = [sentence for sentence in kept_sentences() if sentence not in text]
    assert missing == [], "docs/privacy.md no longer says these, with the code's figures"
