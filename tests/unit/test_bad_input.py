"""Generated bad input through the form handlers: a known message or accepted, never an exception."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from publisher.gateway import contact_body
from publisher.limits import submits
from publisher.rules import antispam, form_fields
from publisher.rules.antispam import MathQuestion
from publisher.web import submissions
from publisher.web.submissions import ContactState, SubscribeState
from tests.unit.conftest import Clock
from tests.unit.test_form_states import CONTACT_FIELDS, recording_gateway, submit
from tests.unit.test_validation import MESSAGES

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
FORM_KEYS = ["firstName", "lastName", "email", "message", "answer", "website", "name", "extra"]
ARBITRARY_FORM_DATA = st.one_of(JSON, st.dictionaries(st.sampled_from(FORM_KEYS), JSON, max_size=8))


def field(*plausible: str) -> st.SearchStrategy:
    """A form field's value: often one a person types, else any text or any JSON."""
    return st.one_of(st.sampled_from(plausible), st.text(max_size=80), JSON)


NAME = field("Jo", "Zoë", " Ada ", "O'Brien-Smith", "J", "", "Jo\r\nBcc: x@example.com")
EMAIL = field("jo@example.com", "Jo.Reader+books@Example.COM", "jo@bücher.de", "jo@", "jo@localhost", "")
HONEYPOT = {"website": st.one_of(st.just(""), st.sampled_from(["http://spam.example", " "]), JSON)}

# The contact form's question is always "What is 3 + 4?" here (QUESTION): 7 is its answer.
QUESTION = MathQuestion(3, "+", 4)
CONTACT_FORMS = st.one_of(
    ARBITRARY_FORM_DATA,
    st.fixed_dictionaries(
        {
            "firstName": NAME,
            "lastName": NAME,
            "email": EMAIL,
            "message": field("Do you ship to Canada?", "", "x" * 10_001),
            "answer": field("7", " 7 ", "+7", "07", "7.0", "seven", "8", "-0", ""),
        },
        optional=HONEYPOT,
    ),
)
SUBSCRIBE_FORMS = st.one_of(
    ARBITRARY_FORM_DATA, st.fixed_dictionaries({"name": NAME, "email": EMAIL}, optional=HONEYPOT)
)

KNOWN_CONTACT_MESSAGES = {"", antispam.HONEYPOT_REJECTED, antispam.TOO_FAST_REJECTED, antispam.MATH_REJECTED}
HONEST_CONTACT = {**CONTACT_FIELDS, "firstName": " Zoë ", "email": "Jo@Example.COM", "answer": " 7 "}


def fields_of(form_data) -> dict:
    return form_data if isinstance(form_data, dict) else {}


# Hypothesis' 200 ms deadline per example is no rule of these tests: a loaded machine would miss it.
@given(form_data=CONTACT_FORMS)
@example(form_data=HONEST_CONTACT)  # sent, every run
@example(form_data={**HONEST_CONTACT, "answer": "8"})
@example(form_data={**HONEST_CONTACT, "website": "http://spam.example"})
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_contact_submit_payload_is_answered_and_sends_only_valid_requests(form_data):
    """A minute after showing: sent, cleaned, exactly when every field is valid, the honeypot empty, 3 + 4 answered."""
    clock = Clock()
    with pytest.MonkeyPatch.context() as patch, recording_gateway() as recorder:
        patch.setattr(submissions, "now_ms", clock)
        patch.setattr(antispam, "new_question", lambda rng=None: QUESTION)
        submits.shared_used_tokens.set(submits.Limiter())
        state = ContactState(_reflex_internal_init=True)
        ContactState.start.fn(state)
        clock.now += 60_000
        if isinstance(form_data, dict):  # the page's hidden field: the form's token
            form_data = {**form_data, "token": state._token}
        asyncio.run(submit(state, form_data))
        submits.shared_used_tokens.set(None)
    assert state.form_error in KNOWN_CONTACT_MESSAGES
    fields = fields_of(form_data)
    checked = form_fields.CONTACT.check(fields)
    honest = not form_fields.honeypot_filled(fields.get("website", "")) and antispam.is_correct_answer(
        fields.get("answer"), QUESTION.answer
    )
    if checked.ok and honest:  # the body's shape: test_form_states.py's spec-body test
        assert recorder.bodies == [contact_body(checked.values)]
    else:
        assert recorder.bodies == []


@given(form_data=SUBSCRIBE_FORMS)
@example(form_data={"name": " Jo Reader ", "email": "Jo@Example.COM"})  # sent, every run
@example(form_data={"name": "Jo Reader", "email": "jo@example.com", "book_updates": "no", "bcc": "x@example.com"})
@example(form_data={"name": "Jo Reader", "email": "jo@example.com", "website": "http://spam.example"})
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_subscribe_submit_payload_is_answered_and_only_valid_data_is_sent(form_data):
    """Sent, cleaned, exactly when the name and email are valid and the hidden field is empty."""
    with recording_gateway() as recorder:
        state = SubscribeState(_reflex_internal_init=True)
        asyncio.run(submit(state, form_data))
    assert state.name_error in MESSAGES["name"] | {""}
    assert state.email_error in MESSAGES["email"] | {""}
    fields = fields_of(form_data)
    checked = form_fields.SUBSCRIBE.check(fields)
    if checked.ok and not form_fields.honeypot_filled(fields.get("website", "")):
        assert recorder.bodies == [
            {"email": checked.values["email"], "name": checked.values["name"], "book_updates": "yes"}
        ]
    else:
        assert recorder.bodies == []
