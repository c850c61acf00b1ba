"""One submit of a form, by the app's event or a plain POST: the same rules, checks, gateway call and words
(docs/product.md, Forms); the forms' states; the stop that lets submits in flight finish on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import reflex as rx
from reflex.utils import exec as reflex_exec
from reflex_base.event import EventSpec

from publisher import gateway, mailing_list
from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.content import form_copy
from publisher.limits import submits, tabs
from publisher.rules import antispam, form_tokens
from publisher.rules.form_fields import ANSWER_FIELD, CONTACT, HONEYPOT_FIELD, SUBSCRIBE, WAITLIST, Form, words_of

logger = logging.getLogger(__name__)

QUESTION_ID = CONTACT.element_id("question")
TOKEN_ID = CONTACT.element_id(form_tokens.TOKEN_FIELD)
EDITING = "editing"
SUBMITTING = "submitting"
SUCCESS = "success"

# Granian closes every websocket the moment a worker is told to stop, so a worker sends nothing new
# and cancels a gateway call still running after STOP_LIMIT_S (inside Docker's 10 s wait before it kills).
STOP_LIMIT_S = 8.0
# After the limit, the time a cancelled submit gets to show its failure toast.
_SETTLE_S = 1.0
_POLL_S = 0.05
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@dataclass
class WorkerStop:
    submits_in_flight: int = 0
    stopping: bool = False
    gateway_calls: set[asyncio.Task[Any]] = field(default_factory=set)


worker_stop: PerProcess[WorkerStop] = PerProcess(WorkerStop)


@asynccontextmanager
async def submit_in_flight() -> AsyncIterator[None]:
    """Hold the worker's stop until this submit has ended and its result was sent."""
    worker = worker_stop.get()
    worker.submits_in_flight += 1
    try:
        yield
    finally:
        worker.submits_in_flight -= 1


async def drain(stop: Callable[[], None], limit_s: float = STOP_LIMIT_S) -> None:
    worker = worker_stop.get()
    started = time.monotonic()
    waiting = worker.submits_in_flight
    if waiting:
        logger.info("Stopping: waiting for %d submit(s) in flight (at most %g s)", waiting, limit_s)
    cancelled = False
    while worker.submits_in_flight:
        elapsed = time.monotonic() - started
        if not cancelled and elapsed >= limit_s:
            cancelled = True
            for task in list(worker.gateway_calls):
                task.cancel()
            logger.warning("Stopping: cancelled %d gateway call(s) after %g s", len(worker.gateway_calls), limit_s)
        if elapsed >= limit_s + _SETTLE_S:
            break
        await asyncio.sleep(_POLL_S)
    if waiting:
        logger.info(
            "Stopping after %.2f s; %d submit(s) still in flight", time.monotonic() - started, worker.submits_in_flight
        )
    stop()


def handle_stop_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
    def on_signal() -> None:
        if not worker_stop.get().stopping:  # a second signal: the drain already runs, and is bounded
            worker_stop.get().stopping = True
            loop.create_task(drain(stop))

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal)


@dataclass(frozen=True)
class NewQuestion:
    text: str
    token: str
    same_question: bool = False  # the question shown already, next token: the answer typed stands


@dataclass(frozen=True)
class Verdict:
    """A gateway ``request``, or the messages to show with the next ``question`` (the submitted token is spent)."""

    field_errors: dict[str, str] = field(default_factory=dict)  # in the order the fields are shown
    form_error: str = ""
    request: dict[str, str] | None = None
    question: NewQuestion | None = None
    chain: form_tokens.FormToken | None = None


def now_ms() -> float:
    """Wall-clock milliseconds: comparable across workers and hosts."""
    return time.time() * 1000


def new_question(after: form_tokens.FormToken | None = None, same: bool = False) -> NewQuestion:
    """Its token follows ``after`` in its chain (None: starts one); ``same``: ``after``'s question again."""
    secret = settings.form_secrets()[0]
    if after is None:
        question = antispam.new_question()
        return NewQuestion(question.text, form_tokens.issue(secret, question, now_ms=now_ms()))
    question = after.question if same else antispam.new_question()
    return NewQuestion(question.text, form_tokens.follow(secret, question, after=after), same_question=same)


async def spend_token(data: Mapping[str, object], now: float) -> form_tokens.FormToken | None:
    """Every answered submit spends its token, whatever its verdict; the token its next may follow, else None."""
    token = form_tokens.read(settings.form_secrets(), data.get(form_tokens.TOKEN_FIELD))
    first_use = token is not None and not token.expired(now) and await submits.first_use(token.nonce)
    return form_tokens.continues(token, first_use=first_use, now_ms=now)


async def judge(form: Form, data: Mapping[str, object]) -> Verdict:
    """The field rules, then the honeypot; a form that asks a question: the anti-spam checks in their order."""
    if form.asks_question:
        return await _judge_with_question(form, data)
    checked = form.check(data)
    if not checked.ok:
        return Verdict(field_errors=dict(checked.errors))
    if checked.bot:
        return Verdict(form_error=form_copy.HONEYPOT_REJECTED)
    return Verdict(request=checked.values)


