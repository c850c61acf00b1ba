"""Bad input, generated: every rule answers with a known message or accepts, never raises.

Complements the property tests in test_validation.py and test_antispam.py with
odd emails, huge values and arbitrary JSON sent through the form handlers.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from publisher import gateway
from publisher.rules import antispam, validation
from publisher.web.states.contact import ContactState
from publisher.web.states.subscribe import SubscribeState

EMAIL_MESSAGES = {validation.EMAIL_REQUIRED, validation.EMAIL_INVALID, validation.EMAIL_TOO_LONG}


@pytest.mark.parametrize(
    ("email", "accepted_as"),
    [
        ("jo@bücher.de", "jo@xn--bcher-kva.de"),  # internationalized domain: stored in ASCII, as sent
        ("jo@xn--bcher-kva.de", "jo@xn--bcher-kva.de"),  # the same domain in punycode
        ("jörg@example.com", None),  # internationalized local part: needs SMTPUTF8, refused
        ("Jo.Reader+books@Example.COM", "Jo.Reader+books@example.com"),
        ('"jo reader"@example.com', None),  # quoted local part: refused with the message
        ("jo@example.com.", None),  # trailing dot
        ("jo.@example.com", None),
        (".jo@example.com", None),
        ("jo..reader@example.com", None),
        ("jo@localhost", None),  # no public domain
        ("jo@[127.0.0.1]", None),  # address literal
        ("jo@example..com", None),
        ("j" * 65 + "@example.com", None),  # local part over 64 characters
    ],
)
def test_odd_emails_are_accepted_normalized_or_refused_with_the_message(email, accepted_as):
    value, error = validation.check_email(email)
    if accepted_as is None:
        assert error == validation.EMAIL_INVALID
    else:
        assert (value, error) == (accepted_as, None)


@pytest.mark.parametrize("size", [10_001, 1_000_000])
def test_huge_values_get_the_length_messages(size):
    huge = "x" * size
    checked = validation.check_contact(huge, huge, huge + "@example.com", huge)
    assert checked.errors == {
        "first_name": validation.FIRST_NAME_TOO_LONG,
        "last_name": validation.LAST_NAME_TOO_LONG,
        "email": validation.EMAIL_TOO_LONG,
        "message": validation.MESSAGE_TOO_LONG,
    }
    assert antispam.answer_field_error("7" * size, 7) == antispam.MATH_INCORRECT


@given(local=st.text(min_size=1, max_size=70), domain=st.text(min_size=1, max_size=70))
@settings(max_examples=300)
def test_any_email_shape_gets_a_known_answer(local, domain):
    value, error = validation.check_email(f"{local}@{domain}")
    assert error in EMAIL_MESSAGES | {None}
    if error is None:
        assert not validation.has_control_characters(value) and len(value) <= validation.EMAIL_MAX


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
FORM_KEYS = ["first_name", "last_name", "email", "message", "answer", "website", "name", "extra"]
FORM_DATA = st.one_of(JSON, st.dictionaries(st.sampled_from(FORM_KEYS), JSON, max_size=8))

KNOWN_CONTACT_MESSAGES = {
    "",
    antispam.HONEYPOT_REJECTED,
    antispam.TOO_FAST_REJECTED,
    antispam.MATH_REJECTED,
}


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={})


@contextmanager
def recording_gateway():
    recorder = Recorder()
    gateway.shared_client.set(gateway.GatewayClient("https://gw.test", transport=httpx.MockTransport(recorder)))
    try:
        yield recorder
    finally:
        gateway.shared_client.set(None)


def drive(state, form_data) -> None:
    async def run() -> None:
        async for _ in type(state).submit.fn(state, form_data):
            pass

    asyncio.run(run())


@given(form_data=FORM_DATA)
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_any_contact_submit_payload_is_answered_and_sends_only_valid_requests(form_data):
    with recording_gateway() as recorder:
        state = ContactState(_reflex_internal_init=True)
        ContactState.start.fn(state)
        drive(state, form_data)
    assert state.form_error in KNOWN_CONTACT_MESSAGES
    # Submitted at once after the form was shown: never fast enough to be sent.
    assert recorder.requests == []


@given(form_data=FORM_DATA)
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_any_subscribe_submit_payload_is_answered_and_only_valid_data_is_sent(form_data):
    with recording_gateway() as recorder:
        state = SubscribeState(_reflex_internal_init=True)
        drive(state, form_data)
    assert state.name_error in {
        "",
        validation.NAME_REQUIRED,
        validation.NAME_TOO_SHORT,
        validation.NAME_TOO_LONG,
        validation.NAME_CONTROL_CHARS,
    }
    assert state.email_error in EMAIL_MESSAGES | {""}
    for request in recorder.requests:
        body = json.loads(request.content)
        assert set(body) == {"email", "name", "book_updates"} and body["book_updates"] == "yes"
        assert validation.check_subscription(body["name"], body["email"]).ok
