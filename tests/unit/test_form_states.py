"""The two forms' states, driven through their event handlers as the browser drives them, the gateway mocked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import AsyncMock

import httpx
import pytest
from reflex.istate.data import RouterData
from reflex_base.utils.format import format_event_handler

from publisher import gateway
from publisher.config import settings
from publisher.content import form_copy
from publisher.limits import submits
from publisher.rules import antispam, form_tokens
from publisher.rules.antispam import MathQuestion
from publisher.rules.form_fields import CONTACT, SUBSCRIBE
from publisher.web import submissions
from publisher.web.submissions import EDITING, SUBMITTING, SUCCESS, ContactState, SubscribeState
from tests.unit.test_validation import REQUIRED


class Gateway:
    def __init__(self) -> None:
        self.status = 200
        self.bodies: list[dict] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return httpx.Response(self.status, json={})


@contextmanager
def recording_gateway() -> Iterator[Gateway]:
    recorder = Gateway()
    gateway.shared_gateway.set(gateway.GatewayClient("https://gw.test", transport=httpx.MockTransport(recorder.handle)))
    try:
        yield recorder
    finally:
        gateway.shared_gateway.set(None)


@pytest.fixture
def gw() -> Iterator[Gateway]:
    with recording_gateway() as recorder:
        yield recorder


@pytest.fixture
def questions(monkeypatch) -> list[MathQuestion]:
    """Questions are asked in this order: 3 + 4, then 9 - 1, then 5 + 5, then 6 - 3..."""
    queue = [MathQuestion(3, "+", 4), MathQuestion(9, "-", 1), MathQuestion(5, "+", 5), MathQuestion(6, "-", 3)]
    asked: list[MathQuestion] = []

    def next_question(rng=None) -> MathQuestion:
        question = queue[len(asked) % len(queue)]
        asked.append(question)
        return question

    monkeypatch.setattr(antispam, "new_question", next_question)
    return asked


def new_state(cls):
    return cls(_reflex_internal_init=True)


async def submit(state, form_data) -> list:
    return [event async for event in type(state).submit.fn(state, form_data)]


def described(events) -> list[tuple[str, ...]]:
    """Events as (name, argument values...), e.g. ("_set_focus", "ref_subscribe_name")."""
    return [(format_event_handler(event.handler), *(value._var_value for _, value in event.args)) for event in events]


SUBSCRIBER = {"name": "Jo Reader", "email": "jo@example.com"}


@pytest.mark.asyncio
async def test_subscribe_success_sends_the_spec_body_and_a_replay_does_nothing_until_start_over(gw):
    state = new_state(SubscribeState)
    await submit(state, {"name": "", "email": ""})
    events = await submit(state, {"name": "  Jo Reader ", "email": " Jo@Example.COM "})
    assert gw.bodies == [{"email": "Jo@example.com", "name": "Jo Reader", "book_updates": "yes"}]
    assert state.status == SUCCESS and state.succeeded
    assert (state.name_error, state.email_error) == ("", "")
    assert (state.notice_kind, state.notice_text) == ("success", "Successfully subscribed to our email list!")
    assert described(events) == [("_set_focus", "ref_subscribe_success")]

    await submit(state, SUBSCRIBER)
    assert len(gw.bodies) == 1
    SubscribeState.start_over.fn(state)
    assert state.status == EDITING
    await submit(state, {"name": "Ann Other", "email": "ann@example.com"})
    assert len(gw.bodies) == 2


@pytest.mark.asyncio
async def test_subscribe_failure_keeps_the_form_and_says_so(gw, monkeypatch, caplog):
    gw.status = 500
    state = new_state(SubscribeState)
    await submit(state, SUBSCRIBER)
    assert len(gw.bodies) == 1
    assert state.status == EDITING
    assert (state.notice_kind, state.notice_text) == ("error", "Failed to subscribe. Please try again.")

    first_notice = state.notice_id
    await submit(state, SUBSCRIBER)  # the visitor retries; a second toast is a new notice
    assert len(gw.bodies) == 2
    assert state.notice_id != first_notice

    broken = AsyncMock(side_effect=RuntimeError("bug"))
    monkeypatch.setattr(gateway.GatewayClient, "subscribe", broken)  # an unexpected error: the same toast
    await submit(state, SUBSCRIBER)
    assert (state.status, state.notice_text) == (EDITING, "Failed to subscribe. Please try again.")
    assert "Gateway call failed unexpectedly: RuntimeError" in caplog.text


@pytest.mark.asyncio
async def test_a_submit_in_flight_blocks_the_form_until_the_gateway_s_timeout_is_long_past(gw):
    state = new_state(SubscribeState)
    state._begin_submit()
    assert await submit(state, SUBSCRIBER) == []
    assert gw.bodies == []
    assert state.status == SUBMITTING
    SubscribeState.start.fn(state)  # revisiting the page does not cancel it either
    assert state.status == SUBMITTING
    # One interrupted long ago (its worker died, the state in Redis) gives the form back.
    state._submit_started_s -= 16  # longer than the 10 s gateway timeout plus margin
    SubscribeState.start.fn(state)
    assert state.status == EDITING
    state._begin_submit()
    state._submit_started_s -= 16
    await submit(state, SUBSCRIBER)
    assert state.status == SUCCESS
    assert len(gw.bodies) == 1


# A visitor's contact form, by the spec's field names, without its question's answer and token.
CONTACT_FIELDS = {
    "firstName": "Jo",
    "lastName": "Reader",
    "email": "jo@example.com",
    "message": "When is the next book coming out?",
    "website": "",
}


def contact_form(state: ContactState, answer: str = "7", **overrides: str) -> dict[str, str]:
    return {**CONTACT_FIELDS, "answer": answer, "token": state._token, **overrides}


def a_new_question(state: ContactState) -> list[tuple[str, ...]]:
    return [("_set_value", "ref_contact_token", state._token), ("_set_value", "ref_contact_answer", "")]


def token_question(token: str) -> str:
    return form_tokens.read(settings.form_secrets(), token).question.text


@pytest.fixture
def fresh_tokens():
    """A fresh single-use store, so one test's tokens never meet another's."""
    submits.shared_used_tokens.set(submits.Limiter())
    yield
    submits.shared_used_tokens.set(None)


@pytest.fixture
def shown(clock, questions, gw, fresh_tokens) -> ContactState:
    """A contact form shown at the clock's time, asking 3 + 4 (as the development server asks on load)."""
    state = new_state(ContactState)
    ContactState.start.fn(state)
    return state


