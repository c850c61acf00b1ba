"""The new-release list's rules, the clock passed in: where an address stands, what a sign-up does,
the signed links in its emails (paths that never change: every email ever sent holds them), an import."""

from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from publisher.rules import form_fields


class ListStatus:
    """Pending, then confirmed, then possibly unsubscribed (left, or complained) or bounced."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    UNSUBSCRIBED = "unsubscribed"
    BOUNCED = "bounced"
    ALL = (PENDING, CONFIRMED, UNSUBSCRIBED, BOUNCED)
    # The import never brings these back: only the reader, through the form, can (a fresh consent).
    GONE = (UNSUBSCRIBED, BOUNCED)


CONFIRMATION_EVERY = timedelta(hours=24)
# An address that only waited for books is erased this many days after the last one's email (docs/privacy.md).
WAITLIST_KEEP_DAYS = 30


def link_second(moment: datetime) -> int:
    """To the second, as a confirmation link carries its date (a stored time without a zone is UTC)."""
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def confirmation_due(last_confirmation_at: datetime | None, now: datetime) -> bool:
    """One confirmation per mailbox a day (``last_confirmation_at``: to any spelling of it; None: never)."""
    return last_confirmation_at is None or now - last_confirmation_at >= CONFIRMATION_EVERY


def is_latest_confirmation(issued_at: datetime, sent_at: datetime | None, subscribed_at: datetime) -> bool:
    """The latest sent to its row, for its latest sign-up (an older sign-up's consent is not this one's)."""
    if sent_at is None:
        return False
    issued = link_second(issued_at)
    return issued == link_second(sent_at) and issued >= link_second(subscribed_at)


@dataclass(frozen=True)
class Step:
    status: str
    send_confirmation: bool
    joins: bool  # new to the list, or back after leaving: a new subscription on record


def on_subscribe(current: str | None, last_confirmation_at: datetime | None, now: datetime, emails_on: bool) -> Step:
    """One that left or bounced joins afresh, pending, so its consent is given again and it proves it takes mail."""
    if current == ListStatus.CONFIRMED:
        return Step(ListStatus.CONFIRMED, send_confirmation=False, joins=False)
    joins = current is None or current in ListStatus.GONE
    return Step(
        ListStatus.PENDING, send_confirmation=emails_on and confirmation_due(last_confirmation_at, now), joins=joins
    )


class ImportRefused(Exception):
    """The file cannot be imported; ``problems`` name each line and why. Nothing was imported."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ImportRow:
    line: int
    email: str
    name: str
    status: str


# An address seen twice in one file keeps the strongest word on consent: someone who
# left (or whose address bounced) stays gone, a confirmation outweighs a pending request.
_STRENGTH = {ListStatus.PENDING: 0, ListStatus.CONFIRMED: 1, ListStatus.UNSUBSCRIBED: 2, ListStatus.BOUNCED: 2}


def import_step(current: str | None, imported: str) -> str | None:
    """None leaves it: a file never brings back one that left or bounced (only the reader can, by the form)."""
    if current is None:
        return imported
    if current in ListStatus.GONE or imported == current:
        return None
    if imported in ListStatus.GONE or (imported == ListStatus.CONFIRMED and current == ListStatus.PENDING):
        return imported
    return None


