"""The unsubscribe page: an unsubscribe link opened, the address shown, removed on the press.

A mail provider's one-click request (RFC 8058) does not come here: it is a POST
to the same address, answered by server/list_links.py.
"""

from __future__ import annotations

import reflex as rx

from publisher.rules import list_links
from publisher.rules.list_rules import ListStatus
from publisher.storage import subscribers
from publisher.web.states.list_link import (
    ASK,
    DONE,
    INVALID,
    UNAVAILABLE,
    ListLinkState,
    StorageAway,
    in_thread,
    list_secrets,
)


class UnsubscribeState(ListLinkState, rx.State):
    @rx.event
    async def open(self):
        """On every visit: read the link; nothing changes yet."""
        self.working = False
        self._link_key = ""
        if not await self._admitted("unsubscribe"):
            return
        link_key = list_links.read_unsubscribe_token(list_secrets(), self._token())
        if link_key is None:
            self._show(INVALID)
            return
        try:
            row = await in_thread(subscribers.lookup, link_key)
        except StorageAway:
            self._show(UNAVAILABLE)
            return
        if row is None:
            self._show(INVALID)
        elif row.status == ListStatus.UNSUBSCRIBED:
            self._show(DONE, row.email)
        else:
            self._link_key = link_key
            self._show(ASK, row.email)

    @rx.event
    async def unsubscribe(self):
        """ "Unsubscribe": the address leaves the list at once."""
        if self.stage != ASK or self.working:
            return
        if not await self._admitted("unsubscribe", press=True):
            return
        self.working = True
        yield
        try:
            result = await in_thread(subscribers.unsubscribe, self._link_key, subscribers.BY_UNSUBSCRIBE_PAGE)
        except StorageAway:
            self._show(UNAVAILABLE)
            return
        finally:
            self.working = False
        self._show(INVALID if result is None else DONE, None if result is None else result.email)
