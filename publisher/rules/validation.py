"""Validation rules for the two forms (docs/product.md, Forms), as pure functions.

Each function takes what the visitor typed and returns either cleaned values or
one message per invalid field, worded exactly as the product describes
(content/form_copy.py). Beyond that: surrounding whitespace is trimmed, control
characters are refused in names and email (nothing can inject mail headers), and
lengths are capped.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from email_validator import EmailNotValidError, validate_email

from publisher.content import form_copy as words
from publisher.content.form_copy import (
    EMAIL_INVALID,
    EMAIL_REQUIRED,
    FIRST_NAME_REQUIRED,
    FIRST_NAME_TOO_SHORT,
    LAST_NAME_REQUIRED,
    LAST_NAME_TOO_SHORT,
    MESSAGE_CONTROL_CHARS,
    MESSAGE_REQUIRED,
    MESSAGE_TOO_SHORT,
    NAME_REQUIRED,
    NAME_TOO_SHORT,
)

NAME_MIN = 2
MESSAGE_MIN = 10
NAME_MAX = 100
EMAIL_MAX = 254
MESSAGE_MAX = 5000
# The subject the gateway writes ("Contact Form Submission from First Last"), as stored.
SUBJECT_MAX = 300
LOCAL_PART_MAX_OCTETS = 64

NAME_TOO_LONG = words.too_long(words.NAME_LABEL, NAME_MAX)
FIRST_NAME_TOO_LONG = words.too_long(words.FIRST_NAME_LABEL, NAME_MAX)
LAST_NAME_TOO_LONG = words.too_long(words.LAST_NAME_LABEL, NAME_MAX)
EMAIL_TOO_LONG = words.too_long(words.EMAIL_LABEL, EMAIL_MAX)
MESSAGE_TOO_LONG = words.too_long(words.MESSAGE_LABEL, MESSAGE_MAX)
NAME_CONTROL_CHARS = words.no_line_breaks(words.NAME_LABEL)
FIRST_NAME_CONTROL_CHARS = words.no_line_breaks(words.FIRST_NAME_LABEL)
LAST_NAME_CONTROL_CHARS = words.no_line_breaks(words.LAST_NAME_LABEL)
EMAIL_CONTROL_CHARS = EMAIL_INVALID

_MESSAGE_ALLOWED_CONTROLS = {"\n", "\r", "\t"}


# Zero-width (non-)joiners are part of correct spelling in Persian and Indic names.
_JOINERS = frozenset({"\u200c", "\u200d"})


def has_control_characters(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> bool:
    """True when ``text`` holds a control or format character (CR, LF, NUL, bidi overrides...)."""
    return any(
        unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in allowed and ch not in _JOINERS for ch in text
    )


def one_line(text: str, limit: int) -> str:
    """Text from outside (a bounce's subject, sender, reason), as it may be stored and shown:
    on one line, without control or format characters, at most ``limit`` characters.

    A NUL reaching PostgreSQL fails the whole transaction, and an escape sequence reaching
    an operator's terminal is run by it (issue 34): every control (Cc), format (Cf) and line
    or paragraph separator becomes a space, whitespace folds to one space, and the result is
    cut with an ellipsis. Raw 8-bit bytes (an SMTPUTF8 address, a server's Latin-1) reach
    here as lone surrogates; they are read back as UTF-8 where they are, else replaced, so
    nothing unencodable is kept.
    """
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    cleaned = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in _JOINERS else ch for ch in text
    )
    folded = " ".join(cleaned.split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def for_terminal(text: str, *, keep_lines: bool = False) -> str:
    """Stored text as the operator's terminal may print it: every control or format character
    written as an escape (``\\x1b``, ``\\u202e``), so an escape sequence in a bounce's ``From:``
    or a contact message is shown, never run by the terminal (issue 34). ``keep_lines``: line
    feeds and tabs stay as they are (a contact message's paragraphs)."""
    kept = {"\n", "\t"} if keep_lines else set()
    return "".join(
        ch
        if ch in kept or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in _JOINERS
        else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )


@dataclass(frozen=True)
class _TextRule:
    required: str
    too_short: str
    too_long: str
    control_chars: str
    minimum: int
    maximum: int
    allowed_controls: frozenset[str] = frozenset()


def _check_text(value: object, rule: _TextRule) -> tuple[str, str | None]:
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        return text, rule.required
    if has_control_characters(text, rule.allowed_controls):
        return text, rule.control_chars
    if len(text) < rule.minimum:
        return text, rule.too_short
    if len(text) > rule.maximum:
        return text, rule.too_long
    return text, None


NAME = _TextRule(NAME_REQUIRED, NAME_TOO_SHORT, NAME_TOO_LONG, NAME_CONTROL_CHARS, NAME_MIN, NAME_MAX)
FIRST_NAME = _TextRule(
    FIRST_NAME_REQUIRED, FIRST_NAME_TOO_SHORT, FIRST_NAME_TOO_LONG, FIRST_NAME_CONTROL_CHARS, NAME_MIN, NAME_MAX
)
LAST_NAME = _TextRule(
    LAST_NAME_REQUIRED, LAST_NAME_TOO_SHORT, LAST_NAME_TOO_LONG, LAST_NAME_CONTROL_CHARS, NAME_MIN, NAME_MAX
)
MESSAGE = _TextRule(
    MESSAGE_REQUIRED,
    MESSAGE_TOO_SHORT,
    MESSAGE_TOO_LONG,
    MESSAGE_CONTROL_CHARS,
    MESSAGE_MIN,
    MESSAGE_MAX,
    frozenset(_MESSAGE_ALLOWED_CONTROLS),
)


class NotSendable(ValueError):
    """An address no email can be sent to from this site; the message says why (for an operator)."""


def sendable_address(text: str) -> str:
    """The address as every SMTP server takes it: its domain in ASCII (IDNA, "punycode").

    ``a@bücher.de`` and ``a@xn--bcher-kva.de`` are one address, stored and sent as
    the second: a server that does not offer SMTPUTF8 refuses the first, and
    Python's SMTP client cannot even write it. A local part that is not ASCII
    (``ü@example.com``) needs SMTPUTF8 on every server on the way, which the site
    does not speak: such an address is refused here, at the door, rather than
    failing later in the outbox. Syntax only (no DNS). Raises NotSendable.
    """
    try:
        info = validate_email(text, check_deliverability=False)
    except EmailNotValidError as exc:
        raise NotSendable(f"{text!r} is not an email address ({exc})") from None
    if info.ascii_email is None:
        raise NotSendable(f"{text!r} has a local part that is not ASCII, which needs SMTPUTF8 (not supported)")
    if len(info.local_part.encode("utf-8")) > LOCAL_PART_MAX_OCTETS:
        raise NotSendable(f"{text!r} has a local part longer than {LOCAL_PART_MAX_OCTETS} octets (RFC 5321)")
    if len(info.ascii_email) > EMAIL_MAX:
        raise NotSendable(f"{text!r} is longer than {EMAIL_MAX} characters with its domain in ASCII")
    return info.ascii_email


def address_key(text: str) -> str:
    """How an address typed by an operator (or stored before the ASCII rule) finds its row:
    its sendable form in lower case, or the text itself in lower case if it has none."""
    try:
        return sendable_address(text.strip()).lower()
    except NotSendable:
        return text.strip().lower()


def mailbox_key(address: str) -> str:
    """The mailbox an address reaches, whatever its spelling: lower case, without a ``+tag``.

    ``Victim+1@Example.com`` and ``victim+2@example.com`` reach one inbox: the list's
    rules against mail bombing (one confirmation a day) count per mailbox, not per spelling.
    """
    local, _, domain = address.strip().lower().rpartition("@")
    return f"{local.partition('+')[0] or local}@{domain}"


def check_email(value: object) -> tuple[str, str | None]:
    """Syntax only (no DNS): returns the address as it is stored and sent, or the product's message."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        return text, EMAIL_REQUIRED
    if has_control_characters(text):
        return text, EMAIL_CONTROL_CHARS
    if len(text) > EMAIL_MAX:
        return text, EMAIL_TOO_LONG
    try:
        return sendable_address(text), None
    except NotSendable:
        return text, EMAIL_INVALID


@dataclass(frozen=True)
class Checked:
    """Cleaned values (trimmed, email normalized) and the message for each invalid field."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def _collect(checks: dict[str, tuple[str, str | None]]) -> Checked:
    values = {name: value for name, (value, _) in checks.items()}
    errors = {name: error for name, (_, error) in checks.items() if error}
    return Checked(values=values, errors=errors)


def check_subscription(name: object, email: object) -> Checked:
    """Subscribe form: fields ``name`` and ``email``, in the order they are shown."""
    return _collect({"name": _check_text(name, NAME), "email": check_email(email)})


def check_contact(first_name: object, last_name: object, email: object, message: object) -> Checked:
    """Contact form: ``first_name``, ``last_name``, ``email``, ``message``, in display order."""
    return _collect(
        {
            "first_name": _check_text(first_name, FIRST_NAME),
            "last_name": _check_text(last_name, LAST_NAME),
            "email": check_email(email),
            "message": _check_text(message, MESSAGE),
        }
    )


_INTEGER = re.compile(r"[+-]?[0-9]{1,6}")


def parse_answer(value: object) -> int | None:
    """The visitor's math answer as an integer, or None when it is not a plain whole number."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    return int(text) if _INTEGER.fullmatch(text) else None
