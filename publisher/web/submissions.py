"""One submit of either form, whichever way it came: the app's event or a plain HTML POST.

The form states (web/states/) and the server's answer to a POST (server/plain_forms.py)
both call these functions, so the two paths have the same rules, the same anti-spam
checks, the same gateway call and the same words (docs/product.md, Forms). Nothing
here knows Reflex: a submit is the form's fields by their HTML names (the spec's
``firstName``, ``lastName``...), and the verdict says what the page shows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field

from publisher import gateway
from publisher.config import settings
from publisher.limits import form_tokens as used_tokens
from publisher.limits import submits
from publisher.rules import antispam, form_tokens, validation
from publisher.web import graceful_stop

logger = logging.getLogger(__name__)

SUBSCRIBE = "subscribe"
CONTACT = "contact"
# The fields each form shows, by their HTML names, in the order they are shown.
SUBSCRIBE_FIELDS = ("name", "email")
CONTACT_FIELDS = ("firstName", "lastName", "email", "message")
ANSWER_FIELD = "answer"
HONEYPOT_FIELD = antispam.HONEYPOT_FIELD
TOKEN_FIELD = form_tokens.TOKEN_FIELD
# validation.check_contact's keys -> the fields' HTML names.
_CONTACT_NAMES = {"first_name": "firstName", "last_name": "lastName", "email": "email", "message": "message"}


@dataclass(frozen=True)
class NewQuestion:
    """A math question for the contact form, and the signed token that carries it."""

    text: str
    token: str


@dataclass(frozen=True)
class Verdict:
    """What one submit leads to: a gateway request, or the messages the page shows."""

    # Field name -> its message, in the order the fields are shown.
    field_errors: dict[str, str] = field(default_factory=dict)
    # A message about the whole submission (an anti-spam rejection).
    form_error: str = ""
    # What to send the gateway; None: nothing is sent.
    request: dict[str, str] | None = None
    # A new question the form must show now (the old token is spent or was not good).
    question: NewQuestion | None = None
    # When the visitor first saw the form (from a good token), for a question asked later.
    shown_ms: float | None = None


def now_ms() -> float:
    """Wall-clock milliseconds: comparable across workers and hosts."""
    return time.time() * 1000


def new_question(shown_ms: float | None = None) -> NewQuestion:
    """A fresh question and its token; ``shown_ms`` keeps when the visitor first saw the form."""
    question = antispam.new_question()
    token = form_tokens.issue(settings.form_secrets()[0], question, now_ms=now_ms(), shown_ms=shown_ms)
    return NewQuestion(question.text, token)


def judge_subscribe(data: Mapping[str, object]) -> Verdict:
    """The field rules, then the honeypot; a request only when both pass."""
    checked = validation.check_subscription(data.get("name"), data.get("email"))
    if not checked.ok:
        return Verdict(field_errors=dict(checked.errors))
    rejection = antispam.subscribe_rejection(honeypot=data.get(HONEYPOT_FIELD, ""))
    if rejection is not None:
        return Verdict(form_error=rejection)  # "Please try again.": nothing is stored or sent
    return Verdict(request=checked.values)


async def judge_contact(data: Mapping[str, object]) -> Verdict:
    """The field rules, then the anti-spam checks in their documented order, from the form's token.

    A token is spent (single use) once its answer is judged: a wrong answer, a used or a
    foreign token each come back with a new question. The honeypot and the fill time
    leave the token as it is: the visitor only has to wait, or a bot learns nothing new.
    """
    checked = validation.check_contact(
        data.get("firstName"), data.get("lastName"), data.get("email"), data.get("message")
    )
    errors = {_CONTACT_NAMES[name]: message for name, message in checked.errors.items()}
    answer = data.get(ANSWER_FIELD)
    if antispam.answer_field_error(answer, None) == antispam.MATH_REQUIRED:
        errors[ANSWER_FIELD] = antispam.MATH_REQUIRED
    token = form_tokens.read(settings.form_secrets(), data.get(TOKEN_FIELD))
    shown_ms = float(token.shown_ms) if token is not None else None
    if errors:
        return Verdict(field_errors=errors, shown_ms=shown_ms)

    now = now_ms()
    good = token is not None and not token.expired(now)
    honeypot = data.get(HONEYPOT_FIELD, "")
    rejection = antispam.rejection_before_answer(honeypot=honeypot, shown_at_ms=shown_ms if good else None, now_ms=now)
    if rejection is not None:
        token_refused = not good and not antispam.honeypot_filled(honeypot)  # the page needs a new one
        return Verdict(
            form_error=rejection, question=new_question(shown_ms) if token_refused else None, shown_ms=shown_ms
        )
    assert token is not None  # a good token, as rejection_before_answer found
    if not await used_tokens.first_use(token.nonce):
        return Verdict(form_error=antispam.TOKEN_REJECTED, question=new_question(shown_ms), shown_ms=shown_ms)
    if antispam.answer_rejection(answer, token.question.answer) is not None:
        return Verdict(
            field_errors={ANSWER_FIELD: antispam.MATH_INCORRECT},
            form_error=antispam.MATH_REJECTED,
            question=new_question(shown_ms),
            shown_ms=shown_ms,
        )
    return Verdict(request=checked.values, shown_ms=shown_ms)


async def within_limits(form: str, client: str, address: str) -> bool:
    """Counts one attempt against the tab's (when there is one) and the address's limits."""
    return await submits.shared_limiter.get().allow(form, client, address)


async def send(form: str, request: dict[str, str]) -> bool:
    """Deliver an accepted submit to the gateway; True when the gateway took it."""
    client = gateway.shared_client.get()
    call = client.subscribe(**request) if form == SUBSCRIBE else client.send_email(**request)
    return await deliver(call)


async def deliver(call: Awaitable[None]) -> bool:
    """Await one gateway call; True when the gateway accepted it.

    Any failure, even an unexpected one, ends the submit (logged), so a form can
    never stay "submitting". So does a server that is stopping (graceful_stop):
    the call is not started, or cancelled at the stop limit.
    """
    try:
        await graceful_stop.gateway_call(call)
    except graceful_stop.StopLimitReached as stop:
        logger.warning("Submit not delivered: %s", stop)
        return False
    except gateway.GatewayError:
        return False  # already logged with its cause by the gateway client
    except Exception as exc:
        logger.error("Gateway call failed unexpectedly: %s", type(exc).__name__, exc_info=exc)
        return False
    return True