async def _judge_with_question(form: Form, data: Mapping[str, object]) -> Verdict:
    """Every refusal brings the next token: the same question when the visitor only has to correct or wait."""
    checked = form.check(data)
    errors = dict(checked.errors)
    answer = data.get(ANSWER_FIELD)
    if antispam.answer_field_error(answer, None) == antispam.MATH_REQUIRED:
        errors[ANSWER_FIELD] = antispam.MATH_REQUIRED
    now = now_ms()
    chain = await spend_token(data, now)
    if errors:
        return Verdict(field_errors=errors, question=new_question(chain, same=True), chain=chain)
    rejection = antispam.rejection_before_answer(
        honeypot=data.get(HONEYPOT_FIELD, ""),
        shown_at_ms=chain.shown_ms if chain else None,
        now_ms=now,
        min_fill_ms=settings.current().min_fill_time_ms,
    )
    if rejection is not None:
        return Verdict(form_error=rejection, question=new_question(chain, same=True), chain=chain)
    assert chain is not None  # a token to follow, as rejection_before_answer found
    if antispam.answer_rejection(answer, chain.question.answer) is not None:
        return Verdict(
            field_errors={ANSWER_FIELD: antispam.MATH_INCORRECT},
            form_error=antispam.MATH_REJECTED,
            question=new_question(chain),
            chain=chain,
        )
    return Verdict(request=checked.values, chain=chain)


async def send(form: str, request: dict[str, str], book_slug: str = "") -> bool:
    """Any failure, a stopping server or its stop limit ends the submit (logged): no form stays "submitting"."""
    worker = worker_stop.get()
    if worker.stopping:
        logger.warning("Submit not delivered: the server is stopping")
        return False
    chosen = gateway.shared_gateway.get()
    if form == WAITLIST.name:
        call = chosen.wait(request, book_slug)
    else:
        call = chosen.subscribe(request) if form == SUBSCRIBE.name else chosen.send_email(request)
    task = asyncio.ensure_future(call)
    worker.gateway_calls.add(task)
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()  # the submit itself was cancelled: take its call with it
        raise
    finally:
        worker.gateway_calls.discard(task)
    if task.cancelled():
        logger.warning("Submit not delivered: no answer within the %g s stop limit", STOP_LIMIT_S)
        return False
    try:
        task.result()
    except (gateway.GatewayError, mailing_list.ListUnavailable):
        return False  # already logged with its cause by the gateway
    except Exception as exc:
        logger.error("Gateway call failed unexpectedly: %s", type(exc).__name__, exc_info=exc)
        return False
    return True


def error_var(name: str) -> str:
    """``firstName`` -> ``first_name_error``."""
    return "_".join([*words_of(name), "error"])


def field_messages(form: Form) -> type[rx.State]:
    """A state mixin with a message var per field of ``form``, and ``_show_errors``, which fills them."""
    names = tuple(form.field_ids)
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


# Each form's toasts: (success, failure); the waitlist's failure is the alert of its plain POST's answer.
TOASTS = {
    SUBSCRIBE.name: (form_copy.SUBSCRIBE_SUCCESS_TOAST, form_copy.SUBSCRIBE_FAILURE_TOAST),
    CONTACT.name: (form_copy.CONTACT_SUCCESS_TOAST, form_copy.CONTACT_FAILURE_TOAST),
    WAITLIST.name: (form_copy.WAITLIST_THANKS_TITLE, form_copy.SUBSCRIBE_FAILURE_TOAST),
}


