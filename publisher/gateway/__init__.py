"""The site's gateway (docs/product.md, The gateway): where the forms' accepted submits go, the
cloud one (client.py) or the embedded one (mailing_list.EmbeddedList); this module chooses."""

from __future__ import annotations

from publisher import mailing_list
from publisher.config import settings
from publisher.gateway.client import GatewayClient
from publisher.gateway.contract import Gateway, GatewayError
from publisher.per_process import PerProcess

__all__ = ["Gateway", "GatewayClient", "GatewayError", "configured_gateway", "shared_gateway"]


def configured_gateway() -> Gateway:
    """The cloud gateway when ``PUBLISHER_GATEWAY_URL`` is set, else the embedded one."""
    url = settings.gateway_url()
    timeout_s = settings.gateway_timeout_s()
    if url:
        return GatewayClient(base_url=url, api_key=settings.gateway_api_key(), timeout_s=timeout_s)
    return mailing_list.EmbeddedList(mail=settings.mail_settings(), timeout_s=timeout_s)


# One gateway per process, so connections to the cloud gateway are reused.
shared_gateway: PerProcess[Gateway] = PerProcess(configured_gateway)
