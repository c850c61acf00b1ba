"""What both forms share: their lifecycle (spec section 4) and the toast they announce."""

from __future__ import annotations

import uuid

import reflex as rx

EDITING = "editing"
SUBMITTING = "submitting"
SUCCESS = "success"


class FormFeedback(rx.State, mixin=True):
    """A form's status and its latest toast.

    The toast is state, not a server-sent script, so it is shown by code compiled
    into the page (no eval, a strict Content-Security-Policy holds); ``notice_id``
    lets the page show each toast once even if the state is sent again on reconnect.
    """

    status: str = EDITING
    notice_id: str = ""
    notice_kind: str = ""
    notice_text: str = ""

    def _notify(self, kind: str, text: str) -> None:
        self.notice_id = uuid.uuid4().hex
        self.notice_kind = kind
        self.notice_text = text

    @rx.var
    def submitting(self) -> bool:
        return self.status == SUBMITTING

    @rx.var
    def succeeded(self) -> bool:
        return self.status == SUCCESS
