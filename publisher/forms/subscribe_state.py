"""The new-release signup form (spec sections 4, 5, 7, 8)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from publisher import gateway, graceful_stop, validation
from publisher.forms.feedback import EDITING, SUCCESS, FormFeedback, deliver

SUCCESS_TOAST = "Successfully subscribed to our email list!"
FAILURE_TOAST = "Failed to subscribe. Please try again."
SUCCESS_TITLE = "Thank you for joining our email list!"
SUCCESS_TEXT = "You will be the first to know when a new book in the Animals We Confuse series is released."

# Element ids, so the server can move focus to the first invalid field.
FIELD_IDS = {"name": "subscribe-name", "email": "subscribe-email"}
SUCCESS_ID = "subscribe-success"


class SubscribeState(FormFeedback, rx.State):
    name_error: str = ""
    email_error: str = ""

    def _show_errors(self, errors: dict[str, str]) -> None:
        self.name_error = errors.get("name", "")
        self.email_error = errors.get("email", "")

    @rx.event
    def start(self):
        """Each visit to the page shows a fresh form (unless a submit is still in flight)."""
        if not self._submit_in_flight():
            self.status = EDITING
            self._show_errors({})
            self.form_error = ""

    @rx.event
    def start_over(self):
        """"Subscribe another address" after a success."""
        self.start()

    @rx.event(background=True)
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        async with graceful_stop.submit_in_flight():
            async with self:
                if not await self._admit_submit("subscribe"):
                    return
                data = form_data if isinstance(form_data, dict) else {}
                checked = validation.check_subscription(data.get("name"), data.get("email"))
                self._show_errors(checked.errors)
                if checked.ok:
                    self._begin_submit()
            if not checked.ok:
                yield rx.set_focus(FIELD_IDS[next(iter(checked.errors))])
                return

            delivered = await deliver(gateway.shared_client().subscribe(**checked.values))

            async with self:
                if delivered:
                    self.status = SUCCESS
                    self._notify("success", SUCCESS_TOAST)
                else:
                    self.status = EDITING  # the form, with what was typed, stays available
                    self._notify("error", FAILURE_TOAST)
            if delivered:
                yield rx.set_focus(SUCCESS_ID)
