"""The links in the list's emails: a row's random ``link_key``, signed for one purpose (a confirmation link
cannot unsubscribe). Any list secret is accepted, so replacing it breaks no link already sent; the paths
are in every email ever sent: they never change."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

CONFIRM_PATH = "/subscribe/confirm"
UNSUBSCRIBE_PATH = "/unsubscribe"
TOKEN_PARAM = "token"
# On a link's page after its button was pressed without the app (a 303 to the link and this): the
# page says what the press did, not "already".
DONE_PARAM = "done"
CONFIRM_LINK_VALID_FOR = timedelta(days=7)

_CONFIRM, _UNSUBSCRIBE = "confirm", "unsubscribe"
_SIGNATURE_CHARS = 32  # of base64url: 192 bits
_KEY = r"[A-Za-z0-9_-]{16,32}"
_CONFIRM_TOKEN = re.compile(rf"^(?P<key>{_KEY})\.(?P<issued>[0-9a-f]{{1,12}})\.(?P<mac>[A-Za-z0-9_-]{{32}})$")
_UNSUBSCRIBE_TOKEN = re.compile(rf"^(?P<key>{_KEY})\.(?P<mac>[A-Za-z0-9_-]{{32}})$")


def new_link_key() -> str:
    """A subscriber's random key: 128 bits, URL-safe."""
    return secrets.token_urlsafe(16)


def _signature(secret: str, *parts: str) -> str:
    digest = hmac.new(secret.encode(), "\n".join(parts).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:_SIGNATURE_CHARS]


def _signed_by_one_of(list_secrets: Sequence[str], mac: str, *parts: str) -> bool:
    return any(hmac.compare_digest(_signature(secret, *parts), mac) for secret in list_secrets)


def confirm_token(secret: str, link_key: str, issued_at: datetime) -> str:
    issued = format(int(issued_at.timestamp()), "x")
    return f"{link_key}.{issued}.{_signature(secret, _CONFIRM, link_key, issued)}"


def unsubscribe_token(secret: str, link_key: str) -> str:
    return f"{link_key}.{_signature(secret, _UNSUBSCRIBE, link_key)}"


@dataclass(frozen=True)
class ConfirmClaim:
    """What a genuine confirmation token says: whose it is, and whether it is still in time."""

    link_key: str
    issued_at: datetime
    expired: bool


def read_confirm_token(list_secrets: Sequence[str], token: object, now: datetime) -> ConfirmClaim | None:
    """The claim of a token we signed; None for anything else (changed, forged, malformed)."""
    match = _CONFIRM_TOKEN.match(token) if isinstance(token, str) else None
    if match is None or not _signed_by_one_of(list_secrets, match["mac"], _CONFIRM, match["key"], match["issued"]):
        return None
    issued_at = datetime.fromtimestamp(int(match["issued"], 16), UTC)
    return ConfirmClaim(match["key"], issued_at, expired=now - issued_at > CONFIRM_LINK_VALID_FOR)


def read_unsubscribe_token(list_secrets: Sequence[str], token: object) -> str | None:
    """The link key of an unsubscribe token we signed; None for anything else."""
    match = _UNSUBSCRIBE_TOKEN.match(token) if isinstance(token, str) else None
    if match is None or not _signed_by_one_of(list_secrets, match["mac"], _UNSUBSCRIBE, match["key"]):
        return None
    return match["key"]


def confirm_url(site_url: str, secret: str, link_key: str, issued_at: datetime) -> str:
    return f"{site_url}{CONFIRM_PATH}?{urlencode({TOKEN_PARAM: confirm_token(secret, link_key, issued_at)})}"


def unsubscribe_url(site_url: str, secret: str, link_key: str) -> str:
    return f"{site_url}{UNSUBSCRIBE_PATH}?{urlencode({TOKEN_PARAM: unsubscribe_token(secret, link_key)})}"


def link_path(path: str, token: str, done: bool = False) -> str:
    """A link's page on this site (path and query): where its button posts, and where the press leads."""
    query = {TOKEN_PARAM: token, DONE_PARAM: "1"} if done else {TOKEN_PARAM: token}
    return f"{path}?{urlencode(query)}"


def mask_address(email: str) -> str:
    """The address as a page shows it to whoever holds the link: enough to recognise, not to read
    ('reader@example.com' -> 'r****r@e******.com')."""
    local, _, domain = email.rpartition("@")
    name, dot, rest = domain.partition(".")
    return f"{_mask(local)}@{_mask(name, keep_last=False)}{dot}{rest}"


def _mask(text: str, keep_last: bool = True) -> str:
    if len(text) <= 2:
        return text[:1] + "*" * (len(text) - 1)
    if not keep_last:
        return text[0] + "*" * (len(text) - 1)
    return text[0] + "*" * (len(text) - 2) + text[-1]