def test_contact_start_asks_a_question_signed_into_the_forms_token(clock, questions):
    state = new_state(ContactState)
    events = ContactState.start.fn(state)
    assert state.question == "What is 3 + 4?"
    read = form_tokens.read(settings.form_secrets(), state._token)
    assert read is not None and read.question.answer == 7 and read.shown_ms == clock.now
    assert described(events) == a_new_question(state)


@pytest.mark.asyncio
async def test_a_reconnect_carries_on_with_what_the_page_shows(clock, questions, gw, fresh_tokens, monkeypatch):
    """on_load runs on every reconnect: the page's (or the app's) question, the messages and the alert stay."""
    monkeypatch.setattr(submissions.reflex_exec, "is_prod_mode", lambda: True)  # the pages carry a question
    state = new_state(ContactState)
    assert ContactState.start.fn(state) is None  # nothing replaces the question and token the server wrote
    assert state.question == form_copy.QUESTION_PENDING and questions == []
    state._ask(submissions.new_question())
    await submit(state, contact_form(state, answer="8", email="jo@"))
    shown = (state.question, state._token, state.email_error)
    assert ContactState.start.fn(state) is None
    assert (state.question, state._token, state.email_error) == shown

    clock.now += 5000
    await submit(state, contact_form(state, answer="7"))
    assert state.status == SUCCESS
    assert ContactState.start.fn(state) is None
    assert state.status == SUCCESS and state.succeeded  # never a fresh form with a placeholder question

    subscribed = new_state(SubscribeState)
    await submit(subscribed, SUBSCRIBER)
    SubscribeState.start.fn(subscribed)
    assert subscribed.status == SUCCESS


