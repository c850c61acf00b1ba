"""The dashboard's state: what the page shows, only while its session is open.

The session is the HttpOnly cookie of the tab's event channel (the browser sent it when the
channel opened; server/admin_sign_in.py set it). **Every** event checks it in the database
before anything is read, so a state event sent by hand without a valid session gets nothing,
and a page left open after a sign-out, a revoke or an expiry (another tab, the command line,
the clock) clears what it shows at its next refresh (every 2 seconds) and offers the sign-in
button again. The refresh itself does not count as the admin doing something (an open page
would never idle out); opening the page does.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import reflex as rx
import sqlalchemy

from publisher.config import settings
from publisher.content import admin_copy
from publisher.limits import tabs
from publisher.rules import admin_access
from publisher.rules.list_rules import ListStatus
from publisher.storage import admins, subscribers

logger = logging.getLogger(__name__)

REFRESH_MS = 2000  # how often an open dashboard refreshes, and notices its session ended
STATUS_LABELS = {
    ListStatus.CONFIRMED: "Confirmed",
    ListStatus.PENDING: "Pending",
    ListStatus.UNSUBSCRIBED: "Unsubscribed",
    ListStatus.BOUNCED: "Bounced",
}


def number(count: int) -> str:
    return f"{count:,}"


class AdminState(rx.State):
    signed_in: rx.Field[bool] = rx.field(False)
    # Whether the page has asked the server yet: until then it shows neither the dashboard nor
    # the sign-in button's absence of one (the prerendered page has the button).
    checked: rx.Field[bool] = rx.field(False)
    admin_name: rx.Field[str] = rx.field("")
    readers: rx.Field[list[dict[str, str]]] = rx.field([])  # [{"label": "Confirmed", "count": "1,234"}]
    problem: rx.Field[str] = rx.field("")
    _watcher: str = ""  # the ``watch`` loop that refreshes this tab (one at a time)

    def _session_hash(self) -> str | None:
        token = admin_access.session_token_from_cookies(self.router.headers.cookie)
        return None if token is None else admin_access.token_hash(token)

    async def _admin(self, touch: bool) -> admins.AdminIdentity | None:
        session_hash = self._session_hash()
        if session_hash is None or not settings.current().dashboard_on:
            return None
        return await asyncio.to_thread(admins.session_admin, session_hash, settings.current().admin_idle, touch=touch)

    def _clear(self) -> None:
        """Nothing of the dashboard stays in the page: signed out, expired or revoked."""
        self.signed_in = False
        self.admin_name = ""
        self.readers = []
        self.problem = ""

    async def _show(self, touch: bool) -> None:
        try:
            admin = await self._admin(touch)
            if admin is None:
                self._clear()
                return
            counts = await asyncio.to_thread(subscribers.status_counts)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.warning("Dashboard: the database is unavailable (%s)", type(exc).__name__)
            self._clear()
            self.problem = admin_copy.TRY_AGAIN_LATER
            return
        finally:
            self.checked = True
        self.signed_in = True
        self.problem = ""
        self.admin_name = admin_copy.SIGNED_IN_AS.format(name=admin.name)
        self.readers = [
            {"label": label, "count": number(counts.get(status, 0))} for status, label in STATUS_LABELS.items()
        ]

    @rx.event
    async def open(self):
        """The page is opened (or reopened): the admin did something. While signed in, the page
        keeps itself fresh (``watch``)."""
        await self._show(touch=True)
        if self.signed_in:
            return AdminState.watch

    @rx.event(background=True)
    async def watch(self):
        """While the page is open and signed in: fresh figures every 2 seconds, and nothing once
        the session ended. The latest page load's loop is the one that runs (a reload starts a
        new one and the old one stops); it stops when the tab closes (its event channel is gone
        from this worker) or the session ends."""
        token = self.router.session.client_token
        gate = tabs.shared_gate.get()
        me = uuid.uuid4().hex
        async with self:
            self._watcher = me
        while True:
            await asyncio.sleep(REFRESH_MS / 1000)
            async with self:
                if self._watcher != me:
                    return  # a newer load of the page watches now
                if not gate.token_open(token):
                    self._watcher = ""
                    return
                await self._show(touch=False)
                if not self.signed_in:
                    self._watcher = ""
                    return
