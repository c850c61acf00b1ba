"""The unsubscribe page; ``unsubscribe_view`` and ``unsubscribe_press`` decide for the app and for the
page's plain POST alike (server/link_pages.py), where a provider's one-click is told apart by its body."""

from __future__ import annotations

import reflex as rx

from publisher import mailing_list
from publisher.rules import list_links
from publisher.rules.list_rules import ListStatus
from publisher.web.states.list_link_state import (
    ASK,
    DONE,
    INVALID,
    UNAVAILABLE,
    LinkView,
    ListLinkState,
    list_secrets,
)

ACTION = "unsubscribe"  # the limiter's name for opening and pressing, for the app and the plain POST alike


async def unsubscribe_view(token: str, done: bool = False) -> LinkView:
    """What an unsubscribe link leads to; nothing changes. (``done`` changes nothing here: an
    address that left reads "You have been unsubscribed" either way.)"""
    link_key = list_links.read_unsubscribe_token(list_secrets(), token)
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
    """ "Unsubscribe": the address leaves the list at once. Anything but a view that asks for the
    press changes nothing."""
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
        await self._open(ACTION, unsubscribe_view)

    @rx.event
    async def unsubscribe(self):
        async for _ in self._press(ACTION, unsubscribe_press):
            yield
