"""The site's gateway (spec section 7): the client the forms call, and the embedded
gateway that stands in for the cloud one when ``PUBLISHER_GATEWAY_URL`` is unset.

- contract.py: the two calls' paths and bodies, from both sides;
- client.py: the HTTP client (the only code that calls a gateway);
- embedded.py: the embedded gateway's ASGI app;
- storage.py: its tables and queries;
- mailer.py and outbox.py: emailing the publisher, durably;
- cli.py: ``publisher-gateway``, the operator's command.
"""

from __future__ import annotations

import httpx

from publisher.gateway.client import GatewayClient, GatewayError

__all__ = ["GatewayClient", "GatewayError", "configured_client", "shared_client", "use_client"]

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
    from publisher.gateway import embedded

    app = embedded.create_app(mail=settings.mail_settings())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
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
