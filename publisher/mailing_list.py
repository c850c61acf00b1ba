"""The new-release list kept by this site: the one way a reader's place on it changes, and the one
way a contact message is taken in. Each change takes values already checked, is one transaction
with the email it owes, then wakes the sender, so the visitor's answer never waits for SMTP."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

import sqlalchemy

from publisher import storage
from publisher.config.settings import MailSettings
from publisher.mail import outbox
from publisher.rules import form_fields
from publisher.rules.list_rules import ImportRow
from publisher.storage import subscribers
from publisher.storage.subscribers import Erased, ImportReport, LinkResult, SignUp

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ListUnavailable(Exception):
    """The list's database did not answer (or has no tables yet); the caller shows its clear page."""


async def _in_thread(change: Callable[[], T]) -> T:
    """One transaction off the event loop; ListUnavailable, logged with what to check, when it failed."""
    try:
        return await asyncio.to_thread(change)
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error(
            "The list's database did not answer: %s (is the database up, and did `publisher-gateway migrate` run?)",
            type(exc).__name__,
        )
        raise ListUnavailable(type(exc).__name__) from None


def _job(mail: MailSettings | None) -> storage.Job | None:
    """The outbox job an email the site owes is stored with; None where the site sends none (no SMTP)."""
    return outbox.job_for(mail) if mail is not None else None


async def sign_up(values: Mapping[str, str], mail: MailSettings | None, db_url: str | None = None) -> str:
    """The subscribe form's checked values join the list (pending). What it did goes no further than the
    gateway: the visitor sees the same answer either way, so the form never tells who is on the list."""
    outcome = await _in_thread(functools.partial(subscribers.subscribe, _sign_up_of(values), _job(mail), db_url))
    outbox.wake()
    return outcome


def _sign_up_of(values: Mapping[str, str]) -> SignUp:
    """The subscribe form's checked values as the list stores them (rules/form_fields.py)."""
    return SignUp(
        email=values[form_fields.EMAIL.name],
        name=values[form_fields.NAME.name],
        more=form_fields.SUBSCRIBE.stored(values),
    )


async def take_message(
    *, sender_name: str, sender_email: str, subject: str, message: str, mail: MailSettings | None, db_url: str | None
) -> int:
    """The contact form: the message is stored with its email to the publisher; its id."""
    body = storage.ContactBody(sender_name=sender_name, sender_email=sender_email, subject=subject, message=message)
    message_id = await _in_thread(functools.partial(storage.store_message, body, db_url, _job(mail)))
    outbox.wake()
    return message_id


async def lookup(link_key: str, db_url: str | None = None) -> storage.Subscriber | None:
    """The reader a list link names (None: the list no longer has it); nothing changes."""
    return await _in_thread(functools.partial(subscribers.lookup, link_key, db_url))


async def confirm(
    link_key: str, issued_at: datetime | None, mail: MailSettings, db_url: str | None = None
) -> LinkResult | None:
    """The confirmation page's button: the reader joins, with the welcome email (and the publisher's
    notice, when asked for). None: an address the list no longer has. Only the latest link confirms."""
    notice = _job(mail) if mail.notify_subscribers else None
    change = functools.partial(subscribers.confirm, link_key, _job(mail), notice, db_url, issued_at=issued_at)
    result = await _in_thread(change)
    outbox.wake()
    return result


async def unsubscribe(link_key: str, *, one_click: bool, db_url: str | None = None) -> LinkResult | None:
    """The unsubscribe page's button, or a provider's one-click POST: the reader leaves at once. None for
    an address the list does not have."""
    how = subscribers.BY_ONE_CLICK if one_click else subscribers.BY_UNSUBSCRIBE_PAGE
    return await _in_thread(functools.partial(subscribers.unsubscribe, link_key, how, db_url))


def forget(email: str, db_url: str | None = None) -> Erased:
    """The operator's ``forget`` and the dashboard's: everything stored about ``email`` erased."""
    return subscribers.forget(email, db_url)


def import_rows(rows: list[ImportRow], how: str, db_url: str | None = None) -> ImportReport:
    """The operator's ``import``: rows read and checked by rules/list_rules.read_import; no email is sent."""
    return subscribers.import_rows(rows, how, db_url)
