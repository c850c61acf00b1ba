"""What both forms share: their lifecycle (docs/product.md, Forms), editing -> submitting -> success
or back to editing, and the toast they announce; each form says only how it checks and what follows."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import reflex as rx
from reflex_base.event import EventSpec

from publisher.config import settings
from publisher.limits import submits
from publisher.rules import form_fields
from publisher.web import graceful_stop, submissions, tab_states

EDITING = "editing"
SUBMITTING = "submitting"
SUCCESS = "success"


def error_var(name: str) -> str:
    """The state var holding field ``name``'s message: ``firstName`` -> ``first_name_error``."""
    return "_".join([*form_fields.words_of(name), "error"])


def field_messages(form: form_fields.Form, *more: str) -> type[rx.State]:
    """A state mixin with a message var for each of ``form``'s fields and each name in ``more``, and
    ``_show_errors``, which puts a verdict's messages into them."""
    names = (*form.names, *more)
    variables = [error_var(name) for name in names]

    def _show_errors(self: rx.State, errors: dict[str, str]) -> None:
        for name, variable in zip(names, variables, strict=True):
            setattr(self, variable, errors.get(name, ""))

    # The same class a ``class ...(rx.State, mixin=True)`` statement makes, its fields listed here.
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__annotations__": dict.fromkeys(variables, rx.Field[str]),
        "_show_errors": _show_errors,
        **{variable: rx.field("") for variable in variables},
    }
    return type(f"{form.name.title()}FieldMessages", (rx.State,), namespace, mixin=True)


@dataclass(frozen=True)
class Toasts:
    success: str
    failure: str


class FormLifecycle(rx.State, mixin=True):
    """The toast is state, not a server-sent script, so code compiled into the page shows it (a strict
    CSP holds); ``notice_id`` shows each toast once even if the state is sent again on reconnect."""

    status: rx.Field[str] = rx.field(EDITING)
    # A message about the whole submission (too many attempts; for the contact form
    # also the anti-spam rejections), shown above the button.
    form_error: rx.Field[str] = rx.field("")
    notice_id: rx.Field[str] = rx.field("")
    notice_kind: rx.Field[str] = rx.field("")
    notice_text: rx.Field[str] = rx.field("")
    # When the submit in flight started (server clock), so a submit whose worker died
    # mid-call (state shared in Redis) cannot leave the form "submitting" for good.
    _submit_started_s: float = 0.0

    def _begin_submit(self) -> None:
        self.status = SUBMITTING
        self._submit_started_s = time.time()

    def _submit_in_flight(self) -> bool:
        limit_s = settings.gateway_timeout_s() + 5
        return self.status == SUBMITTING and time.time() - self._submit_started_s < limit_s

    def _give_back_an_interrupted_submit(self) -> None:
        """A submit whose worker died mid-call (long past the gateway's timeout) gives the form back."""
        if self.status == SUBMITTING and not self._submit_in_flight():
            self.status = EDITING

    def _accepts_submit(self) -> bool:
        """Editing, or a submit that was interrupted long ago; not after success or while in flight."""
        return self.status == EDITING or (self.status == SUBMITTING and not self._submit_in_flight())

    async def _admit_submit(self, form: str, client: str, address: str) -> bool:
        """Not a duplicate, not over the visitor's limits. ``client``, ``address``: the event's (the stored
        state ``async with self`` loads has no address: reflex_internals/stored_state.py)."""
        if not self._accepts_submit():
            return False  # a second submit while one is in flight, or after success, does nothing
        if not await submits.shared_limiter.get().allow(form, client, address):
            self.form_error = submits.TOO_MANY_ATTEMPTS
            return False
        self.form_error = ""
        await tab_states.engage(client)  # keep this tab's state (and its success) the usual time
        return True

    def _notify(self, kind: str, text: str) -> None:
        self.notice_id = uuid.uuid4().hex
        self.notice_kind = kind
        self.notice_text = text

    async def _run_submit(
        self,
        form: str,
        form_data: object,
        judge: Callable[[dict[str, Any]], Awaitable[submissions.Verdict]],
        show: Callable[[submissions.Verdict], list[EventSpec]],
        toasts: Toasts,
        after: Callable[[bool], list[EventSpec]],
    ) -> AsyncIterator[EventSpec]:
        """One submit, from the press to the toast: ``judge`` (the plain POST's too) and ``show`` inside the
        state lock, the gateway call outside it, then ``after``."""
        session = self.router.session  # the event's, before ``async with self`` loads the state again
        async with graceful_stop.submit_in_flight():
            async with self:
                if not await self._admit_submit(form, session.client_token, session.client_ip):
                    return
                verdict = await judge(form_data if isinstance(form_data, dict) else {})
                events = show(verdict)
                if verdict.request is not None:
                    self._begin_submit()
            for event in events:
                yield event
            if verdict.request is None:
                return

            delivered = await submissions.send(form, verdict.request)

            async with self:
                if delivered:
                    self.status = SUCCESS
                    self._notify("success", toasts.success)
                else:
                    self.status = EDITING  # what was typed stays in the form
                    self._notify("error", toasts.failure)
                events = after(delivered)
            for event in events:
                yield event

    @rx.var
    def submitting(self) -> bool:
        return self.status == SUBMITTING

    @rx.var
    def succeeded(self) -> bool:
        return self.status == SUCCESS