EMPTY_FORM_MESSAGES = {**REQUIRED, "answer": "Please answer the math question"}


@pytest.mark.asyncio
@pytest.mark.parametrize("form", [SUBSCRIBE, CONTACT], ids=["subscribe", "contact"])
async def test_each_field_shows_its_message_and_focus_goes_to_the_first_invalid_one(form, shown, gw):
    """A contact submit spends its token: the same question comes back with the next one, the answer stays."""
    state = new_state(SubscribeState) if form is SUBSCRIBE else shown
    messages = {submissions.error_var(name): EMPTY_FORM_MESSAGES[name] for name in form.field_ids}
    first, second = list(form.field_ids.values())[:2]
    for typed, focus in (({}, first), ({form.names[0]: "Jo Reader"}, second)):
        token = getattr(state, "_token", "")
        events = await submit(state, {**dict.fromkeys(form.field_ids, ""), "token": token, **typed})
        next_token = [("_set_value", "ref_contact_token", state._token)] if form is CONTACT else []
        assert described(events) == [*next_token, ("_set_focus", "ref_" + focus.replace("-", "_"))]
        shown_now = {variable: getattr(state, variable) for variable in messages}
        assert shown_now == (messages if not typed else {**messages, next(iter(messages)): ""})
    assert state.status == EDITING and gw.bodies == []
    assert shown.question == token_question(shown._token) == "What is 3 + 4?"


@pytest.mark.asyncio
@pytest.mark.parametrize("form", ["subscribe", "contact"])
async def test_a_filled_honeypot_says_please_try_again_and_sends_nothing_checked_first(form, shown, gw):
    """Also too fast and a wrong answer here: the contact form checks the honeypot first, its next token only."""
    state = new_state(SubscribeState) if form == "subscribe" else shown
    typed = SUBSCRIBER if form == "subscribe" else contact_form(shown, answer="8")
    events = await submit(state, {**typed, "website": "https://spam.example"})
    assert (state.form_error, state.status, state.notice_text) == ("Please try again.", EDITING, "")
    token = [] if form == "subscribe" else [("_set_value", "ref_contact_token", shown._token)]
    assert described(events) == token and gw.bodies == []
    assert shown.question == "What is 3 + 4?" == token_question(shown._token)
    if form == "subscribe":  # a person (the hidden field empty, as the page sends it) is not affected
        await submit(state, {**SUBSCRIBER, "website": ""})
        assert state.status == SUCCESS and len(gw.bodies) == 1


@pytest.mark.asyncio
async def test_contact_wrong_answer_asks_a_new_question_and_clears_the_answer(shown, gw, clock):
    clock.now += 5000
    first_token = shown._token
    events = await submit(shown, contact_form(shown, answer="8"))
    assert shown.form_error == "Incorrect answer to the math question. Please try again."
    assert shown.answer_error == "Incorrect answer"
    assert shown.question == "What is 9 - 1?" == token_question(shown._token)
    assert described(events) == [*a_new_question(shown), ("_set_focus", "ref_contact_answer")]
    assert gw.bodies == []

    await submit(shown, contact_form(shown, answer="7"))  # right for the old question, wrong for the new one
    assert shown.form_error == "Incorrect answer to the math question. Please try again."
    await submit(shown, contact_form(shown, answer="8", token=first_token))  # the spent token: never again
    assert shown.form_error == "Please try again."
    assert gw.bodies == []


