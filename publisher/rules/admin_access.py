"""Who may open the dashboard (a passkey, docs/security.md "The dashboard's sign-in"): its rules, clocks
passed in. A token is looked up by its hash, so the lookup's timing tells nothing of the stored bytes."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from publisher.rules import same_site

ENROL_PATH = "/admin/enrol"
DASHBOARD_PATH = "/admin"
API_PATH = "/admin/api"  # the sign-in's HTTP endpoints and the downloads
EXPORT_PATH = f"{API_PATH}/export.csv"  # the list as CSV
AUDIT_PATH = f"{API_PATH}/audit.csv"  # the audit log as CSV
ENROLMENT_VALID_FOR = timedelta(hours=24)
SESSION_ABSOLUTE = timedelta(hours=12)
DEFAULT_IDLE_MINUTES = 30
# A ceremony (the options a browser was given, and their challenge) waits this long for the answer.
CEREMONY_VALID_FOR = timedelta(minutes=5)
# Ceremonies waiting at once: an admin needs one, and a few more for a cancelled prompt or a second
# device; more from one address is a flood. The site's bound keeps the table small (~250 bytes a row).
MAX_OPEN_CEREMONIES_PER_ADDRESS = 5
MAX_OPEN_CEREMONIES = 1000
TOKEN_BYTES = 32  # 256 bits: enrolment tokens, session tokens, ceremony ids
# What a browser may send as one token: base64url of TOKEN_BYTES, with room and no more.
TOKEN_MAX_CHARS = 64
_TOKEN_SHAPE = re.compile(f"[A-Za-z0-9_-]{{1,{TOKEN_MAX_CHARS}}}")
ADMIN_NAME_MAX = 64
COOKIE_NAME = "publisher-admin"
SECURE_COOKIE_NAME = "__Host-publisher-admin"


def new_token() -> str:
    """Also a new admin's WebAuthn user id, never their name."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_token_shaped(value: object) -> bool:
    """Anything else is refused before a database is asked."""
    return isinstance(value, str) and _TOKEN_SHAPE.fullmatch(value) is not None


def check_admin_name(name: str) -> str | None:
    """Why ``name`` cannot name an admin, or None: it is shown on the dashboard, the audit log and ``admin list``."""
    stripped = name.strip()
    if not stripped:
        return "an admin's name must not be empty"
    if len(stripped) > ADMIN_NAME_MAX:
        return f"an admin's name must be at most {ADMIN_NAME_MAX} characters"
    if any(not char.isprintable() for char in stripped):
        return "an admin's name must be printable text on one line"
    return None


def enrolment_url(site_url: str, token: str) -> str:
    """The token is in the fragment, which a browser never sends (no log, Referer or proxy sees it)."""
    return f"{site_url.rstrip('/')}{ENROL_PATH}#{token}"


@dataclass(frozen=True)
class SessionTimes:
    created_at: datetime
    last_active_at: datetime


def session_open(times: SessionTimes, now: datetime, idle: timedelta) -> bool:
    return now - times.last_active_at < idle and now - times.created_at < SESSION_ABSOLUTE


@dataclass(frozen=True)
class RelyingParty:
    rp_id: str  # the host a passkey is for
    origins: tuple[str, ...]


def relying_party(site_url: str, development_ports: Iterable[int] = ()) -> RelyingParty:
    """On the development server, localhost (browsers allow WebAuthn there; an IP address is never an RP ID)."""
    origin = same_site.origin_of(site_url)
    if origin is None:  # settings.site_url() is an absolute http(s) URL
        raise ValueError(f"the site's address is no http(s) URL: {site_url!r}")
    host = urlsplit(site_url).hostname or ""
    extra = tuple(f"http://localhost:{port}" for port in development_ports)
    if extra:
        return RelyingParty("localhost", tuple(dict.fromkeys((*extra, origin) if host == "localhost" else extra)))
    return RelyingParty(host, (origin,))


def cookie_name(https: bool) -> str:
    return SECURE_COOKIE_NAME if https else COOKIE_NAME


def session_cookie(token: str, https: bool) -> str:
    """An empty ``token`` removes it (sign-out); the database decides before Max-Age."""
    max_age = int(SESSION_ABSOLUTE.total_seconds()) if token else 0
    attributes = [f"{cookie_name(https)}={token}", "Path=/", "HttpOnly", "SameSite=Strict", f"Max-Age={max_age}"]
    return "; ".join(attributes + ["Secure"] * https)


def session_token(cookie_header: str, https: bool) -> str | None:
    """Over https only the ``__Host-`` name (no sibling subdomain sets it); two session cookies are nobody's."""
    found = [
        (name, value)
        for name, _, value in (part.strip().partition("=") for part in cookie_header.split(";"))
        if name in (SECURE_COOKIE_NAME, COOKIE_NAME)
    ]
    if len(found) != 1:
        return None
    [(name, value)] = found
    return value if name == cookie_name(https) and is_token_shaped(value) else None


# The event channel's door writes the connection's scheme here, replacing any the client sent, so the
# dashboard's state reads the session cookie as the HTTP endpoints do.
CHANNEL_SCHEME_HEADER = "x-publisher-scheme"
