"""The list link pages' panel as the server writes it (web/components/list_link.py): every stage from the
outcomes the app draws, as text, its button a plain POST to the link."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from publisher.rules import list_rules
from publisher.web.components.list_link import Press, outcome_html
from publisher.web.pages import confirm, unsubscribe
from publisher.web.states import list_link_state
from publisher.web.states.list_link_state import LinkView

PAGES = {"/subscribe/confirm": confirm.OUTCOMES, "/unsubscribe": unsubscribe.OUTCOMES}


@pytest.mark.parametrize(
    ("route", "stage"), [(route, stage) for route, outcomes in PAGES.items() for stage in outcomes]
)
def test_every_stage_of_both_pages_is_written_with_a_button_only_where_it_asks(route, stage):
    html = outcome_html(PAGES[route], stage, "j*@e******.com", list_rules.link_path(route, "key.mac"))
    panel = BeautifulSoup(html, "html.parser")
    assert panel.get_text().strip()
    forms = panel.select("form")
    assert len(forms) == (1 if stage == list_link_state.ASK else 0)
    for form in forms:
        assert (form["method"], form["action"]) == ("post", f"{route}?token=key.mac")
        assert form.select_one("button")["type"] == "submit"
    assert not panel.select("script, input")


def test_the_ask_panels_say_the_spec_words_with_the_masked_address():
    asking = BeautifulSoup(outcome_html(confirm.OUTCOMES, list_link_state.ASK, "j*@e******.com", "/x"), "html.parser")
    assert asking.p.get_text() == "Press the button to add j*@e******.com to the Animals We Confuse new-release list."
    assert asking.p.strong.get_text() == "j*@e******.com"
    assert asking.button.get_text() == "Confirm my subscription"
    leave = BeautifulSoup(
        outcome_html(unsubscribe.OUTCOMES, list_link_state.ASK, "j*@e******.com", "/x"), "html.parser"
    )
    assert (
        leave.p.get_text() == "Press the button to remove j*@e******.com from the Animals We Confuse new-release list."
    )
    assert leave.button.get_text() == "Unsubscribe"
    # The app's busy label is the same part's: only the app shows it.
    assert [p for p in confirm.OUTCOMES[list_link_state.ASK] if isinstance(p, Press)] == [
        Press("Confirm my subscription", "Confirming...")
    ]


def test_what_the_panel_carries_is_written_as_text_never_as_markup():
    hostile = '"><script>alert(1)</script>'
    html = outcome_html(confirm.OUTCOMES, list_link_state.ASK, hostile, f"/subscribe/confirm?token={hostile}")
    panel = BeautifulSoup(html, "html.parser")
    assert not panel.select("script")
    assert panel.strong.get_text() == hostile
    assert panel.form["action"] == f"/subscribe/confirm?token={hostile}"


def test_each_stage_has_its_http_status():
    statuses = {stage: LinkView(stage).http_status for stage in (*PAGES["/subscribe/confirm"], list_link_state.LIMITED)}
    assert statuses == {
        list_link_state.ASK: 200,
        list_link_state.DONE: 200,
        list_link_state.ALREADY: 200,
        list_link_state.EXPIRED: 410,
        list_link_state.REPLACED: 200,
        list_link_state.LEFT: 200,
        list_link_state.INVALID: 404,
        list_link_state.LIMITED: 429,
        list_link_state.UNAVAILABLE: 503,
    }
    assert LinkView(list_link_state.ASK, "reader@example.com").address == "r****r@e******.com"
    assert LinkView(list_link_state.INVALID).address == ""
