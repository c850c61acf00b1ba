"""The cloud gateway (docs/product.md, The gateway): the publisher's API over HTTP. A timeout bounds the
whole call, not each read; a request is retried only when the connection could not be opened at all,
so the gateway cannot have seen it: a message is never sent twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from publisher.config.settings import DEFAULT_GATEWAY_TIMEOUT_S
from publisher.gateway.contract import SEND_EMAIL_PATH, SUBSCRIBE_PATH, GatewayError, contact_body, subscribe_body

logger = logging.getLogger(__name__)

API_KEY_HEADER = "x-api-key"
CONNECT_ATTEMPTS = 3
CONNECT_RETRY_DELAY_S = 0.2


@dataclass
class GatewayClient:
    """Posts to the cloud gateway. ``transport``: httpx's own unless a test records the requests."""

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
        return GatewayError(f"POST {path}", cause)

    async def subscribe(self, values: Mapping[str, str]) -> None:
        """``values``: the subscribe form's fields by name, as checked (rules/form_fields.py)."""
        await self.post(SUBSCRIBE_PATH, subscribe_body(values))

    async def send_email(self, values: Mapping[str, str]) -> None:
        """``values``: the contact form's fields by name, as checked (rules/form_fields.py)."""
        await self.post(SEND_EMAIL_PATH, contact_body(values))
