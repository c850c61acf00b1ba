"""The contact form, with its security question and anti-spam checks (docs/product.md, Forms: Contact).

The question's answer and the time the form was shown are backend-only vars
(leading underscore): Reflex never sends them to the browser. The time comes
from the server's clock, so a visitor cannot forge it.
"""

from __future__ import annotations

import time
from typing import Any

import reflex as rx
from reflex_base.event import EventSpec

from publisher import gateway
from publisher.content import form_copy
from publisher.rules import antispam, validation
from publisher.web.states.lifecycle import EDITING, SUCCESS, FormLifecycle, Outcome, Toasts

FIELD_IDS = {
    "first_name": "contact-first-name",
    "last_name": "contact-last-name",
    "email": "contact-email",
    "message": "contact-message",
    "answer": "contact-answer",
}
SUCCESS_ID = "contact-success"
HONEYPOT_FIELD = antispam.HONEYPOT_FIELD
TOASTS = Toasts(success=form_copy.CONTACT_SUCCESS_TOAST, failure=form_copy.CONTACT_FAILURE_TOAST)


def server_clock_ms() -> float:
    """Wall-clock milliseconds: comparable across workers and hosts sharing state in Redis."""
    return time.time() * 1000


class ContactState(FormLifecycle, rx.State):
    question: rx.Field[str] = rx.field("")
    first_name_error: rx.Field[str] = rx.field("")
    last_name_error: rx.Field[str] = rx.field("")
    email_error: rx.Field[str] = rx.field("")
    message_error: rx.Field[str] = rx.field("")
    answer_error: rx.Field[str] = rx.field("")

    _answer: int | None = None
    _shown_at_ms: float | None = None

    def _show_errors(self, errors: dict[str, str]) -> None:
        self.first_name_error = errors.get("first_name", "")
        self.last_name_error = errors.get("last_name", "")
        self.email_error = errors.get("email", "")
        self.message_error = errors.get("message", "")
        self.answer_error = errors.get("answer", "")

    def _ask_new_question(self) -> None:
        question = antispam.new_question()
        self.question = question.text
        self._answer = question.answer

    def _show_fresh_form(self) -> None:
        self.status = EDITING
        self._show_errors({})
        self.form_error = ""
        self._ask_new_question()
        self._shown_at_ms = server_clock_ms()

    @rx.event
    def start(self):
        """On every visit: a new question, and the fill-time clock starts now."""
        if not self._submit_in_flight():
            self._show_fresh_form()

    @rx.event
    def start_over(self):
        """ "Send another message" after a success."""
        if self.status == SUCCESS:
            self._show_fresh_form()

    # Reflex types a handler without **kwargs, which this one takes (an event may carry more).
    @rx.event(background=True)  # type: ignore[arg-type]
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async for event in self._run_submit(
            "contact", form_data, self._check, self._send, TOASTS, self._after_delivery
        ):
            yield event

    def _check(self, data: dict[str, Any]) -> Outcome:
        """Field rules, then the anti-spam rules in their order; no request unless all pass."""
        checked = validation.check_contact(
            data.get("first_name"), data.get("last_name"), data.get("email"), data.get("message")
        )
        errors = dict(checked.errors)
        answer = data.get("answer")
        if antispam.answer_field_error(answer, self._answer) == antispam.MATH_REQUIRED:
            errors["answer"] = antispam.MATH_REQUIRED
        self._show_errors(errors)
        if errors:
            return Outcome(events=[rx.set_focus(FIELD_IDS[next(iter(errors))])])

        rejection = antispam.rejection(
            honeypot=data.get(HONEYPOT_FIELD, ""),
            shown_at_ms=self._shown_at_ms,
            now_ms=server_clock_ms(),
            answer=answer,
            expected=self._answer,
        )
        if rejection == antispam.MATH_REJECTED:
            self.form_error = rejection
            self.answer_error = antispam.MATH_INCORRECT
            self._ask_new_question()
            return Outcome(events=[_clear_answer(), rx.set_focus(FIELD_IDS["answer"])])
        if rejection is not None:
            self.form_error = rejection
            return Outcome()
        return Outcome(request=checked.values)

    async def _send(self, request: dict[str, str]) -> None:
        await gateway.shared_client.get().send_email(**request)

    def _after_delivery(self, delivered: bool) -> list[EventSpec]:
        """A new question either way; what was typed stays after a failure, only the answer is cleared."""
        self._ask_new_question()
        return [rx.set_focus(SUCCESS_ID) if delivered else _clear_answer()]


def _clear_answer():
    return rx.set_value(FIELD_IDS["answer"], "")
