"""The site's gateway (docs/product.md, The gateway): the client the forms call, and the
embedded gateway that stands in for the cloud one when ``PUBLISHER_GATEWAY_URL`` is unset.

- contract.py: the two calls' paths and bodies, from both sides;
- client.py: the HTTP client (the only code that calls a gateway);
- embedded.py: the embedded gateway's ASGI app;
- this module: the choice between the cloud gateway and the embedded one.

What the embedded gateway stands on lives in the layers below: its database and
tables in storage/ (storage/database.py: the start-up check, migrations under a
lock), emailing the publisher durably in mail/ (mail/mailer.py, mail/outbox.py);
``publisher-gateway``, the operator's command, is cli/main.py.
"""

from __future__ import annotations

import httpx

from publisher.config import settings
from publisher.gateway.client import GatewayClient, GatewayError
from publisher.per_process import PerProcess

__all__ = ["GatewayClient", "GatewayError", "configured_client", "shared_client"]

LOCAL_GATEWAY_BASE_URL = "http://local-gateway.invalid"


def configured_client() -> GatewayClient:
    """The cloud gateway when ``PUBLISHER_GATEWAY_URL`` is set, else the embedded local one.

    The local gateway is reached through an in-process ASGI transport: it has no
    public route, so only this backend (after the forms' checks) can post to it.
    """
    url = settings.gateway_url()
    timeout_s = settings.gateway_timeout_s()
    if url:
        return GatewayClient(base_url=url, api_key=settings.gateway_api_key(), timeout_s=timeout_s)
    # Here, not at the top: the embedded gateway (its storage, SQLAlchemy models, outbox)
    # is loaded only by a site that runs it, never with the cloud gateway.
    from publisher.gateway import embedded  # noqa: PLC0415

    app = embedded.create_app(mail=settings.mail_settings())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return GatewayClient(base_url=LOCAL_GATEWAY_BASE_URL, transport=transport, timeout_s=timeout_s)


# One client per process, so connections to the gateway are reused.
shared_client: PerProcess[GatewayClient] = PerProcess(configured_client)
