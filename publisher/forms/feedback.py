"""What both forms share: their lifecycle (spec section 4) and the toast they announce."""

from __future__ import annotations

import logging
import time
import uuid

import reflex as rx

from publisher import graceful_stop, ratelimit, settings

logger = logging.getLogger(__name__)

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
    # A message about the whole submission (too many attempts; for the contact form
    # also the anti-spam rejections), shown above the button.
    form_error: str = ""
    notice_id: str = ""
    notice_kind: str = ""
    notice_text: str = ""
    # When the submit in flight started (server clock), so a submit whose worker died
    # mid-call (state shared in Redis) cannot leave the form "submitting" for good.
    _submit_started_s: float = 0.0

    def _begin_submit(self) -> None:
        self.status = SUBMITTING
        self._submit_started_s = time.time()

    def _submit_in_flight(self) -> bool:
        limit_s = settings.gateway_timeout_s() + 5
        return self.status == SUBMITTING and time.time() - self._submit_started_s < limit_s

    def _accepts_submit(self) -> bool:
        """Editing, or a submit that was interrupted long ago; not after success or while in flight."""
        return self.status == EDITING or (self.status == SUBMITTING and not self._submit_in_flight())

    async def _admit_submit(self, form: str) -> bool:
        """Whether this submit may be checked at all: not a duplicate, not over the visitor's limits."""
        if not self._accepts_submit():
            return False  # a second submit while one is in flight, or after success, does nothing
        session = self.router.session
        if not await ratelimit.shared_limiter().allow(form, session.client_token, session.client_ip):
            self.form_error = ratelimit.TOO_MANY_ATTEMPTS
            return False
        self.form_error = ""
        return True

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


async def deliver(send) -> bool:
    """Await one gateway call; True when the gateway accepted it.

    Any failure, even an unexpected one, ends the submit (logged), so the form can
    never stay "submitting". So does a server that is stopping (graceful_stop):
    the call is not started, or cancelled at the stop limit.
    """
    from publisher.gateway import GatewayError

    try:
        await graceful_stop.gateway_call(send)
    except graceful_stop.StopLimitReached as stop:
        logger.warning("Submit not delivered: %s", stop)
        return False
    except GatewayError:
        return False  # already logged with its cause by the gateway client
    except Exception as exc:  # noqa: BLE001
        logger.error("Gateway call failed unexpectedly: %s", type(exc).__name__, exc_info=exc)
        return False
    return True
