"""The link pages: opening a link changes nothing (mail scanners open every link); ``*_view`` and ``*_press``
serve the app and the plain POST alike (server/link_pages.py). The link key stays in backend-only state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import reflex as rx

from publisher import mailing_list
from publisher.config import settings
from publisher.limits import submits, tabs
from publisher.rules import list_rules
from publisher.rules.list_rules import DONE_PARAM, TOKEN_PARAM, ListStatus, is_latest_confirmation, mask_address
from publisher.storage import tables

CHECKING = "checking"  # the prerendered page, until the app has read the link
ASK = "ask"
DONE = "done"
# A confirmation link of an address that only waits for a book: confirming it joins no list, sends no welcome.
ASK_WAIT = "ask-wait"
DONE_WAIT = "done-wait"
PRESSABLE = (ASK, ASK_WAIT)
ALREADY = "already"
EXPIRED = "expired"
REPLACED = "replaced"  # a confirmation link older than the latest one sent to the address
LEFT = "left"
INVALID = "invalid"
LIMITED = "limited"
UNAVAILABLE = "unavailable"


# A link that leads nowhere is 404, an expired confirmation 410: nothing treats them as pages that exist.
HTTP_STATUS = {INVALID: 404, EXPIRED: 410, LIMITED: 429, UNAVAILABLE: 503}


@dataclass(frozen=True)
class LinkView:
    stage: str
    email: str | None = None  # shown partly masked
    link_key: str = ""  # set when the button may act (PRESSABLE stages)
    issued_at: datetime | None = None  # a confirmation link's date: only the latest one confirms

    @property
    def address(self) -> str:
        return mask_address(self.email) if self.email else ""

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.stage, 200)


def list_secrets() -> tuple[str, ...]:
    """None where this site does not keep the list (cloud gateway, no SMTP)."""
    mail = settings.current().mail if settings.current().list_emails_on else None
    return mail.list_secrets if mail is not None else ()


class ListLinkState(rx.State, mixin=True):
    stage: rx.Field[str] = rx.field(CHECKING)
    address: rx.Field[str] = rx.field("")  # partly masked
    working: rx.Field[bool] = rx.field(False)

    _link_key: str = ""
    _issued_at: datetime | None = None  # a confirmation link's date: only the latest one confirms

    async def _admitted(self, action: str, press: bool = False) -> bool:
        """A ``press`` keeps the tab's state Reflex's time."""
        session = self.router.session
        if await submits.shared_limiter.get().allow(action, session.client_token, session.client_ip):
            if press:
                await tabs.engage(session.client_token)
            return True
        self.stage = LIMITED
        return False

    async def _open(self, action: str, view: Callable[[str, bool], Awaitable[LinkView]]) -> None:
        """Nothing changes yet. ``?done=1``: reached by the button's plain POST, the page says what it did."""
        self.working = False
        self._link_key = ""
        if await self._admitted(action):
            query = self.router.url.query_parameters
            self._show(await view(query.get(TOKEN_PARAM, ""), query.get(DONE_PARAM, "") == "1"))

    async def _press(self, action: str, press: Callable[[LinkView], Awaitable[LinkView]]) -> AsyncIterator[None]:
        if self.stage not in PRESSABLE or self.working or not await self._admitted(action, press=True):
            return
        self.working = True
        yield
        try:
            view = await press(LinkView(self.stage, link_key=self._link_key, issued_at=self._issued_at))
        finally:
            self.working = False
        self._show(view)

    def _show(self, view: LinkView) -> None:
        self.stage = view.stage
        self._link_key = view.link_key
        self._issued_at = view.issued_at
        self.address = view.address


CONFIRM_ACTION = "confirm"  # the limiter's name for opening and pressing, for the app and the plain POST alike
_AFTER = {"confirmed": DONE, "already confirmed": ALREADY, ListStatus.UNSUBSCRIBED: LEFT, "replaced": REPLACED}


async def confirm_view(token: str, done: bool = False) -> LinkView:
    claim = list_rules.read_confirm_token(list_secrets(), token, tables.utc_now())
    if claim is None:
        return LinkView(INVALID)
    try:
        row = await mailing_list.lookup(claim.link_key)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    if row is None:
        return LinkView(INVALID)
    waits_only = row.book_updates == tables.WAITLIST_ONLY
    if row.status == ListStatus.CONFIRMED and row.book_updates != tables.ASKED_TO_JOIN:  # asked: to join the list
        return LinkView((DONE_WAIT if waits_only else DONE) if done else ALREADY, row.email)
    if row.status in ListStatus.GONE:  # left, complained or bounced: only a new sign-up brings it back
        return LinkView(LEFT, row.email)
    if claim.expired:
        return LinkView(EXPIRED, row.email)
    if not is_latest_confirmation(claim.issued_at, row.confirmation_sent_at, row.subscribed_at):
        return LinkView(REPLACED, row.email)  # a newer confirmation was sent since: only its link confirms
    return LinkView(ASK_WAIT if waits_only else ASK, row.email, claim.link_key, claim.issued_at)


async def confirm_press(view: LinkView) -> LinkView:
    mail = settings.current().mail
    if view.stage not in PRESSABLE or mail is None:
        return view
    try:
        result = await mailing_list.confirm(view.link_key, view.issued_at, mail)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    if result is None:
        return LinkView(INVALID)
    after = _AFTER[result.outcome]
    return LinkView(DONE_WAIT if (after, view.stage) == (DONE, ASK_WAIT) else after, result.email)


class ConfirmState(ListLinkState, rx.State):
    @rx.event
    async def open(self):
        await self._open(CONFIRM_ACTION, confirm_view)

    @rx.event
    async def confirm(self):
        if settings.current().mail is not None:  # a site that sends no email confirms nobody
            async for _ in self._press(CONFIRM_ACTION, confirm_press):
                yield


UNSUBSCRIBE_ACTION = "unsubscribe"  # the limiter's name for opening and pressing, for the app and the plain POST alike


async def unsubscribe_view(token: str, done: bool = False) -> LinkView:
    link_key = list_rules.read_unsubscribe_token(list_secrets(), token)
    if link_key is None:
        return LinkView(INVALID)
    try:
        row = await mailing_list.lookup(link_key)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    if row is None:
        return LinkView(INVALID)
    if row.status == ListStatus.UNSUBSCRIBED:
        return LinkView(DONE, row.email)
    return LinkView(ASK, row.email, link_key)


async def unsubscribe_press(view: LinkView) -> LinkView:
    if view.stage != ASK:
        return view
    try:
        result = await mailing_list.unsubscribe(view.link_key, one_click=False)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    return LinkView(INVALID) if result is None else LinkView(DONE, result.email)


class UnsubscribeState(ListLinkState, rx.State):
    @rx.event
    async def open(self):
        await self._open(UNSUBSCRIBE_ACTION, unsubscribe_view)

    @rx.event
    async def unsubscribe(self):
        async for _ in self._press(UNSUBSCRIBE_ACTION, unsubscribe_press):
            yield
