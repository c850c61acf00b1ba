"""The new-release signup form (docs/product.md, Forms: Subscribe), as the app sends it.

The rules are web/submissions.py's, which also answer the form's plain HTML POST.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.event import EventSpec

from publisher.config import settings
from publisher.content import form_copy
from publisher.web import submissions
from publisher.web.states.lifecycle import EDITING, FormLifecycle, Toasts

# Element ids by field name, so the server can move focus to the first invalid field.
FIELD_IDS = {"name": "subscribe-name", "email": "subscribe-email"}
HONEYPOT_ID = "subscribe-website"
SUCCESS_ID = "subscribe-success"
TOASTS = Toasts(success=form_copy.SUBSCRIBE_SUCCESS_TOAST, failure=form_copy.SUBSCRIBE_FAILURE_TOAST)


class SubscribeState(FormLifecycle, rx.State):
    name_error: rx.Field[str] = rx.field("")
    email_error: rx.Field[str] = rx.field("")
    # The success alert then asks to confirm from the inbox: this site keeps the list itself.
    asks_confirmation: rx.Field[bool] = rx.field(False)

    def _show_errors(self, errors: dict[str, str]) -> None:
        self.name_error = errors.get("name", "")
        self.email_error = errors.get("email", "")

    @rx.event
    def start(self):
        """Each visit to the page shows a fresh form (unless a submit is still in flight)."""
        self.asks_confirmation = settings.list_emails_on()
        if not self._submit_in_flight():
            self.status = EDITING
            self._show_errors({})
            self.form_error = ""

    @rx.event
    def start_over(self):
        """ "Subscribe another address" after a success."""
        self.start()  # type: ignore[operator]  # an event handler, called on the state: Reflex types it as its decorator

    # Reflex types a handler without **kwargs, which this one takes (an event may carry more).
    @rx.event(background=True)  # type: ignore[arg-type]
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async for event in self._run_submit(
            submissions.SUBSCRIBE, form_data, _judge, self._show, TOASTS, self._after_delivery
        ):
            yield event

    def _show(self, verdict: submissions.Verdict) -> list[EventSpec]:
        """The field messages, or the honeypot's "Please try again."; focus on the first invalid field."""
        self._show_errors(verdict.field_errors)
        self.form_error = verdict.form_error
        return [rx.set_focus(FIELD_IDS[name]) for name in list(verdict.field_errors)[:1]]

    def _after_delivery(self, delivered: bool) -> list[EventSpec]:
        return [rx.set_focus(SUCCESS_ID)] if delivered else []  # on a failure the form stays as typed


async def _judge(data: dict[str, Any]) -> submissions.Verdict:
    return submissions.judge_subscribe(data)
