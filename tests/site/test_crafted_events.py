"""Events crafted to skip the UI, sent over the real websocket: refused clearly, nothing sent."""

from __future__ import annotations

import pytest

from tests.support import RecordingGateway
from tests.visitor import (
    CONTACT_STATE,
    SUBSCRIBE_STATE,
    Visitor,
    hydrated,
    run_async,
)

UNEXPECTED = "Something went wrong on our side. Please try again in a moment."
VALID_CONTACT = {
    "firstName": "Jo",
    "lastName": "Reader",
    "email": "jo@example.com",
    "message": "A perfectly ordinary message.",
    "website": "",
}


async def send_and_wait(visitor: Visitor, name: str, payload: dict, done) -> list[dict]:
    count = len(visitor.updates)
    await visitor.send(name, payload)
    await visitor.wait_for(lambda v: done(v.updates[count:], v), timeout_s=10)
    return visitor.updates[count:]


def site_error_event(updates: list[dict], _=None) -> list[str]:
    return [
        e["payload"]["value"]
        for u in updates
        for e in (u.get("events") or [])
        if e["name"] == "_set_value" and e["payload"].get("ref") == "ref_site_error"
    ]


# What reaches the handler only through the channel's dispatch (any form data: tests/unit/test_bad_input.py).
CRAFTED_SUBMITS = {"no form data": {}, "extra arguments": {"form_data": {}, "is_admin": True}}


@pytest.mark.parametrize("payload", CRAFTED_SUBMITS.values(), ids=CRAFTED_SUBMITS.keys())
def test_malformed_subscribe_events_get_field_messages_and_send_nothing(base_url, gateway: RecordingGateway, payload):
    async def craft():
        visitor = Visitor(base_url, "/subscribe")
        await visitor.open_page(hydrated)
        await send_and_wait(
            visitor, f"{SUBSCRIBE_STATE}.submit", payload, lambda _, v: bool(v.var(SUBSCRIBE_STATE, "name_error"))
        )
        await visitor.close()
        return visitor.var(SUBSCRIBE_STATE, "name_error"), visitor.var(SUBSCRIBE_STATE, "email_error")

    assert run_async(craft()) == ("Please enter your name", "Please enter your email")
    assert gateway.requests == []


def test_calling_an_unknown_handler_changes_nothing(base_url, gateway: RecordingGateway):
    async def craft():
        visitor = Visitor(base_url, "/contact-us")
        await visitor.open_page(hydrated)  # the page's last update (its on_load's) is in
        question = visitor.var(CONTACT_STATE, "question")
        count = len(visitor.updates)
        await visitor.send(f"{CONTACT_STATE}.send_email_now", {"anything": 1})
        await visitor.send(f"{CONTACT_STATE}._check", {"data": VALID_CONTACT})
        # The server takes a tab's events in the order they came: once it answers one sent after
        # them (a forged setvar, refused with the site's error), it has dealt with both.
        answered = await send_and_wait(
            visitor, f"{CONTACT_STATE}.setvar", {"var_name": "_token", "value": "x"}, site_error_event
        )
        await visitor.close()
        between = visitor.updates[count : len(visitor.updates) - len(answered)]
        state = visitor.var(CONTACT_STATE, "question"), visitor.var(CONTACT_STATE, "status")
        return question, state, between, site_error_event(answered)

    before, (after, status), between, forged = run_async(craft())
    assert (after, status) == (before, "editing")
    assert forged == [UNEXPECTED]  # a forged setvar of a backend var: the site's error, nothing changed
    assert between == []  # the unknown handlers sent nothing back: no change, no error
    assert gateway.requests == []
