"""``POST /hooks/bounce``: a provider's reports, all taken or none. Only wrong tokens count against an
address's limit; a refusal names the key, never the value (an address never comes back in a log)."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections import Counter
from typing import Any

import sqlalchemy
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from publisher import returns
from publisher.config import settings
from publisher.limits import submits
from publisher.rules import bounces, form_fields
from publisher.seldom_log import SeldomLog
from publisher.server import routes
from publisher.storage.bounce_records import Report
from publisher.storage.tables import FROM_WEBHOOK

logger = logging.getLogger(__name__)

PATH = "/hooks/bounce"
MAX_BODY_BYTES = 256 * 1024
MAX_ITEMS = 10_000
_FAILURES = "bounce-hook"  # the limiter's name for wrong secrets from one address

NOT_FOUND = "Not found"
ONLY_POST = "Only POST is allowed here"
NEEDS_TOKEN = "A valid bearer token is required"
TOO_MANY = "Too many failed attempts; try again later"
TOO_LARGE = f"The body must be at most {MAX_BODY_BYTES} bytes"
TRY_LATER = "The reports could not be recorded now; try again later"
NOT_JSON = "The body is not JSON"
WRONG_SHAPE = "The body must be a JSON object or a list of them"
EMPTY_LIST = "The list is empty"
TOO_MANY_ITEMS = f"At most {MAX_ITEMS} items at once"


class Item(BaseModel):
    """Unknown keys are ignored: relays add their own (timestamps, ids) and a batch must not fail on them."""

    model_config = ConfigDict(extra="ignore", strict=True)

    email: str = Field(min_length=1, max_length=form_fields.EMAIL_MAX)
    kind: str = Field(alias="type", pattern=f"^({'|'.join(bounces.KINDS)})$")
    reason: str | None = None  # however long (a whole SMTP transcript): clipped to one line when recorded

    @field_validator("email")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        # PostgreSQL refuses NUL in text: that would be a 503 the provider retries forever.
        if form_fields.has_control_characters(value):
            raise ValueError("control characters")
        return value


class BodyRefused(ValueError):
    """Its message names the first problem."""


def read_reports(body: bytes) -> list[Report]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # bad JSON, bad UTF-8, or nesting deeper than the parser goes
        raise BodyRefused(NOT_JSON) from None
    if isinstance(data, dict):
        return [_report(data, None)]
    if not isinstance(data, list):
        raise BodyRefused(WRONG_SHAPE)
    if not data:
        raise BodyRefused(EMPTY_LIST)
    if len(data) > MAX_ITEMS:
        raise BodyRefused(TOO_MANY_ITEMS)
    return [_report(value, number) for number, value in enumerate(data, start=1)]


def _report(value: Any, number: int | None) -> Report:
    """``number``: counted from 1; None when the body is one object."""
    where = "" if number is None else f"item {number}: "
    if not isinstance(value, dict):
        raise BodyRefused(f"{where}must be an object")
    try:
        item = Item.model_validate(value)
    except ValidationError as exc:
        raise BodyRefused(where + _problem(exc.errors(include_input=False)[0])) from None
    return Report(item.kind, item.reason or "", FROM_WEBHOOK, email=item.email)


_PROBLEMS = {
    "missing": "{} is required",
    "string_type": "{} must be a string",
    "string_too_short": "{} must not be empty",
    "string_too_long": f"{{}} must be at most {form_fields.EMAIL_MAX} characters",
    "value_error": "{} must not hold control characters",  # the email's own check
}


def _problem(error: ErrorDetails) -> str:
    """Never echoes the value: it may be an address."""
    field = str(error["loc"][0]) if error["loc"] else "the item"
    if field == "type" and error["type"] != "missing":
        return f"type must be one of {', '.join(bounces.KINDS)}"
    return _PROBLEMS.get(error["type"], "{} is not valid").format(field)


def bearer_matches(authorization: str | None, secret: str) -> bool:
    """The scheme in any case (RFC 6750), the token compared in constant time."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        token.strip().encode("latin-1", "replace"), secret.encode("utf-8")
    )


def _error(status: int, text: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": text}, status_code=status, headers=headers)


class BounceHook:
    def __init__(self, db_url: str | None = None):
        self.db_url = db_url
        self._log = SeldomLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            response, detail = await self._answer(scope, receive)
        except routes.ClientLeft:
            self._log.info("Bounce hook: the client left before its body was read")
            return
        # A refusal's line at most once a minute per status; never the secret nor an address.
        status = response.status_code
        if status < 400:
            logger.info("Bounce hook: %s %s", status, detail)
        else:
            self._log.log(logging.WARNING if status >= 500 else logging.INFO, f"Bounce hook: {status} %s", detail)
        await response(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive) -> tuple[Response, str]:
        values = settings.current()
        secret = values.bounce_webhook_secret
        if secret is None or values.gateway_url is not None:  # the cloud keeps the list: nothing here to suppress
            why = "no webhook secret is configured" if secret is None else "PUBLISHER_GATEWAY_URL is set"
            return PlainTextResponse(NOT_FOUND, status_code=404), f"({why})"
        if scope["method"] != "POST":
            return _error(405, ONLY_POST, {"Allow": "POST"}), f"({scope['method']})"
        address = routes.client_address(scope)
        limiter = submits.shared_limiter.get()
        if await limiter.exhausted(_FAILURES, address):  # before the secret: a right guess looks the same
            return _error(429, TOO_MANY), "(too many wrong tokens from this address; the token was not looked at)"
        if not bearer_matches(Headers(scope=scope).get("authorization"), secret):
            if not await limiter.allow(_FAILURES, "", address):
                return _error(429, TOO_MANY), "(too many wrong tokens from this address)"
            return _error(401, NEEDS_TOKEN, {"WWW-Authenticate": "Bearer"}), "(no valid bearer token)"
        try:
            reports = read_reports(await routes.read_body(scope, receive, MAX_BODY_BYTES))
        except routes.BodyTooLarge as exc:
            return _error(413, TOO_LARGE), f"({exc})"
        except BodyRefused as exc:
            return _error(422, str(exc)), f"({exc})"
        try:
            recorded = await asyncio.to_thread(returns.take, reports, self.db_url)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            detail = f"({len(reports)} report(s) not recorded: the database is unavailable, {type(exc).__name__})"
            return _error(503, TRY_LATER, {"Retry-After": "60"}), detail
        outcomes = Counter(item.outcome for item in recorded)
        tally = ", ".join(f"{count} {outcome}" for outcome, count in sorted(outcomes.items()))
        return JSONResponse({"accepted": len(reports)}), f"{len(reports)} report(s) taken ({tally})"