class FormLifecycle(rx.State, mixin=True):
    """Editing -> submitting -> success or back to editing (docs/product.md, Forms). The toast is state, not
    a server-sent script, so a strict CSP holds; ``notice_id`` shows each toast once, even on reconnect."""

    _form: ClassVar[Form]  # the declaration each form's state submits
    status: rx.Field[str] = rx.field(EDITING)
    form_error: rx.Field[str] = rx.field("")
    notice_id: rx.Field[str] = rx.field("")
    notice_kind: rx.Field[str] = rx.field("")
    notice_text: rx.Field[str] = rx.field("")
    # When the submit in flight started, so one whose worker died mid-call cannot leave the form "submitting".
    _submit_started_s: float = 0.0

    def _begin_submit(self) -> None:
        self.status = SUBMITTING
        self._submit_started_s = time.time()

    def _submit_in_flight(self) -> bool:
        limit_s = settings.current().gateway_timeout_s + 5
        return self.status == SUBMITTING and time.time() - self._submit_started_s < limit_s

    def _give_back_an_interrupted_submit(self) -> None:
        if self.status == SUBMITTING and not self._submit_in_flight():
            self.status = EDITING

    @rx.event
    def start_over(self):
        """ "Subscribe another address", "Send another message": a fresh form after a success."""
        if self.status != SUCCESS:
            return None
        self.status = EDITING
        self._show_errors({})  # type: ignore[attr-defined]  # each form's field_messages
        self.form_error = ""
        return self._fresh_question()

    def _fresh_question(self, after: form_tokens.FormToken | None = None) -> list[EventSpec]:
        return []  # the contact form's new question, after a success or a failure

    async def _admit_submit(self, form: str, client: str, address: str) -> bool:
        """``client``, ``address``: the event's (the stored state ``async with self`` loads has no address)."""
        if self.status == SUCCESS or self._submit_in_flight():
            return False  # a second submit while one is in flight, or after success, does nothing
        if not await submits.shared_limiter.get().allow(form, client, address):
            self.form_error = form_copy.TOO_MANY_ATTEMPTS
            return False
        self.form_error = ""
        await tabs.engage(client)  # keep this tab's state (and its success) the usual time
        return True

    def _notify(self, kind: str, text: str) -> None:
        self.notice_id = uuid.uuid4().hex
        self.notice_kind = kind
        self.notice_text = text

    # Reflex types a handler without **kwargs, which this one takes (an event may carry more).
    @rx.event(background=True)  # type: ignore[arg-type]
    async def submit(self, form_data: dict[str, Any] | None = None, **_unexpected: Any):
        """From the press to the toast: its verdict and messages inside the state lock, the gateway call outside."""
        form = self._form
        session = self.router.session  # the event's, before ``async with self`` loads the state again
        async with submit_in_flight():
            async with self:
                if not await self._admit_submit(form.name, session.client_token, session.client_ip):
                    return
                verdict = await self._judge(form, form_data if isinstance(form_data, dict) else {})
                self._show_errors(verdict.field_errors)  # type: ignore[attr-defined]  # each form's field_messages
                self.form_error = verdict.form_error
                events = self._judged(verdict)
                events += [rx.set_focus(form.field_ids[name]) for name in list(verdict.field_errors)[:1]]
                if verdict.request is not None:
                    self._begin_submit()
            for event in events:
                yield event
            if verdict.request is None:
                return
            delivered = await send(form.name, verdict.request)
            async with self:
                self.status = SUCCESS if delivered else EDITING  # on a failure what was typed stays
                self._notify("success" if delivered else "error", TOASTS[form.name][0 if delivered else 1])
                events = (
                    [rx.set_focus(form.element_id("success"))] if delivered else self._fresh_question(verdict.chain)
                )
            for event in events:
                yield event

    async def _judge(self, form: Form, data: dict[str, Any]) -> Verdict:
        return await judge(form, data)

    def _judged(self, verdict: Verdict) -> list[EventSpec]:
        return []  # what a form shows of a verdict besides its messages (the contact form: its next question)

    @rx.var
    def submitting(self) -> bool:
        return self.status == SUBMITTING

    @rx.var
    def succeeded(self) -> bool:
        return self.status == SUCCESS


# A class made from the declaration is a base mypy cannot see into (the fields' ``*_error`` vars).
class SubscribeState(field_messages(SUBSCRIBE), FormLifecycle, rx.State):  # type: ignore[misc]
    _form: ClassVar[Form] = SUBSCRIBE
    # The success alert then asks to confirm from the inbox: this site keeps the list itself.
    asks_confirmation: rx.Field[bool] = rx.field(False)

    @rx.event
    def start(self):
        """On the page's load and on every reconnect: only a submit interrupted long ago gives the form back."""
        self.asks_confirmation = settings.current().list_emails_on
        self._give_back_an_interrupted_submit()


class ContactState(field_messages(CONTACT), FormLifecycle, rx.State):  # type: ignore[misc]
    """The production server writes a question and its token into every page, so ``question`` keeps the
    page's text until the app answers a submit; the development server's pages carry none: the app asks."""

    _form: ClassVar[Form] = CONTACT

    # Never empty, so React hydrates the question's text node and keeps the server's text in it
    # (the span is marked suppressHydrationWarning; an empty text would be no node at all).
    question: rx.Field[str] = rx.field(form_copy.QUESTION_PENDING)
    _token: str = ""  # the token of ``question``, once the app asked one

    def _ask(self, asked: NewQuestion) -> list[EventSpec]:
        """A new question clears the answer; the same one (its chain's next token) leaves what was typed."""
        self.question = asked.text
        self._token = asked.token
        events = [rx.set_value(TOKEN_ID, asked.token)]
        return events if asked.same_question else [*events, rx.set_value(CONTACT.field_ids[ANSWER_FIELD], "")]

    @rx.event
    def start(self):
        self._give_back_an_interrupted_submit()
        if not reflex_exec.is_prod_mode() and not self._token:  # production: the server wrote one into the page
            return self._ask(new_question())
        return None

    def _fresh_question(self, after: form_tokens.FormToken | None = None) -> list[EventSpec]:
        return self._ask(new_question(after))

    async def _judge(self, form: Form, data: dict[str, Any]) -> Verdict:
        """Without the form's token, the app's: the development server may run ``on_load`` before the form mounts."""
        if not data.get(form_tokens.TOKEN_FIELD) and self._token:
            data = {**data, form_tokens.TOKEN_FIELD: self._token}
        return await judge(form, data)

    def _judged(self, verdict: Verdict) -> list[EventSpec]:
        return self._ask(verdict.question) if verdict.question is not None else []
