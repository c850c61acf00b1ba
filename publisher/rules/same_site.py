"""Whether a request comes from one of the site's own pages: one function, four policies, each as
docs/security.md states it. A plain POST, a passkey ceremony and the event channel carry no session
token, so a page on another site could make a visitor's browser send them."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
SEC_FETCH_SITE, REFERER = "sec-fetch-site", "referer"


@dataclass(frozen=True)
class Policy:
    """What decides when a request has no usable ``Origin``."""

    fallbacks: tuple[str, ...]  # the headers that may stand in for it, in order: SEC_FETCH_SITE, REFERER
    null_falls_back: bool = False  # "Origin: null" counts as no Origin (else it is refused)
    none_sent: bool = False  # the answer when none of the headers is there


FORM_POST = Policy(fallbacks=(SEC_FETCH_SITE, REFERER))
DASHBOARD = Policy(fallbacks=(SEC_FETCH_SITE,), null_falls_back=True)
EVENT_CHANNEL = Policy(fallbacks=(), none_sent=True)
BEACON = Policy(fallbacks=(SEC_FETCH_SITE,))


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, lower case, the default port left out; None otherwise."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    shown_port = "" if port is None or port == DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{shown_port}"


def host_origins(host: str, schemes: Collection[str] = tuple(DEFAULT_PORTS), port: int | None = None) -> set[str]:
    """The origins at the host of a ``Host`` header in each of ``schemes`` (a proxy in front may have
    terminated either), at ``port`` or the header's own; none when the header is malformed."""
    try:
        parts = urlsplit("//" + host.strip())
        own_port = parts.port
    except ValueError:
        return set()
    if not parts.hostname or parts.path or parts.query or parts.username:
        return set()
    name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    at = port or own_port
    found = {origin_of(f"{scheme}://{name}" + (f":{at}" if at else "")) for scheme in schemes}
    return {origin for origin in found if origin is not None}


def _origin_header(value: str) -> str | None:
    """An ``Origin`` header's origin: ``scheme://host[:port]`` and nothing else (else None)."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    if parts.username or parts.password or parts.query or parts.fragment or parts.path not in ("", "/"):
        return None
    return origin_of(value)


def same_origin(
    origin: str | None,
    ours: Collection[str],
    policy: Policy,
    *,
    sec_fetch_site: str | None = None,
    referer: str | None = None,
) -> bool:
    """Whether a request comes from a page at one of ``ours`` (origins, compared as ``origin_of``
    writes them), as ``policy`` judges a request without a usable ``Origin``."""
    own = {origin_of(value) for value in ours} - {None}
    if origin is not None and not (policy.null_falls_back and origin.strip().lower() == "null"):
        return _origin_header(origin) in own
    evidence = {SEC_FETCH_SITE: sec_fetch_site, REFERER: referer}
    for header in policy.fallbacks:
        value = evidence[header]
        if value is None:
            continue
        if header == SEC_FETCH_SITE:
            return value.strip().lower() == "same-origin"
        return origin_of(value) in own
    return policy.none_sent
