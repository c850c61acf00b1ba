"""Validation rules for the two forms (docs/product.md, Forms), as pure functions: the cleaned value and,
when not valid, the product's message. Control characters are refused in names and email, so nothing can
inject mail headers."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from email_validator import EmailNotValidError, validate_email

from publisher.content import form_copy
from publisher.content.form_copy import EMAIL_INVALID, EMAIL_REQUIRED

NAME_MIN = 2
MESSAGE_MIN = 10
NAME_MAX = 100
EMAIL_MAX = 254
MESSAGE_MAX = 5000
# The subject the gateway writes ("Contact Form Submission from First Last"), as stored.
SUBJECT_MAX = 300
LOCAL_PART_MAX_OCTETS = 64

EMAIL_TOO_LONG = form_copy.too_long(form_copy.EMAIL_LABEL, EMAIL_MAX)
EMAIL_CONTROL_CHARS = EMAIL_INVALID

# Zero-width (non-)joiners are part of correct spelling in Persian and Indic names.
_JOINERS = frozenset({"\u200c", "\u200d"})


def has_control_characters(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> bool:
    """True when ``text`` holds a control or format character (CR, LF, NUL, bidi overrides...)."""
    return any(
        unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in allowed and ch not in _JOINERS for ch in text
    )


def one_line(text: str, limit: int) -> str:
    """Text from outside on one line, without control or format characters (a NUL fails a PostgreSQL
    transaction, an escape sequence is run by a terminal), at most ``limit`` characters."""
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
    """Stored text as the operator's terminal may print it: every control or format character written as
    an escape, so it is shown, never run. ``keep_lines``: line feeds and tabs stay."""
    kept = {"\n", "\t"} if keep_lines else set()
    return "".join(
        ch
        if ch in kept or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in _JOINERS
        else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )


# Line breaks and tabs: a contact message's paragraphs.
LINE_BREAKS = frozenset({"\n", "\r", "\t"})


@dataclass(frozen=True)
class TextRule:
    """A required text field: its messages, its length, the control characters it may hold; called, the
    text trimmed and its message when not valid (those the product does not word, from ``label``)."""

    label: str
    required: str
    too_short: str
    minimum: int = NAME_MIN
    maximum: int = NAME_MAX
    control_chars: str = ""
    allowed_controls: frozenset[str] = frozenset()

    def __call__(self, value: object) -> tuple[str, str | None]:
        text = value.strip() if isinstance(value, str) else ""
        if not text:
            return text, self.required
        if has_control_characters(text, self.allowed_controls):
            return text, self.control_chars or form_copy.no_line_breaks(self.label)
        if len(text) < self.minimum:
            return text, self.too_short
        if len(text) > self.maximum:
            return text, form_copy.too_long(self.label, self.maximum)
        return text, None


class NotSendable(ValueError):
    """An address no email can be sent to from this site; the message says why (for an operator)."""


def sendable_address(text: str) -> str:
    """The address as every SMTP server takes it: its domain in ASCII (IDNA). A non-ASCII local part needs
    SMTPUTF8, which the site does not speak: NotSendable here, at the door, not later in the outbox."""
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
    """The mailbox an address reaches, whatever its spelling (lower case, no ``+tag``): the rules against
    mail bombing count per mailbox, not per spelling."""
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


_INTEGER = re.compile(r"[+-]?[0-9]{1,6}")


def parse_answer(value: object) -> int | None:
    """The visitor's math answer as an integer, or None when it is not a plain whole number."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    return int(text) if _INTEGER.fullmatch(text) else None
