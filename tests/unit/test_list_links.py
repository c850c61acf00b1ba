"""The list's links: signed tokens, the masked address, the visitor's address, and their pages' panel."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from bs4 import BeautifulSoup

from publisher.rules import list_rules, visitor_limits
from publisher.storage import tables
from publisher.web.components.list_link import Press, outcome_html
from publisher.web.pages import confirm, unsubscribe
from publisher.web.states import list_link_state
from publisher.web.states.list_link_state import LinkView
from tests.smtp import LIST_SECRET

SECRET = LIST_SECRET
OTHER_SECRET = "another-secret-of-enough-length-0123456789"
KEY = "AbCdEfGhIjKlMnOpQrStUv"
ISSUED = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
MAIL_ENV = {
    "PUBLISHER_SMTP_URL": "smtp://127.0.0.1:2525",
    "PUBLISHER_NOTIFY_TO": "books@animals.example",
    "PUBLISHER_MAIL_FROM": "Animals We Confuse <site@animals.example>",
    "PUBLISHER_LIST_SECRET": LIST_SECRET,
}


def test_a_confirmation_token_reads_back_its_key_and_issue_date_and_works_for_seven_days_and_no_longer():
    token = list_rules.confirm_token(SECRET, KEY, ISSUED)
    claim = list_rules.read_confirm_token([SECRET], token, ISSUED + timedelta(days=7))
    assert claim == list_rules.ConfirmClaim(KEY, ISSUED, expired=False)
    assert list_rules.read_confirm_token([SECRET], token, ISSUED + timedelta(days=7, seconds=1)).expired


def flip(token: str, position: int) -> str:
    position %= len(token)
    return token[:position] + ("A" if token[position] != "A" else "B") + token[position + 1 :]


@pytest.mark.parametrize("position", [0, 5, 21, 23, 30, -1])
def test_a_token_with_one_character_changed_is_refused(position):
    confirm = list_rules.confirm_token(SECRET, KEY, ISSUED)
    assert list_rules.read_confirm_token([SECRET], flip(confirm, position), ISSUED) is None
    unsubscribe = list_rules.unsubscribe_token(SECRET, KEY)
    assert list_rules.read_unsubscribe_token([SECRET], flip(unsubscribe, position)) is None


def signed(secret: str, *parts: str) -> str:
    """HMAC-SHA256 over the purpose and the token's fields, one a line, base64url, 32 characters (192 bits)."""
    digest = hmac.new(secret.encode(), "\n".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:32]


def test_a_token_of_the_right_shape_signed_for_the_other_purpose_is_refused():
    confirm, unsubscribe = list_rules.confirm_token(SECRET, KEY, ISSUED), list_rules.unsubscribe_token(SECRET, KEY)
    assert list_rules.read_unsubscribe_token([SECRET], confirm) is None  # refused by its shape alone
    assert list_rules.read_confirm_token([SECRET], unsubscribe, ISSUED) is None
    issued = format(int(ISSUED.timestamp()), "x")
    assert list_rules.confirm_token(SECRET, KEY, ISSUED) == f"{KEY}.{issued}.{signed(SECRET, 'confirm', KEY, issued)}"
    assert list_rules.unsubscribe_token(SECRET, KEY) == f"{KEY}.{signed(SECRET, 'unsubscribe', KEY)}"

    confirm_shaped = f"{KEY}.{issued}.{signed(SECRET, 'unsubscribe', KEY, issued)}"
    assert list_rules.read_confirm_token([SECRET], confirm_shaped, ISSUED) is None
    unsubscribe_shaped = f"{KEY}.{signed(SECRET, 'confirm', KEY)}"
    assert list_rules.read_unsubscribe_token([SECRET], unsubscribe_shaped) is None


def test_a_token_signed_under_another_secret_is_refused_unless_that_secret_is_still_accepted():
    token = list_rules.unsubscribe_token(OTHER_SECRET, KEY)
    assert list_rules.read_unsubscribe_token([SECRET], token) is None
    assert list_rules.read_unsubscribe_token([SECRET, OTHER_SECRET], token) == KEY  # a replaced secret
    assert list_rules.read_unsubscribe_token([], token) is None  # a site that keeps no list


@pytest.mark.parametrize("token", [None, 123, "", ".", "a.b", "x" * 5000, f"{KEY}..", f"{KEY}.zz.{'A' * 32}"])
def test_malformed_tokens_are_refused(token):
    assert list_rules.read_confirm_token([SECRET], token, ISSUED) is None
    assert list_rules.read_unsubscribe_token([SECRET], token) is None


def test_new_link_keys_are_random_and_fit_their_column():
    keys = {list_rules.new_link_key() for _ in range(1000)}
    assert len(keys) == 1000
    assert all(16 <= len(key) <= tables.LINK_KEY_MAX for key in keys)


