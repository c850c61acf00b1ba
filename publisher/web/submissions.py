"""One submit of either form, whichever way it came (the app's event or a plain HTML POST), so both
have the same rules, anti-spam checks, gateway call and words (docs/product.md, Forms). Nothing
here knows Reflex: a submit is the form's fields by their names (rules/form_fields.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from publisher import gateway, mailing_list
from publisher.config import settings
from publisher.limits import used_tokens
from publisher.rules import antispam, form_fields, form_tokens
from publisher.web import graceful_stop

logger = logging.getLogger(__name__)

SUBSCRIBE = form_fields.SUBSCRIBE.name
CONTACT = form_fields.CONTACT.name
ANSWER_FIELD = "answer"
HONEYPOT_FIELD = antispam.HONEYPOT_FIELD
TOKEN_FIELD = form_tokens.TOKEN_FIELD


@dataclass(frozen=True)
class NewQuestion:
    """A math question for the contact form, and the signed token that carries it."""

    text: str
    token: str
    # The question the form shows already, with the next token of its chain: the answer typed stands.
    same_question: bool = False


@dataclass(frozen=True)
class Verdict:
    """What one submit leads to: a gateway request, or the messages the page shows."""

    # Field name -> its message, in the order the fields are shown.
    field_errors: dict[str, str] = field(default_factory=dict)
    # A message about the whole submission (an anti-spam rejection).
    form_error: str = ""
    # What to send the gateway; None: nothing is sent.
    request: dict[str, str] | None = None
    # The question and token the form must show now: the submitted token is spent.
    question: NewQuestion | None = None
    # The token this submit spent, when a later one may follow it in its chain (rules/form_tokens.py):
    # a question asked after a gateway failure keeps the chain's shown time and hour.
    chain: form_tokens.FormToken | None = None


def now_ms() -> float:
    """Wall-clock milliseconds: comparable across workers and hosts."""
    return time.time() * 1000


def new_question(after: form_tokens.FormToken | None = None) -> NewQuestion:
    """A new question; its token follows ``after`` in its chain, or starts a chain now."""
    question = antispam.new_question()
    secret = settings.form_secrets()[0]
    if after is None:
        return NewQuestion(question.text, form_tokens.issue(secret, question, now_ms=now_ms()))
    return NewQuestion(question.text, form_tokens.follow(secret, question, after=after))


def same_question(after: form_tokens.FormToken | None) -> NewQuestion:
    """``after``'s question again, with the next token of its chain; a new question (a new chain) when
    there is no chain to follow."""
    if after is None:
        return new_question()
    token = form_tokens.follow(settings.form_secrets()[0], after.question, after=after)
    return NewQuestion(after.question.text, token, same_question=True)


async def spend_token(data: Mapping[str, object], now: float) -> form_tokens.FormToken | None:
    """Every answered submit spends its token, whatever its verdict; the token the next one may follow
    in its chain (this one on its first use within its chain's hour), else None."""
    token = form_tokens.read(settings.form_secrets(), data.get(TOKEN_FIELD))
    first_use = token is not None and not token.expired(now) and await used_tokens.first_use(token.nonce)
    return form_tokens.continues(token, first_use=first_use, now_ms=now)


async def question_after_refusal(data: Mapping[str, object]) -> NewQuestion:
    """A contact submit refused before it was judged (over the limits) spends its token all the same;
    the same question with the next token of its chain."""
    return same_question(await spend_token(data, now_ms()))


async def judge_subscribe(data: Mapping[str, object]) -> Verdict:
    """The field rules, then the honeypot; a request only when both pass (async as ``judge_contact``: one
    way to judge for both forms)."""
    checked = form_fields.SUBSCRIBE.check(data)
    if not checked.ok:
        return Verdict(field_errors=dict(checked.errors))
    rejection = antispam.subscribe_rejection(honeypot=data.get(HONEYPOT_FIELD, ""))
    if rejection is not None:
        return Verdict(form_error=rejection)  # "Please try again.": nothing is stored or sent
    return Verdict(request=checked.values)


async def judge_contact(data: Mapping[str, object]) -> Verdict:
    """The field rules, then the anti-spam checks in their documented order. Every refusal brings the
    next token: the same question when the visitor only has to correct or wait, a new one otherwise."""
    checked = form_fields.CONTACT.check(data)
    errors = dict(checked.errors)
    answer = data.get(ANSWER_FIELD)
    if antispam.answer_field_error(answer, None) == antispam.MATH_REQUIRED:
        errors[ANSWER_FIELD] = antispam.MATH_REQUIRED
    now = now_ms()
    chain = await spend_token(data, now)
    if errors:
        return Verdict(field_errors=errors, question=same_question(chain), chain=chain)

    rejection = antispam.rejection_before_answer(
        honeypot=data.get(HONEYPOT_FIELD, ""),
        shown_at_ms=chain.shown_ms if chain else None,
        now_ms=now,
        min_fill_ms=settings.current().min_fill_time_ms,
    )
    if rejection is not None:
        return Verdict(form_error=rejection, question=same_question(chain), chain=chain)
    assert chain is not None  # a token to follow, as rejection_before_answer found
    if antispam.answer_rejection(answer, chain.question.answer) is not None:
        return Verdict(
            field_errors={ANSWER_FIELD: antispam.MATH_INCORRECT},
            form_error=antispam.MATH_REJECTED,
            question=new_question(chain),
            chain=chain,
        )
    return Verdict(request=checked.values, chain=chain)


async def send(form: str, request: dict[str, str]) -> bool:
    """Deliver an accepted submit to the gateway; True when it took it. Any failure, even an unexpected one
    or a stopping server, ends the submit (logged), so a form never stays "submitting"."""
    chosen = gateway.shared_gateway.get()
    call = chosen.subscribe(request) if form == SUBSCRIBE else chosen.send_email(request)
    try:
        await graceful_stop.gateway_call(call)
    except graceful_stop.StopLimitReached as stop:
        logger.warning("Submit not delivered: %s", stop)
        return False
    except (gateway.GatewayError, mailing_list.ListUnavailable):
        return False  # already logged with its cause by the gateway
    except Exception as exc:
        logger.error("Gateway call failed unexpectedly: %s", type(exc).__name__, exc_info=exc)
        return False
    return True
