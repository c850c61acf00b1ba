"""The confirmation page: a confirmation link opened, the address shown, confirmed on the press."""

from __future__ import annotations

import functools
from datetime import datetime

import reflex as rx

from publisher import storage
from publisher.config import settings
from publisher.mail import outbox
from publisher.rules import list_links
from publisher.rules.list_rules import ListStatus
from publisher.storage import subscribers
from publisher.web.states.list_link import (
    ALREADY,
    ASK,
    DONE,
    EXPIRED,
    INVALID,
    LEFT,
    REPLACED,
    UNAVAILABLE,
    ListLinkState,
    StorageAway,
    in_thread,
    list_secrets,
)

_AFTER = {"confirmed": DONE, "already confirmed": ALREADY, ListStatus.UNSUBSCRIBED: LEFT, "replaced": REPLACED}


class ConfirmState(ListLinkState, rx.State):
    _issued_at: datetime | None = None  # the link's date: only the latest confirmation's link confirms

    @rx.event
    async def open(self):
        """On every visit: read the link; nothing changes yet."""
        self.working = False
        self._link_key = ""
        if not await self._admitted("confirm"):
            return
        claim = list_links.read_confirm_token(list_secrets(), self._token(), storage.utc_now())
        if claim is None:
            self._show(INVALID)
            return
        try:
            row = await in_thread(subscribers.lookup, claim.link_key)
        except StorageAway:
            self._show(UNAVAILABLE)
            return
        if row is None:
            self._show(INVALID)
        elif row.status == ListStatus.CONFIRMED:
            self._show(ALREADY, row.email)
        elif row.status in ListStatus.GONE:  # left, complained or bounced: only a new sign-up brings it back
            self._show(LEFT, row.email)
        elif claim.expired:
            self._show(EXPIRED, row.email)
        elif not subscribers.is_latest_confirmation(row, claim.issued_at):
            self._show(REPLACED, row.email)  # a newer confirmation was sent since: only its link confirms
        else:
            self._link_key = claim.link_key
            self._issued_at = claim.issued_at
            self._show(ASK, row.email)

    @rx.event
    async def confirm(self):
        """ "Confirm my subscription": the address joins, and the welcome email is queued."""
        mail = settings.mail_settings()
        if self.stage != ASK or self.working or mail is None:
            return
        if not await self._admitted("confirm", press=True):
            return
        self.working = True
        yield
        notice = outbox.job_for(mail) if mail.notify_subscribers else None
        try:
            result = await in_thread(
                functools.partial(subscribers.confirm, issued_at=self._issued_at),
                self._link_key,
                outbox.job_for(mail),
                notice,
            )
        except StorageAway:
            self._show(UNAVAILABLE)
            return
        finally:
            self.working = False
        if result is None:
            self._show(INVALID)
            return
        outbox.wake()
        self._show(_AFTER[result.outcome], result.email)