def test_links_point_at_the_sites_pages():
    confirm = urlsplit(list_rules.confirm_url("https://books.example.com", SECRET, KEY, ISSUED))
    assert (confirm.scheme, confirm.netloc, confirm.path) == ("https", "books.example.com", "/subscribe/confirm")
    [token] = parse_qs(confirm.query)["token"]
    assert list_rules.read_confirm_token([SECRET], token, ISSUED).link_key == KEY
    unsubscribe = urlsplit(list_rules.unsubscribe_url("https://books.example.com", SECRET, KEY))
    assert unsubscribe.path == "/unsubscribe"
    assert list_rules.read_unsubscribe_token([SECRET], parse_qs(unsubscribe.query)["token"][0]) == KEY


@pytest.mark.parametrize(
    ("email", "masked"),
    [
        ("reader@example.com", "r****r@e******.com"),
        ("jo@example.com", "j*@e******.com"),
        ("a@b.co.uk", "a@b.co.uk"),
        ("zoë.ångström@exämple.se", "z**********m@e******.se"),
    ],
)
def test_the_page_shows_the_address_partly_masked(email, masked):
    assert list_rules.mask_address(email) == masked


def test_the_visitors_address_behind_trusted_proxies():
    scope = {"client": ("10.0.0.2", 1), "headers": [(b"x-forwarded-for", b"198.51.100.7, 203.0.113.1")]}
    assert visitor_limits.client_address(scope, trusted_proxy_hops=0) == "10.0.0.2"
    assert visitor_limits.client_address(scope, trusted_proxy_hops=1) == "203.0.113.1"
    assert visitor_limits.client_address(scope, trusted_proxy_hops=2) == "198.51.100.7"
    assert visitor_limits.client_address(scope, trusted_proxy_hops=3) == "10.0.0.2"  # fewer hops than trusted


PAGES = {"/subscribe/confirm": confirm.OUTCOMES, "/unsubscribe": unsubscribe.OUTCOMES}


@pytest.mark.parametrize(
    ("route", "stage"), [(route, stage) for route, outcomes in PAGES.items() for stage in outcomes]
)
def test_every_stage_of_both_pages_is_written_with_a_button_only_where_it_asks(route, stage):
    html = outcome_html(PAGES[route], stage, "j*@e******.com", list_rules.link_path(route, "key.mac"))
    panel = BeautifulSoup(html, "html.parser")
    assert panel.get_text().strip()
    forms = panel.select("form")
    assert len(forms) == (1 if stage in list_link_state.PRESSABLE else 0)
    for form in forms:
        assert (form["method"], form["action"]) == ("post", f"{route}?token=key.mac")
        assert form.select_one("button")["type"] == "submit"
    assert not panel.select("script, input")


def ask_panel(outcomes, address: str = "j*@e******.com", action: str = "/x") -> BeautifulSoup:
    return BeautifulSoup(outcome_html(outcomes, list_link_state.ASK, address, action), "html.parser")


def test_the_ask_panels_say_the_spec_words_with_the_masked_address_written_as_text_never_as_markup():
    asking = ask_panel(confirm.OUTCOMES)
    assert asking.p.get_text() == "Press the button to add j*@e******.com to the Animals We Confuse new-release list."
    assert asking.p.strong.get_text() == "j*@e******.com"
    assert asking.button.get_text() == "Confirm my subscription"
    leave = ask_panel(unsubscribe.OUTCOMES)
    assert leave.p.text == "Press the button to remove j*@e******.com from the Animals We Confuse new-release list."
    assert leave.button.get_text() == "Unsubscribe"
    # The app's busy label is the same part's: only the app shows it.
    assert [p for p in confirm.OUTCOMES[list_link_state.ASK] if isinstance(p, Press)] == [
        Press("Confirm my subscription", "Confirming...")
    ]
    hostile = '"><script>alert(1)</script>'
    panel = ask_panel(confirm.OUTCOMES, hostile, f"/subscribe/confirm?token={hostile}")
    assert not panel.select("script")
    assert panel.strong.get_text() == hostile
    assert panel.form["action"] == f"/subscribe/confirm?token={hostile}"


def test_each_stage_has_its_http_status():
    statuses = {stage: LinkView(stage).http_status for stage in (*PAGES["/subscribe/confirm"], list_link_state.LIMITED)}
    assert {stage: status for stage, status in statuses.items() if status != 200} == {
        list_link_state.EXPIRED: 410,
        list_link_state.INVALID: 404,
        list_link_state.LIMITED: 429,
        list_link_state.UNAVAILABLE: 503,
    }
    assert len(statuses) == 11  # every other stage is a page that exists
    assert LinkView(list_link_state.ASK, "reader@example.com").address == "r****r@e******.com"
    assert LinkView(list_link_state.INVALID).address == ""
