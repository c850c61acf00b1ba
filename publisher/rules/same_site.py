"""Whether a form's POST comes from the site's own page (docs/security.md, Forms without the app).

A plain HTML POST carries no token of the visitor's session, so a page on another
site could make a visitor's browser post our forms (cross-site request forgery,
or a spammer's page posting through its visitors). Browsers say where a POST comes
from: ``Origin`` (every current browser sends it on a POST), else ``Sec-Fetch-Site``,
else ``Referer``. The first of them that is present decides; none at all, or an
opaque ``Origin: null``, is refused.
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


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


def posted_from_this_site(
    *, origin: str | None, sec_fetch_site: str | None, referer: str | None, site_origins: Collection[str]
) -> bool:
    """True when the first of ``Origin``, ``Sec-Fetch-Site`` and ``Referer`` present says this site."""
    if origin is not None:
        return origin.strip().lower() != "null" and origin_of(origin) in site_origins
    if sec_fetch_site is not None:
        return sec_fetch_site.strip().lower() == "same-origin"
    if referer is not None:
        return origin_of(referer) in site_origins
    return False
