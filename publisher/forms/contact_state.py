"""The contact form (spec sections 4, 5, 7, 8), with its security question and anti-spam checks.

The question's answer and the time the form was shown are backend-only vars
(leading underscore): Reflex never sends them to the browser. The time comes
from the server's clock, so a visitor cannot forge it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import reflex as rx

from publisher import antispam, gateway, graceful_stop, validation
from publisher.forms.feedback import EDITING, SUCCESS, FormFeedback, deliver

SUCCESS_TOAST = "Your message has been sent successfully!"
FAILURE_TOAST = "Failed to send message. Please try again."
SUCCESS_TITLE = "Thank you for contacting us!"
SUCCESS_TEXT = (
    "We have received your message. We typically reply within 24-48 hours during business days."
)

FIELD_IDS = {
    "first_name": "contact-first-name",
    "last_name": "contact-last-name",
    "email": "contact-email",
    "message": "contact-message",
    "answer": "contact-answer",
}
SUCCESS_ID = "contact-success"
HONEYPOT_FIELD = "website"


def server_clock_ms() -> float:
    """Wall-clock milliseconds: comparable across workers and hosts sharing state in Redis."""
    return time.time() * 1000


class ContactState(FormFeedback, rx.State):
    question: str = ""
    first_name_error: str = ""
    last_name_error: str = ""
    email_error: str = ""
    message_error: str = ""
    answer_error: str = ""

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
        """"Send another message" after a success."""
        if self.status == SUCCESS:
            self._show_fresh_form()

    @rx.event(background=True)
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async with graceful_stop.submit_in_flight():
            async with self:
                if not await self._admit_submit("contact"):
                    return
                outcome = self._check(form_data if isinstance(form_data, dict) else {})
                if outcome.request is not None:
                    self._begin_submit()
            for event in outcome.events:
                yield event
            if outcome.request is None:
                return

            delivered = await deliver(gateway.shared_client().send_email(**outcome.request))

            async with self:
                self._ask_new_question()
                if delivered:
                    self.status = SUCCESS
                    self._notify("success", SUCCESS_TOAST)
                else:
                    self.status = EDITING  # what was typed stays; only the answer is cleared
                    self._notify("error", FAILURE_TOAST)
            yield rx.set_focus(SUCCESS_ID) if delivered else _clear_answer()

    def _check(self, data: dict[str, Any]) -> _Outcome:
        """Field rules, then the anti-spam rules in the spec's order; no request unless all pass."""
        checked = validation.check_contact(
            data.get("first_name"), data.get("last_name"), data.get("email"), data.get("message")
        )
        errors = dict(checked.errors)
        answer = data.get("answer")
        if antispam.answer_field_error(answer, self._answer) == antispam.MATH_REQUIRED:
            errors["answer"] = antispam.MATH_REQUIRED
        self._show_errors(errors)
        if errors:
            return _Outcome(events=[rx.set_focus(FIELD_IDS[next(iter(errors))])])

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
            return _Outcome(events=[_clear_answer(), rx.set_focus(FIELD_IDS["answer"])])
        if rejection is not None:
            self.form_error = rejection
            return _Outcome()
        return _Outcome(request=checked.values)


@dataclass
class _Outcome:
    """What a submit leads to: the gateway request to send, or events for the page."""

    request: dict[str, str] | None = None
    events: list[rx.event.EventSpec] = field(default_factory=list)


def _clear_answer():
    return rx.set_value(FIELD_IDS["answer"], "")
