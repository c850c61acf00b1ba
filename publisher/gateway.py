"""The site's gateway (docs/product.md, The gateway): where the forms' accepted submits go, the cloud one over
HTTP or the embedded one (mailing_list.EmbeddedList). A cloud call's timeout bounds the whole call; it is
retried only when the connection could not be opened at all, so a message is never sent twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from publisher import mailing_list
from publisher.config import settings
from publisher.config.settings import DEFAULT_GATEWAY_TIMEOUT_S, PerProcess
from publisher.content.form_copy import contact_subject, full_name
from publisher.rules.form_fields import EMAIL, FIRST_NAME, LAST_NAME, MESSAGE

logger = logging.getLogger(__name__)

SUBSCRIBE_PATH = "/prod/subscribe"
SEND_EMAIL_PATH = "/prod/send-email"
API_KEY_HEADER = "x-api-key"
CONNECT_ATTEMPTS = 3
CONNECT_RETRY_DELAY_S = 0.2
# The contact form's fields the product's body puts in its own shape (sender, subject, message).
_CONTACT_SHAPED = frozenset({FIRST_NAME.name, LAST_NAME.name, EMAIL.name, MESSAGE.name})


class GatewayError(Exception):
    """The gateway did not take the request; ``cause`` says why, for the server log (already logged)."""

    def __init__(self, call: str, cause: str):
        super().__init__(f"{call} failed: {cause}")
        self.cause = cause


def contact_body(values: Mapping[str, str]) -> dict[str, Any]:
    """A field beyond the product's shape goes by its name."""
    sender = full_name(values[FIRST_NAME.name], values[LAST_NAME.name])
    return {
        "sender": {"name": sender, "email": values[EMAIL.name]},
        "subject": contact_subject(sender),
        "message": values[MESSAGE.name],
        **{name: value for name, value in values.items() if name not in _CONTACT_SHAPED},
    }


@dataclass
class GatewayClient:
    """``transport``: httpx's own unless a test records the requests."""

    base_url: str
    api_key: str | None = None
    timeout_s: float = DEFAULT_GATEWAY_TIMEOUT_S
    transport: httpx.AsyncBaseTransport | None = None
    connect_attempts: int = CONNECT_ATTEMPTS
    _client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers[API_KEY_HEADER] = self.api_key
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers=headers,
                timeout=httpx.Timeout(self.timeout_s),
                transport=self.transport,
                follow_redirects=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def post(self, path: str, body: dict[str, Any]) -> None:
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._post_once_connected(path, body)
        except (TimeoutError, httpx.TimeoutException):
            raise self._failure(path, f"timed out after {self.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise self._failure(path, f"network error: {type(exc).__name__}") from None
        if not response.is_success:
            raise self._failure(path, f"status {response.status_code}")

    async def _post_once_connected(self, path: str, body: dict[str, Any]) -> httpx.Response:
        for attempt in range(1, self.connect_attempts + 1):
            try:
                return await self._http().post(path, json=body)
            except httpx.ConnectError:
                # The connection was never opened, so the gateway saw nothing: safe to retry.
                if attempt == self.connect_attempts:
                    raise
                await asyncio.sleep(CONNECT_RETRY_DELAY_S * attempt)
        raise AssertionError("unreachable")

    @staticmethod
    def _failure(path: str, cause: str) -> GatewayError:
        # Never log the body (the visitor's message) or the API key.
        logger.warning("Gateway call POST %s failed: %s", path, cause)
        return GatewayError(f"POST {path}", cause)

    async def subscribe(self, values: Mapping[str, str]) -> None:
        """``values``: the subscribe form's checked fields by name (rules/form_fields.py), and ``book_updates``."""
        await self.post(SUBSCRIBE_PATH, {**values, "book_updates": "yes"})

    async def send_email(self, values: Mapping[str, str]) -> None:
        await self.post(SEND_EMAIL_PATH, contact_body(values))

    async def wait(self, values: Mapping[str, str], book_slug: str) -> None:
        """The cloud API keeps no waitlist (docs/mailing-list.md: it needs the embedded gateway)."""
        raise self._failure(f"waitlist {book_slug}", "the cloud gateway keeps no waitlist: unset PUBLISHER_GATEWAY_URL")


# Each returns once the gateway has taken the request, or raises GatewayError (the embedded list:
# ListUnavailable): the form's failure message.
Gateway = GatewayClient | mailing_list.EmbeddedList


def configured_gateway() -> Gateway:
    values = settings.current()
    if values.gateway_url:
        return GatewayClient(values.gateway_url, values.gateway_api_key, values.gateway_timeout_s)
    return mailing_list.EmbeddedList(mail=values.mail, timeout_s=values.gateway_timeout_s)


# One gateway per process, so connections to the cloud gateway are reused.
shared_gateway: PerProcess[Gateway] = PerProcess(configured_gateway)