@pytest.mark.asyncio
async def test_every_answered_submit_spends_its_token_so_the_five_seconds_buy_one_message(shown, gw, clock):
    """A field error, a too-fast press, the honeypot: each spends its token; the next keeps the shown time."""
    first_token = shown._token
    clock.now += 5000
    await submit(shown, contact_form(shown, email="jo@"))  # a field error
    after_field_error = shown._token
    assert after_field_error != first_token
    await submit(shown, contact_form(shown, token=first_token))
    assert shown.form_error == "Please try again." and gw.bodies == []
    await submit(shown, contact_form(shown, token=after_field_error))
    assert shown.form_error == "" and len(gw.bodies) == 1  # it follows the first token: no new wait

    ContactState.start_over.fn(shown)
    await submit(shown, contact_form(shown, token=after_field_error, answer="7"))
    assert shown.form_error == "Please try again." and len(gw.bodies) == 1  # used: never a second message
    for refusal in ({"website": "x"}, {"answer": "7"}):  # the honeypot; too fast (a new chain)
        spent = shown._token
        await submit(shown, contact_form(shown, **refusal))
        assert shown._token != spent
        right = form_tokens.read(settings.form_secrets(), spent).question.answer
        await submit(shown, contact_form(shown, token=spent, answer=str(right)))
        assert shown.form_error == "Please try again."
    assert len(gw.bodies) == 1


@pytest.mark.asyncio
async def test_an_expired_token_gets_a_new_question_and_a_new_shown_time(shown, gw, clock):
    clock.now += 3_600_000  # an hour after it was issued
    events = await submit(shown, contact_form(shown))
    assert shown.form_error == "Please try again." and shown.status == EDITING
    assert ("_set_value", "ref_contact_token", shown._token) in described(events)
    renewed = form_tokens.read(settings.form_secrets(), shown._token)
    assert (renewed.shown_ms, renewed.issued_ms) == (clock.now, clock.now)
    assert shown.question == "What is 9 - 1?" == renewed.question.text
    await submit(shown, contact_form(shown, answer="8"))  # at once: the five seconds start again
    assert shown.form_error == "Please take your time to fill out the form completely."
    assert shown.question == "What is 9 - 1?"  # the same question: the visitor only has to wait
    assert gw.bodies == []


@pytest.mark.asyncio
@pytest.mark.parametrize("token", ["", "v1.garbage", None])
async def test_contact_without_the_sites_token_asks_to_try_again_with_a_new_one(
    clock, questions, gw, fresh_tokens, token
):
    state = new_state(ContactState)  # a crafted submit: the page never loaded, no question asked
    events = await submit(state, contact_form(state, answer="7", token=token))
    assert state.form_error == "Please try again."
    assert state.question == "What is 3 + 4?" and token_question(state._token) == state.question
    assert ("_set_value", "ref_contact_token", state._token) in described(events)
    assert gw.bodies == []


@pytest.mark.asyncio
async def test_contact_success_sends_the_spec_body_even_without_its_token_then_another_message_waits(shown, gw, clock):
    """The development server may run on_load before the form is mounted: the app's token stands in."""
    clock.now += 5000
    typed = {"answer": " 7 ", "firstName": " Jo ", "message": "Line one\nLine two.", "token": ""}
    events = await submit(shown, contact_form(shown, **typed))

    assert gw.bodies == [
        {
            "sender": {"name": "Jo Reader", "email": "jo@example.com"},
            "subject": "Contact Form Submission from Jo Reader",
            "message": "Line one\nLine two.",
        }
    ]
    assert shown.status == SUCCESS
    assert (shown.notice_kind, shown.notice_text) == ("success", "Your message has been sent successfully!")
    assert described(events) == [("_set_focus", "ref_contact_success")]

    clock.now += 60_000  # "Send another message": a fresh form, and the clock starts again
    events = ContactState.start_over.fn(shown)
    assert shown.status == EDITING
    assert shown.question == "What is 9 - 1?"
    assert described(events) == a_new_question(shown)
    await submit(shown, contact_form(shown, answer="8"))
    assert shown.form_error == "Please take your time to fill out the form completely."
    assert len(gw.bodies) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("stopping", [False, True], ids=["the gateway's 503", "a server that is stopping"])
