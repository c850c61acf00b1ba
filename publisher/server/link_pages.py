"""The list's links over HTTP (docs/mailing-list.md): a GET changes nothing and every failure is the same 404;
a one-click POST (RFC 8058) comes from a provider's server, so the signed token is the authority."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from publisher import mailing_list
from publisher.content import form_copy, list_copy
from publisher.limits import submits
from publisher.rules import list_rules
from publisher.rules.list_rules import CONFIRM_PATH, UNSUBSCRIBE_PATH
from publisher.seldom_log import SeldomLog
from publisher.server import routes
from publisher.server.plain_forms import built_page, page_response, posted_from_this_site
from publisher.web import submissions
from publisher.web.components.list_link import LINK_PANEL_ATTRIBUTE, Outcomes, outcome_html
from publisher.web.pages import confirm, unsubscribe
from publisher.web.states.list_link_state import (
    CONFIRM_ACTION,
    LIMITED,
    UNSUBSCRIBE_ACTION,
    LinkView,
    confirm_press,
    confirm_view,
    list_secrets,
    unsubscribe_press,
    unsubscribe_view,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 4096
_FAILURES = "list-link"  # the limiter's name for wrong links from one address


@dataclass(frozen=True)
class LinkPage:
    route: str
    action: str  # the limiter's name for its press, the app's too
    view: Callable[[str, bool], Awaitable[LinkView]]  # what a token leads to (token, after a press)
    press: Callable[[LinkView], Awaitable[LinkView]]  # what the button does
    outcomes: Outcomes


LINK_PAGES = {
    page.route: page
    for page in (
        LinkPage(CONFIRM_PATH, CONFIRM_ACTION, confirm_view, confirm_press, confirm.OUTCOMES),
        LinkPage(UNSUBSCRIBE_PATH, UNSUBSCRIBE_ACTION, unsubscribe_view, unsubscribe_press, unsubscribe.OUTCOMES),
    )
}


def one_click_requested(body: bytes, content_type: str) -> bool:
    text = body.decode("utf-8", "replace")
    if content_type.startswith("multipart/form-data"):
        return 'name="List-Unsubscribe"' in text and "One-Click" in text
    return parse_qs(text).get("List-Unsubscribe") == ["One-Click"]


def panel_slot(html: str) -> tuple[str, str]:
    """A link's page of the build split where its panel goes, so each response is a join, not a parse."""
    slot = re.search(rf'(<div\b[^>]*\b{LINK_PANEL_ATTRIBUTE}=""[^>]*>)(.*?)(</div>)', html, re.S)
    if slot is None:
        raise LookupError(
            f"A list link's page of the build has no [{LINK_PANEL_ATTRIBUTE}] element: "
            "is the build older than this code? Run `make build`."
        )
    return html[: slot.end(1)], html[slot.start(3) :]


class ListLinks:
    def __init__(self, page: ASGIApp, build_dir: Path | None = None):
        self.page_app = page
        self.slots = (
            None if build_dir is None else {route: panel_slot(built_page(build_dir, route)) for route in LINK_PAGES}
        )
        self._log = SeldomLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        page = LINK_PAGES[scope["path"].rstrip("/")]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        token = (query.get(list_rules.TOKEN_PARAM) or [""])[0]
        if scope["method"] == "POST":
            response = await self._post(page, scope, receive, token)
        elif scope["method"] in ("GET", "HEAD"):
            done = (query.get(list_rules.DONE_PARAM) or [""])[0] == "1"
            view = await page.view(token, done)
            status = view.http_status
            if status in (404, 410) and not await self._within_failure_limits(scope):
                view, status = LinkView(LIMITED), 429
            if self.slots is None:
                await self.page_app(scope, receive, _with_status(send, status))
                return
            response = self._page(scope, page, view, token, status)
        else:
            response = PlainTextResponse("Method not allowed", status_code=405)
        await response(scope, receive, send)

    def _page(self, scope: Scope, page: LinkPage, view: LinkView, token: str, status: int) -> Response:
        assert self.slots is not None
        panel = outcome_html(page.outcomes, view.stage, view.address, list_rules.link_path(page.route, token))
        before, after = self.slots[page.route]
        return page_response(scope, before + panel + after, status)

    async def _post(self, page: LinkPage, scope: Scope, receive: Receive, token: str) -> Response:
        if page.route == UNSUBSCRIBE_PATH:
            try:
                body = await routes.read_body(scope, receive, MAX_BODY_BYTES)
            except routes.BodyTooLarge:
                return PlainTextResponse("Expected the body List-Unsubscribe=One-Click", status_code=400)
            except routes.ClientLeft:
                return PlainTextResponse("", status_code=400)
            content_type = Headers(scope=scope).get("content-type", "").lower()
            if one_click_requested(body, content_type):
                return await self._one_click(scope, token)
        return await self._press(page, scope, token)

    async def _press(self, page: LinkPage, scope: Scope, token: str) -> Response:
        if not posted_from_this_site(scope):
            self._log.info("List link %s: a POST from another site refused", page.action)
            return PlainTextResponse("This page accepts posts from its own page only.", status_code=403)
        address = routes.client_address(scope)
        if not await submits.shared_limiter.get().allow(page.action, "", address):
            if self.slots is None:  # no build to write into (`reflex run`): the sentence alone
                return PlainTextResponse(form_copy.TOO_MANY_ATTEMPTS, status_code=429)
            return self._page(scope, page, LinkView(LIMITED), token, 429)
        async with submissions.submit_in_flight():
            await page.press(await page.view(token, False))
        return RedirectResponse(list_rules.link_path(page.route, token, done=True), status_code=303)

    async def _one_click(self, scope: Scope, token: str) -> PlainTextResponse:
        link_key = list_rules.read_unsubscribe_token(list_secrets(), token)
        try:
            result = None if link_key is None else await mailing_list.unsubscribe(link_key, one_click=True)
        except mailing_list.ListUnavailable:
            return PlainTextResponse(list_copy.LINK_TRY_LATER, status_code=503, headers={"Retry-After": "60"})
        if result is None:
            status = 404 if await self._within_failure_limits(scope) else 429
            return PlainTextResponse(list_copy.LINK_INVALID_TITLE, status_code=status)
        return PlainTextResponse(list_copy.UNSUBSCRIBE_ONE_CLICK_DONE)

    @staticmethod
    async def _within_failure_limits(scope: Scope) -> bool:
        address = routes.client_address(scope)
        return await submits.shared_limiter.get().allow(_FAILURES, "", address)


def _with_status(send: Send, status: int) -> Send:
    if status == 200:
        return send

    async def send_with_status(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 200:
            message = {**message, "status": status}
        await send(message)

    return send_with_status
