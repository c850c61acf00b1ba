"""Runtime configuration, read from the environment in one place and checked at start-up."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit


class ConfigurationError(RuntimeError):
    """A setting is missing or malformed; the message names the variable."""


def _absolute_http_url(name: str, value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{name} must be an absolute http(s) URL such as https://www.example.com, got {value!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must not contain a query or fragment, got {value!r}")
    return value.strip().rstrip("/")


def site_url() -> str:
    """The public address of the site, without a trailing slash.

    It is Reflex's ``deploy_url`` (``REFLEX_DEPLOY_URL`` in the environment), so the
    sitemap Reflex writes and our canonical links can never disagree.
    """
    from reflex_base.config import get_config

    return _absolute_http_url("REFLEX_DEPLOY_URL (deploy_url)", get_config().deploy_url or "")


GATEWAY_URL_VAR = "PUBLISHER_GATEWAY_URL"
GATEWAY_API_KEY_VAR = "PUBLISHER_GATEWAY_API_KEY"


def gateway_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The cloud API gateway's base URL (scheme and host), or None when unset.

    A malformed value stops start-up with an error naming the variable.
    """
    env = os.environ if environ is None else environ
    value = env.get(GATEWAY_URL_VAR, "").strip()
    if not value:
        return None
    url = _absolute_http_url(GATEWAY_URL_VAR, value)
    if urlsplit(url).path not in ("", "/"):
        raise ConfigurationError(
            f"{GATEWAY_URL_VAR} must be only a scheme and host such as "
            f"https://abc123.execute-api.us-east-1.amazonaws.com, got {value!r}"
        )
    return url


def gateway_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """Sent as x-api-key when set, so the cloud gateway can accept only this site."""
    env = os.environ if environ is None else environ
    return env.get(GATEWAY_API_KEY_VAR, "").strip() or None


RATE_LIMIT_CLIENT_VAR = "PUBLISHER_RATE_LIMIT_CLIENT"
RATE_LIMIT_ADDRESS_VAR = "PUBLISHER_RATE_LIMIT_ADDRESS"


def _attempts_per_window(name: str, value: str) -> tuple[int, int]:
    attempts, _, window = value.partition("/")
    if not (attempts.strip().isdigit() and window.strip().isdigit() and int(attempts) > 0 and int(window) > 0):
        raise ConfigurationError(f"{name} must look like ATTEMPTS/SECONDS, e.g. 8/600, got {value!r}")
    return int(attempts), int(window)


def rate_limits(environ: Mapping[str, str] | None = None) -> dict[str, tuple[int, int] | None]:
    """Overrides of the per-client and per-address submission limits, as (attempts, seconds)."""
    env = os.environ if environ is None else environ
    return {
        scope: _attempts_per_window(var, env[var].strip()) if env.get(var, "").strip() else None
        for scope, var in (("client", RATE_LIMIT_CLIENT_VAR), ("address", RATE_LIMIT_ADDRESS_VAR))
    }


GATEWAY_TIMEOUT_VAR = "PUBLISHER_GATEWAY_TIMEOUT_S"
DEFAULT_GATEWAY_TIMEOUT_S = 10.0


def gateway_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """Total time allowed for one gateway call (connect, send, answer), in seconds."""
    env = os.environ if environ is None else environ
    value = env.get(GATEWAY_TIMEOUT_VAR, "").strip()
    if not value:
        return DEFAULT_GATEWAY_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 60:
        raise ConfigurationError(f"{GATEWAY_TIMEOUT_VAR} must be a number of seconds between 0 and 60, got {value!r}")
    return seconds
