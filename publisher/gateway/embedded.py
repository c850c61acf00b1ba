"""The embedded local gateway: the same two endpoints as the cloud API gateway, self-hosted.

Used when ``PUBLISHER_GATEWAY_URL`` is unset, so the site works end to end with
nothing else running. It is an ASGI app that is never mounted on the public
server: the site's backend reaches it through an in-process httpx transport, so
no outside request can skip the forms' anti-spam checks by posting to it.

Accepted requests are stored (storage/; a subscription joins the list as
storage/subscribers.py describes). With ``PUBLISHER_SMTP_URL`` set, each contact message
and each confirmation email is also queued in the same transaction for the
outbox, which sends it in the background (mail/outbox.py): the answer never waits for
SMTP.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import sqlalchemy
from pydantic import ValidationError
from reflex_base import constants
from reflex_base.environment import environment
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from publisher import storage
from publisher.config import settings
from publisher.config.settings import MailSettings
from publisher.gateway.contract import (
    SEND_EMAIL_PATH,
    SUBSCRIBE_PATH,
    RequestBody,
    SendEmailRequest,
    SubscribeRequest,
)
from publisher.mail import outbox
from publisher.storage import database, subscribers

logger = logging.getLogger(__name__)

# The largest body the site can send is a 5000-character message with names and an
# email (at most ~21 KB of UTF-8 even when every character takes four bytes).
MAX_BODY_BYTES = 32 * 1024


def migrate_on_development_start() -> None:
    """`reflex run` on a fresh clone: the tables exist before the first submit.

    Development server only (one backend process, migrated again on each reload, a
    no-op when up to date). ``publisher-serve`` migrates once before its workers
    start, and ``make run`` runs ``publisher-gateway migrate`` first anyway.
    """
    if environment.REFLEX_ENV_MODE.get() != constants.Env.DEV or settings.gateway_url() is not None:
        return
    try:
        database.migrate()
    except database.DatabaseUnavailable as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", exc)  # password hidden
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", type(exc).__name__)


# --- The ASGI app. ---


def _error(status: int, message: str, details: Any = None) -> JSONResponse:
    content: dict[str, Any] = {"error": message}
    if details is not None:
        content["details"] = details
    return JSONResponse(content, status_code=status)


async def _read_json(request: Request) -> Any | JSONResponse:
    """The request's JSON body, or the error response that refuses it."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "Content-Type must be application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        return _error(413, f"Body must be at most {MAX_BODY_BYTES} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return _error(413, f"Body must be at most {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _error(422, "Body must be valid JSON")


def _validation_details(exc: ValidationError) -> list[dict[str, str]]:
    # Field paths and reasons only: never echo the submitted values back.
    return [{"field": ".".join(str(p) for p in err["loc"]) or "body", "problem": err["msg"]} for err in exc.errors()]


def create_app(db_url: str | None = None, mail: MailSettings | None = None) -> Starlette:
    """The local gateway's ASGI app, storing into ``db_url`` (Reflex's ``db_url`` by default).

    ``mail``: queue the publisher's emails too (settings.mail_settings(), None: store only).
    """

    async def handle(request: Request, schema: type[RequestBody], store) -> JSONResponse:
        payload = await _read_json(request)
        if isinstance(payload, JSONResponse):
            return payload
        if not isinstance(payload, dict):
            return _error(422, "Body must be a JSON object")
        try:
            body = schema.model_validate(payload)
        except ValidationError as exc:
            return _error(422, "Invalid request body", _validation_details(exc))
        try:
            result = await run_in_threadpool(store, body, db_url)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.error(
                "Local gateway could not store %s: %s (is the database up, and did `publisher-gateway migrate` run?)",
                request.url.path,
                type(exc).__name__,
            )
            return _error(503, "Storage unavailable")
        if mail is not None:
            outbox.wake()
        return JSONResponse(result)

    async def subscribe(request: Request) -> JSONResponse:
        def store(body: SubscribeRequest, url: str | None) -> dict[str, str]:
            # The answer reaches only the site's backend; the visitor sees the same alert either way.
            confirmation = outbox.job_for(mail) if mail is not None else None
            outcome = subscribers.subscribe(body, confirmation, url)
            return {"status": "subscribed" if outcome in ("added", "rejoined") else "already subscribed"}

        return await handle(request, SubscribeRequest, store)

    async def send_email(request: Request) -> JSONResponse:
        def store(body: SendEmailRequest, url: str | None) -> dict[str, str]:
            storage.store_message(body, url, outbox.job_for(mail) if mail is not None else None)
            return {"status": "received"}

        return await handle(request, SendEmailRequest, store)

    return Starlette(
        routes=[
            Route(SUBSCRIBE_PATH, subscribe, methods=["POST"]),
            Route(SEND_EMAIL_PATH, send_email, methods=["POST"]),
        ]
    )
