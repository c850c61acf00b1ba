"""The forms' fields, each declared once (docs/content.md), and the rules of text from outside (docs/product.md,
Forms): control characters are refused in names and email, so nothing can inject mail headers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
# Every form's hidden field: people never see or reach it, bots that fill every input do.
HONEYPOT_FIELD = "website"
ANSWER_FIELD = "answer"

# Zero-width (non-)joiners are part of correct spelling in Persian and Indic names.
_JOINERS = frozenset({"\u200c", "\u200d"})
# Line breaks and tabs: a contact message's paragraphs.
LINE_BREAKS = frozenset({"\n", "\r", "\t"})


def has_control_characters(text: str, allowed: set[str] | frozenset[str] = frozenset()) -> bool:
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
    """Every control or format character written as an escape, so a terminal shows it, never runs it."""
    kept = {"\n", "\t"} if keep_lines else set()
    return "".join(
        ch
        if ch in kept or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in _JOINERS
        else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )


@dataclass(frozen=True)
class TextRule:
    """A required text field; called: the text trimmed, and its message when not valid."""

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
    """How an address typed by an operator (or stored before the ASCII rule) finds its row."""
    try:
        return sendable_address(text.strip()).lower()
    except NotSendable:
        return text.strip().lower()


def mailbox_key(address: str) -> str:
    """Lower case, no ``+tag``: the rules against mail bombing count per mailbox, not per spelling."""
    local, _, domain = address.strip().lower().rpartition("@")
    return f"{local.partition('+')[0] or local}@{domain}"


def check_email(value: object) -> tuple[str, str | None]:
    """Syntax only (no DNS)."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        return text, EMAIL_REQUIRED
    if has_control_characters(text):
        return text, EMAIL_INVALID
    if len(text) > EMAIL_MAX:
        return text, EMAIL_TOO_LONG
    try:
        return sendable_address(text), None
    except NotSendable:
        return text, EMAIL_INVALID


_INTEGER = re.compile(r"[+-]?[0-9]{1,6}")


def parse_answer(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return int(text) if _INTEGER.fullmatch(text) else None


# A ticked box's value, as its input sends it and its rule passes it on ("": not ticked).
TICKED = "yes"


def check_box(value: object) -> tuple[str, str | None]:
    return (TICKED if isinstance(value, str) and value else ""), None


def honeypot_filled(honeypot: object) -> bool:
    return not isinstance(honeypot, str) or honeypot != ""


# What the visitor typed -> the value as sent, and its message when it is not valid.
Rule = Callable[[object], tuple[str, str | None]]


def words_of(name: str) -> list[str]:
    """``firstName`` -> ``["first", "name"]``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().split("_")


@dataclass(frozen=True)
class FormField:
    name: str  # as the product spells it: the input's name, the key in a submit and the gateway's body
    label: str
    rule: Rule
    input_type: str = "text"  # an <input>'s type ("checkbox" too), or "textarea" (a box of several lines)
    autocomplete: str = "off"
    # Consecutive half-width fields share a row on a wide screen (the contact form's names).
    half_width: bool = False
    # Kept by the site's own list (the embedded gateway) in the subscriber's column of the same
    # name in snake case (``companyName``: ``company_name``); the name and the address always are.
    stored: bool = False


@dataclass(frozen=True)
class Checked:
    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    bot: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Form:
    name: str  # its elements' ids start with it ("subscribe-email"); the limits count per form
    fields: tuple[FormField, ...]  # in the order they are shown
    more: tuple[str, ...] = ()  # elements checked elsewhere with a message beside them (the answer)
    route: str = ""  # its page's, which the dashboard reads its visits by ("": on every forthcoming book's)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(declared.name for declared in self.fields)

    @property
    def asks_question(self) -> bool:
        return ANSWER_FIELD in self.more

    def element_id(self, name: str) -> str:
        """``contact-first-name``."""
        return "-".join([self.name, *words_of(name)])

    @property
    def field_ids(self) -> dict[str, str]:
        return {name: self.element_id(name) for name in (*self.names, *self.more)}

    def typed(self, data: Mapping[str, object]) -> dict[str, str]:
        return {name: str(data.get(name, "")) for name in self.names}

    def stored(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"_".join(words_of(declared.name)): values[declared.name] for declared in self.fields if declared.stored}

    def check(self, data: Mapping[str, object]) -> Checked:
        checks = {declared.name: declared.rule(data.get(declared.name)) for declared in self.fields}
        return Checked(
            values={name: value for name, (value, _) in checks.items()},
            errors={name: error for name, (_, error) in checks.items() if error},
            bot=honeypot_filled(data.get(HONEYPOT_FIELD, "")),
        )


NAME = FormField(
    "name",
    form_copy.NAME_LABEL,
    TextRule(form_copy.NAME_LABEL, form_copy.NAME_REQUIRED, form_copy.NAME_TOO_SHORT),
    autocomplete="name",
)
EMAIL = FormField("email", form_copy.EMAIL_LABEL, check_email, input_type="email", autocomplete="email")
FIRST_NAME = FormField(
    "firstName",
    form_copy.FIRST_NAME_LABEL,
    TextRule(form_copy.FIRST_NAME_LABEL, form_copy.FIRST_NAME_REQUIRED, form_copy.FIRST_NAME_TOO_SHORT),
    autocomplete="given-name",
    half_width=True,
)
LAST_NAME = FormField(
    "lastName",
    form_copy.LAST_NAME_LABEL,
    TextRule(form_copy.LAST_NAME_LABEL, form_copy.LAST_NAME_REQUIRED, form_copy.LAST_NAME_TOO_SHORT),
    autocomplete="family-name",
    half_width=True,
)
MESSAGE = FormField(
    "message",
    form_copy.MESSAGE_LABEL,
    TextRule(
        form_copy.MESSAGE_LABEL,
        form_copy.MESSAGE_REQUIRED,
        form_copy.MESSAGE_TOO_SHORT,
        minimum=MESSAGE_MIN,
        maximum=MESSAGE_MAX,
        control_chars=form_copy.MESSAGE_CONTROL_CHARS,
        allowed_controls=LINE_BREAKS,
    ),
    input_type="textarea",
)

SUBSCRIBE = Form("subscribe", (NAME, EMAIL), route="/subscribe")
CONTACT = Form("contact", (FIRST_NAME, LAST_NAME, EMAIL, MESSAGE), more=(ANSWER_FIELD,), route="/contact-us")
# "Tell me when it's out", on a forthcoming book's page; no name: its confirmation greets "Hello,".
JOIN_LIST = FormField("joinList", form_copy.JOIN_LIST_LABEL, check_box, input_type="checkbox")
WAITLIST = Form("waitlist", (EMAIL, JOIN_LIST))
