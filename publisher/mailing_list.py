"""The list kept by this site, as a visitor or a link changes it, and the contact message taken in: each change
is one transaction with the email it owes, then wakes the sender, so no answer waits for SMTP."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import sqlalchemy
from reflex_base import constants
from reflex_base.environment import environment

from publisher.config import settings
from publisher.config.settings import DEFAULT_GATEWAY_TIMEOUT_S, Settings
from publisher.content.form_copy import contact_subject, full_name
from publisher.mail import outbox
from publisher.rules import form_fields
from publisher.storage import database, subscribers, tables
from publisher.storage.subscribers import LinkResult, SignUp

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ListUnavailable(Exception):
    """The list's database did not answer (or has no tables yet); the caller shows its clear page."""


async def _in_thread(change: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(change)
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error(
            "The list's database did not answer: %s (is the database up, and did `publisher-gateway migrate` run?)",
            type(exc).__name__,
        )
        raise ListUnavailable(type(exc).__name__) from None


def _job(mail: Settings | None) -> tables.Job | None:
    """None where the site sends no email (no SMTP)."""
    return outbox.job_for(mail) if mail is not None else None


async def lookup(link_key: str) -> tables.Subscriber | None:
    return await _in_thread(functools.partial(subscribers.lookup, link_key))


async def confirm(
    link_key: str, issued_at: datetime | None, mail: Settings, db_url: str | None = None
) -> LinkResult | None:
    """The welcome email, and the publisher's notice when asked for; None: an address the list no longer has."""
    notice = _job(mail) if mail.notify_subscribers else None
    change = functools.partial(subscribers.confirm, link_key, _job(mail), notice, db_url, issued_at=issued_at)
    result = await _in_thread(change)
    outbox.wake()
    return result


async def unsubscribe(link_key: str, *, one_click: bool) -> LinkResult | None:
    how = subscribers.BY_ONE_CLICK if one_click else subscribers.BY_UNSUBSCRIBE_PAGE
    return await _in_thread(functools.partial(subscribers.unsubscribe, link_key, how))


@dataclass(frozen=True)
class EmbeddedList:
    """Called in-process after the forms' checks, so no request skips the anti-spam; ``mail`` None: store only."""

    mail: Settings | None
    db_url: str | None = None
    timeout_s: float = DEFAULT_GATEWAY_TIMEOUT_S

    async def subscribe(self, values: Mapping[str, str]) -> None:
        """What it did goes no further: the form never tells who is on the list."""
        sign_up = SignUp(
            email=values[form_fields.EMAIL.name],
            name=values[form_fields.NAME.name],
            more=form_fields.SUBSCRIBE.stored(values),
        )
        await self._within_timeout(
            "subscribe", functools.partial(subscribers.subscribe, sign_up, _job(self.mail), self.db_url)
        )

    async def wait(self, values: Mapping[str, str], book_slug: str) -> None:
        sign_up = SignUp(email=values[form_fields.EMAIL.name], name="")
        join = values.get(form_fields.JOIN_LIST.name) == form_fields.TICKED
        change = functools.partial(subscribers.wait, sign_up, book_slug, join, _job(self.mail), self.db_url)
        await self._within_timeout("wait", change)

    async def send_email(self, values: Mapping[str, str]) -> None:
        sender = full_name(values[form_fields.FIRST_NAME.name], values[form_fields.LAST_NAME.name])
        body = tables.ContactMessage(
            sender_name=sender,
            sender_email=values[form_fields.EMAIL.name],
            subject=contact_subject(sender),
            message=values[form_fields.MESSAGE.name],
        )
        await self._within_timeout(
            "send-email", functools.partial(tables.store_message, body, self.db_url, _job(self.mail))
        )

    async def _within_timeout(self, call: str, change: Callable[[], object]) -> None:
        try:
            async with asyncio.timeout(self.timeout_s):
                await _in_thread(change)
        except TimeoutError:
            logger.warning("The embedded gateway's %s timed out after %g s", call, self.timeout_s)
            raise ListUnavailable(f"timed out after {self.timeout_s:g} s") from None
        outbox.wake()


def migrate_on_development_start() -> None:
    """`reflex run` on a fresh clone (``publisher-serve`` migrates before its workers start)."""
    if environment.REFLEX_ENV_MODE.get() != constants.Env.DEV or settings.current().gateway_url is not None:
        return
    try:
        database.migrate()
    except database.DatabaseUnavailable as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", exc)  # password hidden
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", type(exc).__name__)
