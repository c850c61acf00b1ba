"""The list's links as HTTP sees them: the right status for a link's page, and one-click unsubscribe.

The confirmation and unsubscribe pages are the site's own pages: the app reads
the link and asks for the press. This middleware, in front of them on every
worker, adds what only HTTP can say:

- a link whose signature does not match, or whose address the list no longer has,
  gets its page with status 404, and an expired confirmation link 410, so nothing
  treats them as a page that exists;
- ``POST /unsubscribe?token=...`` with the body ``List-Unsubscribe=One-Click`` is a
  mail provider's one-click unsubscribe (RFC 8058): it comes from the provider's
  server, without cookies, so the signed token is the authority. The address
  leaves the list at once and the answer is 200.

Only failures count against the address's limit (like the forms' submits): a bot
trying tokens is stopped, a mail provider unsubscribing many readers is not.
Nothing here says whether an address is on the list: every failure is the same 404.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import parse_qs

import sqlalchemy
from reflex_base import config as reflex_config
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from publisher import storage
from publisher.content import list_copy
from publisher.limits import submits
from publisher.rules import limits as limit_rules
from publisher.rules import list_links
from publisher.rules.list_rules import ListStatus
from publisher.storage import subscribers
from publisher.web.states.list_link import list_secrets

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 4096
_LINK_PATHS = (list_links.CONFIRM_PATH, list_links.UNSUBSCRIBE_PATH)
_FAILURES = "list-link"  # the limiter's name for wrong links from one address


def one_click_requested(body: bytes, content_type: str) -> bool:
    """Whether a POST body asks for RFC 8058's one-click unsubscribe (form-encoded or multipart)."""
    text = body.decode("utf-8", "replace")
    if content_type.startswith("multipart/form-data"):
        return 'name="List-Unsubscribe"' in text and "One-Click" in text
    return parse_qs(text).get("List-Unsubscribe") == ["One-Click"]


class ListLinks:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or (path.rstrip("/") or "/") not in _LINK_PATHS:
            await self.app(scope, receive, send)
            return
        path = path.rstrip("/")
        token = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get(list_links.TOKEN_PARAM) or [""])[0]
        if scope["method"] == "POST" and path == list_links.UNSUBSCRIBE_PATH:
            response = await self._one_click(scope, receive, token)
            await response(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await PlainTextResponse("Method not allowed", status_code=405)(scope, receive, send)
            return
        status = await self._page_status(path, token)
        if status in (404, 410) and not await self._within_limits(scope):
            status = 429
        await self.app(scope, receive, _with_status(send, status))

    async def _page_status(self, path: str, token: str) -> int:
        """200 for a link that leads somewhere, 404 for one that does not, 410 for an expired confirmation."""
        secrets = list_secrets()
        if path == list_links.CONFIRM_PATH:
            claim = list_links.read_confirm_token(secrets, token, storage.utc_now())
            link_key = claim.link_key if claim else None
        else:
            claim, link_key = None, list_links.read_unsubscribe_token(secrets, token)
        if link_key is None:
            return 404
        try:
            row = await asyncio.to_thread(subscribers.lookup, link_key)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("List link: the database is unavailable (%s)", type(exc).__name__)
            return 503
        if row is None:
            return 404
        if claim is not None and claim.expired and row.status == ListStatus.PENDING:
            return 410
        return 200

    async def _one_click(self, scope: Scope, receive: Receive, token: str) -> PlainTextResponse:
        body = await _read_body(receive)
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"").decode("latin-1").lower()
        if body is None or not one_click_requested(body, content_type):
            return PlainTextResponse("Expected the body List-Unsubscribe=One-Click", status_code=400)
        link_key = list_links.read_unsubscribe_token(list_secrets(), token)
        try:
            result = (
                None
                if link_key is None
                else await asyncio.to_thread(subscribers.unsubscribe, link_key, subscribers.BY_ONE_CLICK)
            )
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("One-click unsubscribe: the database is unavailable (%s)", type(exc).__name__)
            return PlainTextResponse(list_copy.LINK_TRY_LATER, status_code=503, headers={"Retry-After": "60"})
        if result is None:
            status = 404 if await self._within_limits(scope) else 429
            return PlainTextResponse(list_copy.LINK_INVALID_TITLE, status_code=status)
        return PlainTextResponse(list_copy.UNSUBSCRIBE_ONE_CLICK_DONE)

    @staticmethod
    async def _within_limits(scope: Scope) -> bool:
        address = limit_rules.client_address(scope, reflex_config.get_config().trusted_proxy_hops)
        return await submits.shared_limiter.get().allow(_FAILURES, "", address)


async def _read_body(receive: Receive) -> bytes | None:
    """The request body, or None when it is larger than a one-click request can be."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            return None
        if not message.get("more_body", False):
            return body


def _with_status(send: Send, status: int) -> Send:
    if status == 200:
        return send

    async def send_with_status(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 200:
            message = {**message, "status": status}
        await send(message)

    return send_with_status
