"""The confirmation page; ``confirm_view`` and ``confirm_press`` decide for the app and for the page's
plain POST alike (server/link_pages.py)."""

from __future__ import annotations

import reflex as rx

from publisher import mailing_list
from publisher.config import settings
from publisher.rules import list_links
from publisher.rules.list_rules import ListStatus, is_latest_confirmation
from publisher.storage import tables
from publisher.web.states.list_link_state import (
    ALREADY,
    ASK,
    DONE,
    EXPIRED,
    INVALID,
    LEFT,
    REPLACED,
    UNAVAILABLE,
    LinkView,
    ListLinkState,
    list_secrets,
)

ACTION = "confirm"  # the limiter's name for opening and pressing, for the app and the plain POST alike
_AFTER = {"confirmed": DONE, "already confirmed": ALREADY, ListStatus.UNSUBSCRIBED: LEFT, "replaced": REPLACED}


async def confirm_view(token: str, done: bool = False) -> LinkView:
    """What a confirmation link leads to; nothing changes. ``done``: the page after the button's
    plain POST, where a confirmed address reads "You are on the list" rather than "already"."""
    claim = list_links.read_confirm_token(list_secrets(), token, tables.utc_now())
    if claim is None:
        return LinkView(INVALID)
    try:
        row = await mailing_list.lookup(claim.link_key)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    if row is None:
        return LinkView(INVALID)
    if row.status == ListStatus.CONFIRMED:
        return LinkView(DONE if done else ALREADY, row.email)
    if row.status in ListStatus.GONE:  # left, complained or bounced: only a new sign-up brings it back
        return LinkView(LEFT, row.email)
    if claim.expired:
        return LinkView(EXPIRED, row.email)
    if not is_latest_confirmation(claim.issued_at, row.confirmation_sent_at, row.subscribed_at):
        return LinkView(REPLACED, row.email)  # a newer confirmation was sent since: only its link confirms
    return LinkView(ASK, row.email, claim.link_key, claim.issued_at)


async def confirm_press(view: LinkView) -> LinkView:
    """ "Confirm my subscription": the address joins, and the welcome email is queued (once: a second
    press finds it confirmed). Anything but a view that asks for the press changes nothing."""
    mail = settings.mail_settings()
    if view.stage != ASK or mail is None:
        return view
    try:
        result = await mailing_list.confirm(view.link_key, view.issued_at, mail)
    except mailing_list.ListUnavailable:
        return LinkView(UNAVAILABLE)
    if result is None:
        return LinkView(INVALID)
    return LinkView(_AFTER[result.outcome], result.email)


class ConfirmState(ListLinkState, rx.State):
    @rx.event
    async def open(self):
        await self._open(ACTION, confirm_view)

    @rx.event
    async def confirm(self):
        if settings.mail_settings() is not None:  # a site that sends no email confirms nobody
            async for _ in self._press(ACTION, confirm_press):
                yield
