"""The new-release signup form (docs/product.md, Forms: Subscribe) as the app sends it; the rules are
web/submissions.py's."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.event import EventSpec

from publisher.config import settings
from publisher.content import form_copy
from publisher.rules.form_fields import SUBSCRIBE
from publisher.web import submissions
from publisher.web.states.lifecycle import EDITING, SUCCESS, FormLifecycle, Toasts, field_messages

FIELD_IDS = SUBSCRIBE.field_ids
HONEYPOT_ID = SUBSCRIBE.element_id(submissions.HONEYPOT_FIELD)
SUCCESS_ID = SUBSCRIBE.element_id("success")
TOASTS = Toasts(success=form_copy.SUBSCRIBE_SUCCESS_TOAST, failure=form_copy.SUBSCRIBE_FAILURE_TOAST)
SubscribeFieldMessages = field_messages(SUBSCRIBE)


# A class made from the declaration is a base mypy cannot see into (the fields' ``*_error`` vars).
class SubscribeState(SubscribeFieldMessages, FormLifecycle, rx.State):  # type: ignore[misc,valid-type]
    # The success alert then asks to confirm from the inbox: this site keeps the list itself.
    asks_confirmation: rx.Field[bool] = rx.field(False)

    @rx.event
    def start(self):
        """On the page's load, and again whenever it reconnects (carrying on with what the page shows); only
        a submit interrupted long ago gives the form back."""
        self.asks_confirmation = settings.list_emails_on()
        self._give_back_an_interrupted_submit()

    @rx.event
    def start_over(self):
        """ "Subscribe another address" after a success: a fresh form."""
        if self.status == SUCCESS:
            self.status = EDITING
            self._show_errors({})
            self.form_error = ""

    # Reflex types a handler without **kwargs, which this one takes (an event may carry more).
    @rx.event(background=True)  # type: ignore[arg-type]
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async for event in self._run_submit(
            submissions.SUBSCRIBE, form_data, submissions.judge_subscribe, self._show, TOASTS, self._after_delivery
        ):
            yield event

    def _show(self, verdict: submissions.Verdict) -> list[EventSpec]:
        """The field messages, or the honeypot's "Please try again."; focus on the first invalid field."""
        self._show_errors(verdict.field_errors)
        self.form_error = verdict.form_error
        return [rx.set_focus(FIELD_IDS[name]) for name in list(verdict.field_errors)[:1]]

    def _after_delivery(self, delivered: bool) -> list[EventSpec]:
        return [rx.set_focus(SUCCESS_ID)] if delivered else []  # on a failure the form stays as typed
