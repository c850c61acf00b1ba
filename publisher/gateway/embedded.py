"""The embedded gateway: the cloud gateway's two calls kept by this site (no PUBLISHER_GATEWAY_URL).

It has no route: the forms call it in-process after their checks, so no request skips the anti-spam."""

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
    """`reflex run` on a fresh clone: the tables exist before the first submit (development server
    only; ``publisher-serve`` migrates once before its workers start)."""
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
    """Each call one transaction of the list, in this process; ``mail`` None: store only. A call past
    ``timeout_s`` or a database that does not answer is a GatewayError."""

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
