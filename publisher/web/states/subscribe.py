"""The new-release signup form (docs/product.md, Forms: Subscribe)."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.event import EventSpec

from publisher import gateway
from publisher.config import settings
from publisher.content import form_copy
from publisher.rules import antispam, validation
from publisher.web.states.lifecycle import EDITING, FormLifecycle, Outcome, Toasts

# Element ids, so the server can move focus to the first invalid field.
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
            "subscribe", form_data, self._check, self._send, TOASTS, self._after_delivery
        ):
            yield event

    def _check(self, data: dict[str, Any]) -> Outcome:
        """Field rules, then the honeypot; no request unless both pass."""
        checked = validation.check_subscription(data.get("name"), data.get("email"))
        self._show_errors(checked.errors)
        if not checked.ok:
            return Outcome(events=[rx.set_focus(FIELD_IDS[next(iter(checked.errors))])])
        rejection = antispam.subscribe_rejection(honeypot=data.get(antispam.HONEYPOT_FIELD, ""))
        if rejection is not None:
            self.form_error = rejection  # "Please try again.": nothing is stored or sent
            return Outcome()
        return Outcome(request=checked.values)

    async def _send(self, request: dict[str, str]) -> None:
        await gateway.shared_client.get().subscribe(**request)

    def _after_delivery(self, delivered: bool) -> list[EventSpec]:
        return [rx.set_focus(SUCCESS_ID)] if delivered else []  # on a failure the form stays as typed
