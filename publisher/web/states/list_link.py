"""What the confirmation and unsubscribe pages share: a link from an email, checked, then a button.

Opening a link changes nothing: mail scanners open every link they see. The page
(its ``on_load``) reads the token from the address bar, checks its signature and
finds the address, then shows it partly masked with a button; only pressing the
button acts. The link key stays in backend-only state. Opening and pressing
count against the visitor's limits, as the forms' submits do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import reflex as rx
import sqlalchemy

from publisher.config import settings
from publisher.limits import submits
from publisher.rules.list_links import TOKEN_PARAM, mask_address
from publisher.web import tab_states

logger = logging.getLogger(__name__)

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


class StorageAway(Exception):
    """The list's database did not answer; the page says to try again."""


def list_secrets() -> tuple[str, ...]:
    """The secrets that sign the links; none where this site does not keep the list (cloud gateway, no SMTP)."""
    mail = settings.mail_settings() if settings.list_emails_on() else None
    return mail.list_secrets if mail is not None else ()


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """A database call off the event loop; StorageAway when the database is away."""
    try:
        return await asyncio.to_thread(function, *args)
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.warning("List link: the database is unavailable (%s)", type(exc).__name__)
        raise StorageAway from None


class ListLinkState(rx.State, mixin=True):
    stage: rx.Field[str] = rx.field(CHECKING)
    address: rx.Field[str] = rx.field("")  # partly masked
    working: rx.Field[bool] = rx.field(False)

    _link_key: str = ""

    def _token(self) -> str:
        return self.router.url.query_parameters.get(TOKEN_PARAM, "")

    async def _admitted(self, action: str, press: bool = False) -> bool:
        """Within the visitor's limits (per tab and per address); else the page says to wait.

        ``press``: the visitor pressed the page's button, so the tab's state is kept
        as long as Reflex keeps any (web/tab_states.py).
        """
        session = self.router.session
        if await submits.shared_limiter.get().allow(action, session.client_token, session.client_ip):
            if press:
                await tab_states.engage(session.client_token)
            return True
        self.stage = LIMITED
        return False

    def _show(self, stage: str, email: str | None = None) -> None:
        self.stage = stage
        if email is not None:
            self.address = mask_address(email)
