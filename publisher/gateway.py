"""The client for the cloud API gateway (spec section 7): the only module that calls it.

Two JSON POSTs: /prod/subscribe and /prod/send-email. Any non-2xx status, a
timeout (bounded in total, not per read) or a network error is a failure; the
response body is not read beyond that. A message is never sent twice: a request
is retried only when the connection could not be opened at all, so the gateway
cannot have seen it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import httpx

logger = logging.getLogger(__name__)

SUBSCRIBE_PATH = "/prod/subscribe"
SEND_EMAIL_PATH = "/prod/send-email"
API_KEY_HEADER = "x-api-key"
DEFAULT_TIMEOUT_S = 10.0
CONNECT_ATTEMPTS = 3
CONNECT_RETRY_DELAY_S = 0.2


class GatewayError(Exception):
    """The gateway did not accept the request; ``cause`` says why, for the server log."""

    def __init__(self, path: str, cause: str):
        super().__init__(f"POST {path} failed: {cause}")
        self.path = path
        self.cause = cause


def subscribe_body(*, email: str, name: str) -> dict[str, Any]:
    return {"email": email, "name": name, "book_updates": "yes"}


def contact_body(*, first_name: str, last_name: str, email: str, message: str) -> dict[str, Any]:
    full_name = f"{first_name} {last_name}"
    return {
        "sender": {"name": full_name, "email": email},
        "subject": f"Contact Form Submission from {full_name}",
        "message": message,
    }


@dataclass
class GatewayClient:
    """Posts to one gateway. ``transport`` lets the embedded local gateway run in-process."""

    base_url: str
    api_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
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
        """POST ``body`` as JSON; raise GatewayError unless the gateway answers 2xx."""
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
        return GatewayError(path, cause)

    async def subscribe(self, *, email: str, name: str) -> None:
        await self.post(SUBSCRIBE_PATH, subscribe_body(email=email, name=name))

    async def send_email(self, *, first_name: str, last_name: str, email: str, message: str) -> None:
        await self.post(
            SEND_EMAIL_PATH,
            contact_body(first_name=first_name, last_name=last_name, email=email, message=message),
        )


# --- The one client the site uses, chosen from the configuration. ---

LOCAL_GATEWAY_BASE_URL = "http://local-gateway.invalid"

_shared_client: GatewayClient | None = None


def configured_client() -> GatewayClient:
    """The cloud gateway when ``PUBLISHER_GATEWAY_URL`` is set, else the embedded local one.

    The local gateway is reached through an in-process ASGI transport: it has no
    public route, so only this backend (after the forms' checks) can post to it.
    """
    from publisher import settings

    url = settings.gateway_url()
    timeout_s = settings.gateway_timeout_s()
    if url:
        return GatewayClient(base_url=url, api_key=settings.gateway_api_key(), timeout_s=timeout_s)
    from publisher import local_gateway

    transport = httpx.ASGITransport(app=local_gateway.create_app(), raise_app_exceptions=False)
    return GatewayClient(base_url=LOCAL_GATEWAY_BASE_URL, transport=transport, timeout_s=timeout_s)


def shared_client() -> GatewayClient:
    """One client per process, so connections to the gateway are reused."""
    global _shared_client
    if _shared_client is None:
        _shared_client = configured_client()
    return _shared_client


def use_client(client: GatewayClient | None) -> None:
    """Replace the shared client (tests), or forget it so the next call re-reads the settings."""
    global _shared_client
    _shared_client = client
