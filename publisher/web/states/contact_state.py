"""The contact form as the app sends it (the rules: web/submissions.py). The production server writes
a question and its signed token into every page, so ``question`` keeps the page's text until the
app answers a submit; the development server's pages carry none, so there the app asks one."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base import constants
from reflex_base.environment import environment
from reflex_base.event import EventSpec

from publisher.content import form_copy
from publisher.rules import form_tokens
from publisher.rules.form_fields import CONTACT
from publisher.web import submissions
from publisher.web.states.lifecycle import EDITING, SUCCESS, FormLifecycle, Toasts, field_messages

# Element ids by field name: the declared fields' and the security question's answer.
FIELD_IDS = {**CONTACT.field_ids, submissions.ANSWER_FIELD: CONTACT.element_id(submissions.ANSWER_FIELD)}
QUESTION_ID = CONTACT.element_id("question")
TOKEN_ID = CONTACT.element_id(submissions.TOKEN_FIELD)
HONEYPOT_ID = CONTACT.element_id(submissions.HONEYPOT_FIELD)
SUCCESS_ID = CONTACT.element_id("success")
ContactFieldMessages = field_messages(CONTACT, submissions.ANSWER_FIELD)
TOASTS = Toasts(success=form_copy.CONTACT_SUCCESS_TOAST, failure=form_copy.CONTACT_FAILURE_TOAST)


def pages_carry_a_question() -> bool:
    """Whether the server wrote a question into the page (publisher-serve), or the browser rendered it (reflex run)."""
    return environment.REFLEX_ENV_MODE.get() == constants.Env.PROD


# A class made from the declaration is a base mypy cannot see into (the fields' ``*_error`` vars).
class ContactState(ContactFieldMessages, FormLifecycle, rx.State):  # type: ignore[misc,valid-type]
    # QUESTION_PENDING while the page's own question stands (see the module's docstring): never
    # empty, so React hydrates the question's text node, and keeps the server's text in it
    # (the span is marked suppressHydrationWarning; an empty text would be no node at all).
    question: rx.Field[str] = rx.field(form_copy.QUESTION_PENDING)

    _token: str = ""  # the token of ``question``, once the app asked one
    # The token the last submit spent, when a question asked after a failure may follow it in its chain.
    _chain: form_tokens.FormToken | None = None

    def _ask(self, asked: submissions.NewQuestion) -> list[EventSpec]:
        """Show the question, its token in the hidden field; a new question clears the answer, the same one
        (the next token of its chain) leaves what was typed."""
        self.question = asked.text
        self._token = asked.token
        events = [rx.set_value(TOKEN_ID, asked.token)]
        return events if asked.same_question else [*events, _clear_answer()]

    @rx.event
    def start(self):
        """As SubscribeState.start; where the pages carry no question (the module's docstring), the app asks one."""
        self._give_back_an_interrupted_submit()
        if not pages_carry_a_question() and not self._token:
            return self._ask(submissions.new_question())
        return None

    @rx.event
    def start_over(self):
        """ "Send another message" after a success: a fresh form and a new question."""
        if self.status == SUCCESS:
            self.status = EDITING
            self._show_errors({})
            self.form_error = ""
            return self._ask(submissions.new_question())
        return None

    # Reflex types a handler without **kwargs, which this one takes (an event may carry more).
    @rx.event(background=True)  # type: ignore[arg-type]
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async for event in self._run_submit(
            submissions.CONTACT, form_data, self._judge, self._show, TOASTS, self._after_delivery
        ):
            yield event

    async def _judge(self, data: dict[str, Any]) -> submissions.Verdict:
        """The form's token; without one, the app's: the development server may run ``on_load`` before the
        form is mounted, so its ``rx.set_value`` finds no field."""
        if not data.get(submissions.TOKEN_FIELD) and self._token:
            data = {**data, submissions.TOKEN_FIELD: self._token}
        return await submissions.judge_contact(data)

    def _show(self, verdict: submissions.Verdict) -> list[EventSpec]:
        """Field messages (focus on the first), or an anti-spam rejection; the next token (the submit spent its own)."""
        self._show_errors(verdict.field_errors)
        self.form_error = verdict.form_error
        self._chain = verdict.chain
        events = self._ask(verdict.question) if verdict.question is not None else []
        if verdict.field_errors:
            events.append(rx.set_focus(FIELD_IDS[next(iter(verdict.field_errors))]))
        return events

    def _after_delivery(self, delivered: bool) -> list[EventSpec]:
        """After a success the alert replaces the form; after a failure, what was typed stays, with a new question."""
        if delivered:
            return [rx.set_focus(SUCCESS_ID)]
        return self._ask(submissions.new_question(self._chain))


def _clear_answer():
    return rx.set_value(FIELD_IDS[submissions.ANSWER_FIELD], "")
