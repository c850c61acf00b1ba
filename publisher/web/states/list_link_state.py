"""What the confirmation and unsubscribe pages share: opening a link changes nothing (mail scanners
open every link); what a link leads to and what its button does are one function each per page,
for the app and the plain POST alike. The link key stays in backend-only state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import reflex as rx

from publisher.config import settings
from publisher.limits import submits
from publisher.rules.list_links import DONE_PARAM, TOKEN_PARAM, mask_address
from publisher.web import tab_states

CHECKING = "checking"  # the prerendered page, until the app has read the link
ASK = "ask"
DONE = "done"
ALREADY = "already"
EXPIRED = "expired"
REPLACED = "replaced"  # a confirmation link older than the latest one sent to the address
LEFT = "left"
INVALID = "invalid"
LIMITED = "limited"
UNAVAILABLE = "unavailable"


# What a link's page answers over HTTP for each stage: a link that leads nowhere is 404, an expired
# confirmation 410, so nothing treats them as pages that exist.
HTTP_STATUS = {INVALID: 404, EXPIRED: 410, LIMITED: 429, UNAVAILABLE: 503}


@dataclass(frozen=True)
class LinkView:
    """What a link leads to: the stage its page shows, whose address, and what its button needs."""

    stage: str
    email: str | None = None  # shown partly masked
    link_key: str = ""  # set when the button may act (stage ASK)
    issued_at: datetime | None = None  # a confirmation link's date: only the latest one confirms

    @property
    def address(self) -> str:
        return mask_address(self.email) if self.email else ""

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.stage, 200)


def list_secrets() -> tuple[str, ...]:
    """The secrets that sign the links; none where this site does not keep the list (cloud gateway, no SMTP)."""
    mail = settings.mail_settings() if settings.list_emails_on() else None
    return mail.list_secrets if mail is not None else ()


class ListLinkState(rx.State, mixin=True):
    stage: rx.Field[str] = rx.field(CHECKING)
    address: rx.Field[str] = rx.field("")  # partly masked
    working: rx.Field[bool] = rx.field(False)

    _link_key: str = ""
    _issued_at: datetime | None = None  # a confirmation link's date: only the latest one confirms

    def _token(self) -> str:
        return self.router.url.query_parameters.get(TOKEN_PARAM, "")

    def _done(self) -> bool:
        """The page was reached by the button's plain POST (``?done=1``): it says what the press did."""
        return self.router.url.query_parameters.get(DONE_PARAM, "") == "1"

    async def _admitted(self, action: str, press: bool = False) -> bool:
        """Within the visitor's limits (per tab and per address), else the page says to wait; ``press`` keeps
        the tab's state as long as Reflex keeps any (web/tab_states.py)."""
        session = self.router.session
        if await submits.shared_limiter.get().allow(action, session.client_token, session.client_ip):
            if press:
                await tab_states.engage(session.client_token)
            return True
        self.stage = LIMITED
        return False

    async def _open(self, action: str, view: Callable[[str, bool], Awaitable[LinkView]]) -> None:
        """On every visit: read the link (``view``, the page's); nothing changes yet."""
        self.working = False
        self._link_key = ""
        if await self._admitted(action):
            self._show(await view(self._token(), self._done()))

    async def _press(self, action: str, press: Callable[[LinkView], Awaitable[LinkView]]) -> AsyncIterator[None]:
        """The button, pressed while the app is connected: ``press`` (the page's), shown working meanwhile."""
        if self.stage != ASK or self.working or not await self._admitted(action, press=True):
            return
        self.working = True
        yield
        try:
            view = await press(LinkView(ASK, link_key=self._link_key, issued_at=self._issued_at))
        finally:
            self.working = False
        self._show(view)

    def _show(self, view: LinkView) -> None:
        self.stage = view.stage
        self._link_key = view.link_key
        self._issued_at = view.issued_at
        self.address = view.address
