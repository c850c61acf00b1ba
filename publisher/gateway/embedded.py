"""The embedded gateway: the same two calls as the cloud API gateway, kept by this site.

Used when ``PUBLISHER_GATEWAY_URL`` is unset, so the site works end to end with nothing else
running. The forms call it directly, in the backend's process, after their checks: it has no
route, so no outside request can skip the forms' anti-spam checks. Each request goes to the
list (publisher/mailing_list.py), which stores it with the email it owes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass

import sqlalchemy
from reflex_base import constants
from reflex_base.environment import environment

from publisher import mailing_list
from publisher.config import settings
from publisher.config.settings import DEFAULT_GATEWAY_TIMEOUT_S, MailSettings
from publisher.gateway.contract import GatewayError, contact_subject, full_name
from publisher.rules.form_fields import EMAIL, FIRST_NAME, LAST_NAME, MESSAGE
from publisher.storage import database

logger = logging.getLogger(__name__)


def migrate_on_development_start() -> None:
    """`reflex run` on a fresh clone: the tables exist before the first submit.

    Development server only (one backend process, migrated again on each reload, a
    no-op when up to date). ``publisher-serve`` migrates once before its workers
    start, and ``make run`` runs ``publisher-gateway migrate`` first anyway.
    """
    if environment.REFLEX_ENV_MODE.get() != constants.Env.DEV or settings.gateway_url() is not None:
        return
    try:
        database.migrate()
    except database.DatabaseUnavailable as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", exc)  # password hidden
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", type(exc).__name__)


@dataclass(frozen=True)
class EmbeddedList:
    """The embedded gateway: each call one transaction of the list, in this process.

    ``mail``: queue the emails each request owes (settings.mail_settings(); None: store only).
    ``db_url``: Reflex's database by default. A call bounded by ``timeout_s`` (like the cloud
    gateway's) or a database that does not answer is a GatewayError: the form's failure message.
    """

    mail: MailSettings | None
    db_url: str | None = None
    timeout_s: float = DEFAULT_GATEWAY_TIMEOUT_S

    async def subscribe(self, values: Mapping[str, str]) -> None:
        await self._taken("subscribe", mailing_list.sign_up(values, self.mail, self.db_url))

    async def send_email(self, values: Mapping[str, str]) -> None:
        sender = full_name(values[FIRST_NAME.name], values[LAST_NAME.name])
        taking = mailing_list.take_message(
            sender_name=sender,
            sender_email=values[EMAIL.name],
            subject=contact_subject(sender),
            message=values[MESSAGE.name],
            mail=self.mail,
            db_url=self.db_url,
        )
        await self._taken("send-email", taking)

    async def _taken(self, call: str, taking: Awaitable[object]) -> None:
        try:
            async with asyncio.timeout(self.timeout_s):
                await taking
        except mailing_list.ListUnavailable as away:  # logged by the list, with what to check
            raise GatewayError(f"the embedded gateway's {call}", f"the database did not answer ({away})") from None
        except TimeoutError:
            logger.warning("The embedded gateway's %s timed out after %g s", call, self.timeout_s)
            raise GatewayError(f"the embedded gateway's {call}", f"timed out after {self.timeout_s:g} s") from None