async def test_contact_gateway_failure_asks_a_new_question_and_clears_the_answer(
    stopping, shown, gw, clock, monkeypatch
):
    gw.status = 503
    clock.now += 5000
    stop = submissions.worker_stop.get()
    monkeypatch.setattr(stop, "stopping", stopping)  # a server that is stopping sends nothing
    events = await submit(shown, contact_form(shown))
    stop.stopping = False
    assert (len(gw.bodies), stop.submits_in_flight) == (0 if stopping else 1, 0)
    assert shown.status == EDITING
    assert (shown.notice_kind, shown.notice_text) == ("error", "Failed to send message. Please try again.")
    assert shown.question == "What is 9 - 1?"
    assert described(events) == a_new_question(shown)

    gw.status = 200
    await submit(shown, contact_form(shown, answer="7"))  # the same answer no longer fits
    assert len(gw.bodies) == (0 if stopping else 1)
    await submit(shown, contact_form(shown, answer="10"))  # 5 + 5 after the wrong answer's new question
    assert len(gw.bodies) == (1 if stopping else 2)
    assert shown.status == SUCCESS


@pytest.mark.asyncio
@pytest.mark.parametrize("form", ["subscribe", "contact"])
async def test_a_submit_holds_the_stop_until_its_last_event_is_sent(form, shown, gw, clock):
    clock.now += 5000
    state, data = (new_state(SubscribeState), SUBSCRIBER) if form == "subscribe" else (shown, contact_form(shown))
    in_flight_during = [
        submissions.worker_stop.get().submits_in_flight async for _ in type(state).submit.fn(state, data)
    ]
    assert state.status == SUCCESS
    assert in_flight_during == [1]  # still counted while the page gets the result
    assert submissions.worker_stop.get().submits_in_flight == 0


def test_success_texts_match_the_spec():
    assert form_copy.SUBSCRIBE_SUCCESS_TITLE == "Thank you for joining our email list!"
    assert "first to know" in form_copy.SUBSCRIBE_SUCCESS_TEXT and "new" in form_copy.SUBSCRIBE_SUCCESS_TEXT
    assert form_copy.CONTACT_SUCCESS_TITLE == "Thank you for contacting us!"
    assert "24-48 hours" in form_copy.CONTACT_SUCCESS_TEXT and "business days" in form_copy.CONTACT_SUCCESS_TEXT


def visiting(state, token: str = "tab-1", ip: str = "10.0.0.1"):
    state.router = RouterData.from_router_data({"token": token, "ip": ip, "pathname": "/"})
    return state


@pytest.mark.asyncio
@pytest.mark.parametrize("form", ["subscribe", "contact"])
async def test_repeated_attempts_are_limited_before_any_check_and_another_visitor_is_served(form, shown, gw, clock):
    submits.shared_limiter.set(submits.Limiter())
    clock.now += 5000
    state = visiting(new_state(SubscribeState) if form == "subscribe" else shown)

    def typed(good: bool) -> dict:
        if form == "subscribe":
            return SUBSCRIBER if good else {"name": "", "email": ""}
        return contact_form(shown, answer="7" if good else "99")  # a bot guessing answers

    try:
        for _ in range(submits.PER_CLIENT.attempts):
            await submit(state, typed(False))
        assert not state.form_error.startswith("Too many")
        await submit(state, typed(True))
        assert state.form_error == "Too many attempts. Please wait a few minutes and try again."
        assert state.status == EDITING and gw.bodies == []
        other = visiting(new_state(SubscribeState), token="tab-2", ip="10.0.0.2")
        await submit(other, SUBSCRIBER)  # another visitor is not slowed down
        assert other.status == SUCCESS
    finally:
        submits.shared_limiter.set(None)


def test_the_simulated_visitors_name_the_forms_states_as_reflex_does():
    """tests/visitor.py speaks Reflex's event protocol with the states' full names."""
    from tests import visitor

    assert SubscribeState.get_full_name() == visitor.SUBSCRIBE_STATE
    assert ContactState.get_full_name() == visitor.CONTACT_STATE
