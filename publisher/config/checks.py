"""Checks the settings share: each returns the value it accepts, or raises ConfigurationError naming the variable."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

from publisher.config.secret_files import ConfigurationError


def absolute_http_url(name: str, value: str) -> str:
    """An absolute http(s) URL without a query, fragment or trailing slash."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{name} must be an absolute http(s) URL such as https://www.example.com, got {value!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must not contain a query or fragment, got {value!r}")
    return value.strip().rstrip("/")


def signing_secrets(name: str, value: str, minimum: int) -> tuple[str, ...]:
    """Secrets separated by spaces (the first signs, all are accepted: one can be replaced without
    breaking what the old one signed), each at least ``minimum`` characters; never shown."""
    secrets = tuple(value.split())
    if any(len(secret) < minimum for secret in secrets):
        raise ConfigurationError(
            f"{name} must be at least {minimum} characters (several: separated by spaces, the first signs); "
            "got a shorter one"
        )
    return secrets


def positive_count(name: str, value: str, default: int) -> int:
    """A whole number of at least 1; ``default`` when the value is empty."""
    if not value.strip():
        return default
    if not value.strip().isdigit() or int(value) < 1:
        raise ConfigurationError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


def ca_file(name: str, value: str) -> str | None:
    """A readable PEM file of extra certificates to trust (a server with its own CA); None when empty."""
    if not value:
        return None
    try:
        ssl.create_default_context().load_verify_locations(cafile=value)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(
            f"{name} must be a readable PEM file of certificates to trust, got {value!r} ({exc})"
        ) from None
    return value


def bounded_number(value: str, default: float, within: Callable[[float], bool], refusal: str, unit: str = "") -> float:
    """A number ``within`` accepts, ``unit`` (``%``) after it or not; ``default`` when the value
    is empty; else ConfigurationError(refusal)."""
    if not value.strip():
        return default
    try:
        number = float(value.strip().removesuffix(unit) if unit else value)
    except ValueError:
        raise ConfigurationError(refusal) from None
    if not within(number):
        raise ConfigurationError(refusal)
    return number