def read_import(text: str, status: str | None = None) -> list[ImportRow]:
    """The columns ``subscribers`` writes (``status``: for a file without one); a repeated address is one row."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))
    columns = [name.strip().lower() for name in reader.fieldnames or ()]
    missing = [name for name in ("email", "name") if name not in columns]
    if missing:
        raise ImportRefused([f"line 1: the header has no {' and no '.join(missing)} column"])
    has_status = "status" in columns
    if has_status and status is not None:
        raise ImportRefused(["line 1: the file has a status column; --status is only for a file without one"])
    if not has_status and status is None:
        raise ImportRefused(["line 1: the file has no status column: say which with --status confirmed (or pending)"])
    problems: list[str] = []
    rows: dict[str, ImportRow] = {}
    for raw in reader:
        line = reader.line_num
        fields = {key.strip().lower(): (value or "").strip() for key, value in raw.items() if key is not None}
        if None in raw:
            problems.append(f"line {line}: more fields than the header names")
            continue
        row, problem = _import_row(line, fields, status)
        if row is None:  # not a row: its problem
            problems.append(f"line {line}: {problem}")
            continue
        earlier = rows.get(row.email.lower())
        if earlier is None:
            rows[row.email.lower()] = row
        elif _STRENGTH[row.status] > _STRENGTH[earlier.status]:
            rows[row.email.lower()] = ImportRow(earlier.line, earlier.email, earlier.name, row.status)
    if problems:
        raise ImportRefused(problems)
    return list(rows.values())


def _import_row(line: int, fields: dict[str, str], status: str | None) -> tuple[ImportRow | None, str | None]:
    email, name = fields.get("email", ""), fields.get("name", "")
    row_status = (fields.get("status") if status is None else status) or ""
    if not email:
        return None, "no email address"
    if len(email) > form_fields.EMAIL_MAX:
        return None, f"the email address is longer than {form_fields.EMAIL_MAX} characters"
    try:
        email = form_fields.sendable_address(email)
    except form_fields.NotSendable as exc:
        return None, str(exc)
    if not name:
        return None, "no name"
    if len(name) > form_fields.NAME_MAX:
        return None, f"the name is longer than {form_fields.NAME_MAX} characters"
    if form_fields.has_control_characters(name):
        return None, "the name holds a line break or control character"
    if row_status not in ListStatus.ALL:
        return None, f"unknown status {row_status!r} (one of {', '.join(ListStatus.ALL)})"
    return ImportRow(line, email, name, row_status), None


# --- The links: a row's random ``link_key``, signed for one purpose (a confirmation link cannot
# unsubscribe). Any list secret is accepted, so replacing it breaks no link already sent. ---

CONFIRM_PATH = "/subscribe/confirm"
UNSUBSCRIBE_PATH = "/unsubscribe"
TOKEN_PARAM = "token"
# After a press without the app (a 303 to the link and this), the page says what it did, not "already".
DONE_PARAM = "done"
CONFIRM_LINK_VALID_FOR = timedelta(days=7)

_CONFIRM, _UNSUBSCRIBE = "confirm", "unsubscribe"
_SIGNATURE_CHARS = 32  # of base64url: 192 bits
_KEY = r"[A-Za-z0-9_-]{16,32}"
_CONFIRM_TOKEN = re.compile(rf"^(?P<key>{_KEY})\.(?P<issued>[0-9a-f]{{1,12}})\.(?P<mac>[A-Za-z0-9_-]{{32}})$")
_UNSUBSCRIBE_TOKEN = re.compile(rf"^(?P<key>{_KEY})\.(?P<mac>[A-Za-z0-9_-]{{32}})$")


def new_link_key() -> str:
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
    link_key: str
    issued_at: datetime
    expired: bool


def read_confirm_token(list_secrets: Sequence[str], token: object, now: datetime) -> ConfirmClaim | None:
    match = _CONFIRM_TOKEN.match(token) if isinstance(token, str) else None
    if match is None or not _signed_by_one_of(list_secrets, match["mac"], _CONFIRM, match["key"], match["issued"]):
        return None
    issued_at = datetime.fromtimestamp(int(match["issued"], 16), UTC)
    return ConfirmClaim(match["key"], issued_at, expired=now - issued_at > CONFIRM_LINK_VALID_FOR)


def read_unsubscribe_token(list_secrets: Sequence[str], token: object) -> str | None:
    match = _UNSUBSCRIBE_TOKEN.match(token) if isinstance(token, str) else None
    if match is None or not _signed_by_one_of(list_secrets, match["mac"], _UNSUBSCRIBE, match["key"]):
        return None
    return match["key"]


def confirm_url(site_url: str, secret: str, link_key: str, issued_at: datetime) -> str:
    return f"{site_url}{CONFIRM_PATH}?{urlencode({TOKEN_PARAM: confirm_token(secret, link_key, issued_at)})}"


def unsubscribe_url(site_url: str, secret: str, link_key: str) -> str:
    return f"{site_url}{UNSUBSCRIBE_PATH}?{urlencode({TOKEN_PARAM: unsubscribe_token(secret, link_key)})}"


def link_path(path: str, token: str, done: bool = False) -> str:
    query = {TOKEN_PARAM: token, DONE_PARAM: "1"} if done else {TOKEN_PARAM: token}
    return f"{path}?{urlencode(query)}"


def mask_address(email: str) -> str:
    """Enough to recognise, not to read: 'reader@example.com' -> 'r****r@e******.com'."""
    local, _, domain = email.rpartition("@")
    name, dot, rest = domain.partition(".")
    return f"{_mask(local)}@{_mask(name, keep_last=False)}{dot}{rest}"


def _mask(text: str, keep_last: bool = True) -> str:
    if len(text) <= 2:
        return text[:1] + "*" * (len(text) - 1)
    if not keep_last:
        return text[0] + "*" * (len(text) - 1)
    return text[0] + "*" * (len(text) - 2) + text[-1]
