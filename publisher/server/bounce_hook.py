"""``POST /hooks/bounce``: a provider's bounces and complaints, with ``PUBLISHER_BOUNCE_WEBHOOK_SECRET``
as a bearer token; without one (or with the cloud gateway) the path is a 404 like any unknown one.
Only failures count against an address's limit: a guesser is stopped, a provider's flood is not."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections import Counter

import sqlalchemy
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from publisher import returns
from publisher.config import settings
from publisher.limits import submits
from publisher.returns import webhook
from publisher.seldom_log import SeldomLog
from publisher.server import requests

logger = logging.getLogger(__name__)

PATH = "/hooks/bounce"
MAX_BODY_BYTES = 256 * 1024
_FAILURES = "bounce-hook"  # the limiter's name for wrong secrets from one address

# What the hook answers: for the provider's logs and its operator, not for readers.
NOT_FOUND = "Not found"
ONLY_POST = "Only POST is allowed here"
NEEDS_TOKEN = "A valid bearer token is required"
TOO_MANY = "Too many failed attempts; try again later"
TOO_LARGE = f"The body must be at most {MAX_BODY_BYTES} bytes"
TRY_LATER = "The reports could not be recorded now; try again later"


def bearer_matches(authorization: str | None, secret: str) -> bool:
    """Whether ``Authorization`` carries the secret as a bearer token (the scheme in any case, RFC 6750),
    compared in constant time."""
    if not authorization:
        return False
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode("latin-1", "replace"), secret.encode("utf-8"))


def _error(status: int, text: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": text}, status_code=status, headers=headers)


class BounceHook:
    def __init__(self, db_url: str | None = None):
        self.db_url = db_url
        self._log = SeldomLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            response, detail = await self._answer(scope, receive)
        except requests.ClientLeft:
            self._log.info("Bounce hook: the client left before its body was read")
            return
        # A line per answer, a refusal's at most once a minute for its status: the counts and the
        # problem, never the secret nor an address.
        status = response.status_code
        if status < 400:
            logger.info("Bounce hook: %s %s", status, detail)
        else:
            self._log.log(logging.WARNING if status >= 500 else logging.INFO, f"Bounce hook: {status} %s", detail)
        await response(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive) -> tuple[Response, str]:
        """The answer, and what the log says about it."""
        values = settings.current()
        secret = values.bounces.webhook_secret
        if secret is None:
            return PlainTextResponse(NOT_FOUND, status_code=404), "(no webhook secret is configured)"
        if values.gateway_url is not None:  # the cloud keeps the list: there is nothing here to suppress
            return PlainTextResponse(
                NOT_FOUND, status_code=404
            ), "(PUBLISHER_GATEWAY_URL is set: the cloud keeps the list)"
        if scope["method"] != "POST":
            return _error(405, ONLY_POST, {"Allow": "POST"}), f"({scope['method']})"
        address = requests.client_address(scope)
        limiter = submits.shared_limiter.get()
        if await limiter.exhausted(_FAILURES, "", address):  # before the secret: a right guess looks the same
            return _error(429, TOO_MANY), "(too many wrong tokens from this address; the token was not looked at)"
        headers = Headers(scope=scope)
        if not bearer_matches(headers.get("authorization"), secret):
            if not await limiter.allow(_FAILURES, "", address):
                return _error(429, TOO_MANY), "(too many wrong tokens from this address)"
            return _error(401, NEEDS_TOKEN, {"WWW-Authenticate": "Bearer"}), "(no valid bearer token)"
        try:
            reports = webhook.read_reports(await requests.read_body(scope, receive, MAX_BODY_BYTES))
        except requests.BodyTooLarge as exc:
            return _error(413, TOO_LARGE), f"({exc})"
        except webhook.BodyRefused as exc:
            return _error(422, str(exc)), f"({exc})"
        try:
            recorded = await asyncio.to_thread(returns.take, reports, self.db_url)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            detail = f"({len(reports)} report(s) not recorded: the database is unavailable, {type(exc).__name__})"
            return _error(503, TRY_LATER, {"Retry-After": "60"}), detail
        outcomes = Counter(item.outcome for item in recorded)
        tally = ", ".join(f"{count} {outcome}" for outcome, count in sorted(outcomes.items()))
        return JSONResponse({"accepted": len(reports)}), f"{len(reports)} report(s) taken ({tally})"
