"""Runtime configuration, read from the environment in one place and checked at start-up."""

from __future__ import annotations

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
