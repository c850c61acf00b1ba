"""The bounce mailbox's emails classified: RFC 3464/5965 structure, then flufl.bounce, auto-replies last. Never
guess (a wrong hard bounce unsubscribes a reader), never raise: what fits nothing is unclassified."""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from email.message import EmailMessage, Message
from email.parser import HeaderParser
from email.utils import getaddresses, parseaddr

from flufl.bounce import all_failures

from publisher.rules.bounces import COMPLAINT, HARD, SOFT, kind_of_status
from publisher.rules.form_fields import one_line

BOUNCE, COMPLAINT_REPORT, AUTO_REPLY = "bounce", "complaint", "auto-reply"

REASON_MAX = 300
# An email of ours goes to one reader: a report naming thousands is read no further than this.
RECIPIENTS_MAX = 100
SUBJECT_MAX = 200
PERMANENT_REASON = "permanent failure reported by the receiving server"
TEMPORARY_REASON = "temporary failure reported by the receiving server"

# RFC 5965 feedback types of a complaint ("" names none); not "not-spam" (RFC 6430), "auth-failure" (RFC 6591).
_COMPLAINT_TYPES = frozenset({"abuse", "fraud", "virus", "other", ""})
# RFC 3834's "Auto:", and what Outlook (in most readers' languages), Gmail and vacation programs write.
_AUTO_SUBJECT = re.compile(
    r"^\s*(out of (the )?office|automatic reply|auto:|auto[- ]?reply|autoresponse|vacation"
    r"|automatische antwort|abwesenheitsnotiz|r[ée]ponse automatique|respuesta autom[áa]tica"
    r"|risposta automatica|resposta autom[áa]tica)",
    re.IGNORECASE,
)
_ENVELOPE_HEADERS = ("delivered-to", "x-original-to", "envelope-to", "to")  # most trustworthy first
_HEADER_LINE = re.compile(r"^[!-9;-~]+:")
_QUOTED_MESSAGE_ID = re.compile(r"^\s*message-id:\s*(?P<id><[^<>\s]+>|\S+)", re.IGNORECASE | re.MULTILINE)
# Header lines in a bounce's prose that name the address but are no diagnostic.
_ADDRESS_HEADER_LINE = re.compile(
    r"^\s*(to|cc|from|delivered-to|x-original-to|envelope-to|x-failed-recipients|return-path"
    r"|final-recipient|original-recipient):",
    re.IGNORECASE,
)
# A line holding one address and nothing else, as a qmail or Exim recipient paragraph starts.
_ADDRESS_ALONE = re.compile(r"^\s*<?[^\s<>@]+@[^\s<>@]+>?:?\s*$")
# The senders of a mail server's own emails (RFC 5321's postmaster, and the usual daemons).
_MAIL_SYSTEMS = frozenset({"mailer-daemon", "mail-daemon", "postmaster", "mailerdaemon"})
_ORIGINAL_TYPES = frozenset({"message/rfc822", "message/global"})
_ORIGINAL_HEADER_TYPES = frozenset({"text/rfc822-headers", "message/rfc822-headers", "message/global-headers"})
_RECIPIENT_FIELDS = frozenset({"final-recipient", "original-recipient"})
_STATUS_TYPES = frozenset({"message/delivery-status", "message/global-delivery-status"})
_MAX_DEPTH = 20  # MIME nesting followed; a hostile email could nest far deeper
_HEADERS = HeaderParser(policy=email.policy.default)


@dataclass(frozen=True)
class Failure:
    address: str  # lower-cased, without <> or an "rfc822;" address type
    kind: str  # bounces.HARD or bounces.SOFT; bounces.COMPLAINT for a complaint
    reason: str  # one line, at most REASON_MAX characters


@dataclass(frozen=True)
class ClassifiedMessage:
    """One email of the bounce mailbox, and what names the email of ours it is about."""

    kind: str | None  # BOUNCE, COMPLAINT_REPORT, AUTO_REPLY, or None: unclassified
    failures: tuple[Failure, ...] = ()
    envelope_to: tuple[str, ...] = ()
    original_message_id: str | None = None  # with <>
    original_return_path: str | None = None
    original_to: tuple[str, ...] = ()
    subject: str = ""
    sender: str = ""  # the From address, or the header as written when it holds none
    recipients_named: int = 0  # in all; ``failures`` holds the first RECIPIENTS_MAX


def classify(raw: bytes) -> ClassifiedMessage:
    """Never raises."""
    try:
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        envelope_to = tuple(_addresses([value for name in _ENVELOPE_HEADERS for value in _all_headers(msg, name)]))
        subject = one_line(_header(msg, "subject"), SUBJECT_MAX)
        sender = _header(msg, "from")
    except Exception:  # noqa: BLE001 - any email, its headers however hostile, is a report, never an error
        return ClassifiedMessage(kind=None)
    try:
        classified = _classify(msg)
    except Exception:  # noqa: BLE001 - one broken email must not stop the mailbox loop
        classified = ClassifiedMessage(kind=None)
    return replace(classified, envelope_to=envelope_to, subject=subject, sender=parseaddr(sender)[1] or sender)


def _classify(msg: Message) -> ClassifiedMessage:
    parts = list(_parts(msg))
    if _is_report_of(msg, "feedback-report") or _first_of(parts, {"message/feedback-report"}) is not None:
        return _feedback_report(msg, parts)
    if _is_report_of(msg, "delivery-status") or _first_of(parts, _STATUS_TYPES) is not None:
        # Declared a DSN, but its status part missing (truncated): read as prose.
        failures, named = _delivery_status(parts) or _flufl_failures(msg, parts)
        return _about(_original(msg, parts), BOUNCE, failures, named)
    if _says_auto_reply(msg):
        return replace(_original(msg, parts, replied_to=True), kind=AUTO_REPLY)
    failures, named = _flufl_failures(msg, parts)
    if failures:
        return _about(_original(msg, parts), BOUNCE, failures, named)
    if _is_auto_submitted(msg) and not _from_mail_system(msg):
        return replace(_original(msg, parts, replied_to=True), kind=AUTO_REPLY)
    return ClassifiedMessage(kind=None)


def _about(original: ClassifiedMessage, kind: str, failures: tuple[Failure, ...], named: int) -> ClassifiedMessage:
    return replace(original, kind=kind, failures=failures[:RECIPIENTS_MAX], recipients_named=max(named, len(failures)))


def _delivery_status(parts: list[Message]) -> tuple[tuple[Failure, ...], int] | None:
    """None without a status part; delivered or relayed recipients are no failures."""
    status_parts = [part for part in parts if part.get_content_type() in _STATUS_TYPES]
    if not status_parts:
        return None
    failures: list[Failure] = []
    not_read = 0
    for part in status_parts:
        # The first block is about the message, and names no recipient; some servers leave it out.
        for block in _status_blocks(part):
            if len(failures) >= RECIPIENTS_MAX:
                # Counted by field names: reading values costs a hundred times more, for tens of thousands.
                not_read += any(key.lower() in _RECIPIENT_FIELDS for key in block)
                continue
            failure = _recipient_failure(block)
            if failure is not None and all(failure.address != other.address for other in failures):
                failures.append(failure)
    return tuple(failures), len(failures) + not_read


def _status_blocks(part: Message) -> list[Message]:
    """RFC 6533's global status parses as one message whose body holds the others; a broken part as text."""
    payload = part.get_payload()
    texts: list[str] = []
    blocks: list[Message] = []
    if isinstance(payload, str):
        texts.append(_utf8_payload(part))
    elif isinstance(payload, list):
        for block in payload:
            if not isinstance(block, Message):
                continue
            blocks.append(block)
            if isinstance(block.get_payload(), str):
                texts.append(_utf8_payload(block))
    for text in texts:
        for chunk in re.split(r"\r?\n\s*\r?\n", text.strip()):
            if chunk.strip():
                blocks.append(_HEADERS.parsestr(chunk.strip() + "\n"))
    return blocks


def _utf8_payload(part: Message) -> str:
    """RFC 6533: ``get_payload()`` would decode ``léa@example.org`` as ASCII, replacing its ``é``."""
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""


def _recipient_failure(block: Message) -> Failure | None:
    address = _address(_header(block, "final-recipient")) or _address(_header(block, "original-recipient"))
    if address is None:
        return None
    action = _header(block, "action").strip().lower()
    status = _header(block, "status").strip()
    kind = kind_of_status(status, action)
    if kind is None:
        return None
    diagnostic = _header(block, "diagnostic-code")
    reason = " ".join(item for item in (status, diagnostic or action) if item)
    return Failure(address=address, kind=kind, reason=one_line(reason, REASON_MAX))


def _feedback_report(msg: Message, parts: list[Message]) -> ClassifiedMessage:
    """A redacted complaint names no reader, but its original's Message-ID and Return-Path name the email."""
    fields = _attached_headers(_first_of(parts, {"message/feedback-report"}))
    original = _original(msg, parts)
    if fields is None or not any(_header(fields, name) for name in ("feedback-type", "user-agent", "version")):
        # Declared, but cut off before its (mandatory) fields: not-spam and abuse look alike.
        return original
    feedback_type = one_line(_header(fields, "feedback-type"), 100).lower()
    if feedback_type not in _COMPLAINT_TYPES:
        return original
    if original.original_return_path is None:
        # The envelope sender the provider saw is the original's Return-Path by definition.
        original = replace(original, original_return_path=_address(_header(fields, "original-mail-from")))
    reported = _addresses(_all_headers(fields, "original-rcpt-to")) or list(original.original_to)
    user_agent = one_line(_header(fields, "user-agent"), 100)
    reason = f"complaint (Feedback-Type: {feedback_type or 'missing'})"
    if user_agent:
        reason += f" from {user_agent}"
    complaints = tuple(  # one per address: _addresses gives each once
        Failure(address=address, kind=COMPLAINT, reason=one_line(reason, REASON_MAX))
        for address in reported
        if "redacted" not in address.partition("@")[0]
    )
    return _about(original, COMPLAINT_REPORT, complaints, len(complaints))


def _flufl_failures(msg: Message, parts: list[Message]) -> tuple[tuple[Failure, ...], int]:
    """Given the policy.default parse: on compat32's 8-bit headers flufl's Sina detector raises."""
    try:
        temporary, permanent = all_failures(msg)
    except Exception:  # noqa: BLE001 - a detector failing on a broken email finds no bounce
        return (), 0
    found: list[tuple[str, str, str]] = []
    for kind, items, fallback in ((HARD, permanent, PERMANENT_REASON), (SOFT, temporary, TEMPORARY_REASON)):
        for item in sorted(items):
            address = _address(item.decode("ascii", "replace"))
            if address is not None:
                found.append((address, kind, fallback))
    named = len({address for address, _kind, _fallback in found})
    found = found[: RECIPIENTS_MAX * 2]  # a hard and a soft entry per address at most
    reasons = _Reasons(_prose_lines(parts), {address for address, _kind, _fallback in found})
    failures: dict[str, Failure] = {}
    for address, kind, fallback in found:  # the first per address: hard before soft, as they are gathered
        reason = one_line(reasons.near(address) or fallback, REASON_MAX)
        failures.setdefault(address, Failure(address=address, kind=kind, reason=reason))
    return tuple(failures.values())[:RECIPIENTS_MAX], named


def _prose_lines(parts: list[Message]) -> list[str]:
    """Up to the quoted original, which names the reader too but says nothing of why the email failed."""
    lines = [line for text in _plain_texts(parts) for line in text.splitlines()]
    start = _quoted_headers_start(lines)
    return lines if start is None else lines[:start]


# A local part's (RFC 5322 atext and dots) and a domain's characters around an "@"; an address is found
# where it stands whole, not preceded by [\w.+-] nor followed by [\w-] ("b@x.org" is not in "ab@x.org").
_LOCAL_RUN = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+$")
_DOMAIN_RUN = re.compile(r"[\w.-]+")
_BEFORE_ADDRESS = re.compile(r"[\w.+-]")
_AFTER_ADDRESS = re.compile(r"[\w-]")
_REASON_LINES_MAX = 20
_LOCAL_MAX, _DOMAIN_MAX = 64, 255


class _Reasons:
    """Addresses found in one pass: one search per address took 94 s of CPU for a bounce naming 16,000."""

    def __init__(self, lines: list[str], wanted: Iterable[str]) -> None:
        self._lines = lines
        self._where: dict[str, list[int]] = {address: [] for address in wanted}
        for index, line in enumerate(lines):
            if "@" not in line or _ADDRESS_HEADER_LINE.match(line):
                continue
            for address, _end in _addresses_in(line):
                places = self._where.get(address)
                if places is not None and places[-1:] != [index]:
                    places.append(index)

    def near(self, address: str) -> str:
        """On the lines after an address alone (qmail, Exim), or after it with indented continuations (Postfix)."""
        lines = self._lines
        for index in self._where.get(address, ()):
            line = lines[index]
            indent = len(line) - len(line.lstrip())
            alone = _ADDRESS_ALONE.match(line) is not None
            collected: list[str] = []
            if not alone:
                end = next(end for found, end in _addresses_in(line) if found == address)
                collected.append(line[end:].lstrip(">").lstrip(":").strip())
            for next_line in lines[index + 1 : index + 1 + _REASON_LINES_MAX]:
                if not next_line.strip() or (alone and _ADDRESS_ALONE.match(next_line)):
                    break
                if (indent or not alone) and len(next_line) - len(next_line.lstrip()) <= indent:
                    break
                collected.append(next_line.strip())
            reason = " ".join(item for item in collected if item)
            if reason:
                return reason
        return ""


def _addresses_in(line: str) -> Iterator[tuple[str, int]]:
    """A bounded number of candidates per "@" (local part <= 64, RFC 5321; domain <= 255) keeps it linear."""
    lowered = line.lower()
    position = lowered.find("@")
    while position != -1:
        local_run = _LOCAL_RUN.search(lowered, max(0, position - _LOCAL_MAX), position)
        domain_run = _DOMAIN_RUN.match(lowered, position + 1, position + 1 + _DOMAIN_MAX)
        if local_run is not None and domain_run is not None:
            run_end = domain_run.end()
            ends = {run_end, position + 1 + len(domain_run.group().rstrip("."))}
            ends = {end for end in ends if end > position + 1 and not _AFTER_ADDRESS.match(lowered, end)}
            for start in range(local_run.start(), position):
                if start > 0 and _BEFORE_ADDRESS.match(lowered, start - 1):
                    continue
                for end in sorted(ends, reverse=True):
                    yield lowered[start:end], end
        position = lowered.find("@", position + 1)


def _says_auto_reply(msg: Message) -> bool:
    """An auto-responder's own words for what it sent; no bounce writes these."""
    if _AUTO_SUBJECT.match(one_line(_header(msg, "subject"), SUBJECT_MAX)):
        return True
    if _all_headers(msg, "x-autoreply") or _all_headers(msg, "x-autorespond"):
        return True
    return _header(msg, "precedence").strip().lower() == "auto_reply"


def _is_auto_submitted(msg: Message) -> bool:
    """RFC 3834's mark, which mail servers put on their bounces as well (hence checked last)."""
    value = _header(msg, "auto-submitted")
    keyword = re.split(r"[\s;(]", value.strip(), maxsplit=1)[0].lower()
    return bool(keyword) and keyword != "no"


def _from_mail_system(msg: Message) -> bool:
    """A bounce flufl.bounce could not read is no auto-reply: left unclassified for a person."""
    sender = _addresses(_all_headers(msg, "from"))
    return bool(sender) and sender[0].partition("@")[0] in _MAIL_SYSTEMS


def _original(msg: Message, parts: list[Message], *, replied_to: bool = False) -> ClassifiedMessage:
    """Attached whole or as headers, or quoted in the text; an auto-reply's In-Reply-To (RFC 3834)."""
    headers = _attached_headers(_first_of(parts, _ORIGINAL_TYPES | _ORIGINAL_HEADER_TYPES)) or _quoted_headers(parts)
    if headers is not None:
        return ClassifiedMessage(
            kind=None,
            original_message_id=_message_id(_header(headers, "message-id")) or _quoted_message_id(parts),
            original_return_path=_address(_header(headers, "return-path")),
            original_to=tuple(_addresses(_all_headers(headers, "to"))),
        )
    if replied_to:
        return ClassifiedMessage(kind=None, original_message_id=_message_id(_header(msg, "in-reply-to")))
    return ClassifiedMessage(kind=None, original_message_id=_quoted_message_id(parts))


def _attached_headers(part: Message | None) -> Message | None:
    payload = None if part is None else part.get_payload()
    if isinstance(payload, list) and payload and isinstance(payload[0], Message):
        return payload[0]
    if part is not None and isinstance(payload, str):
        return _HEADERS.parsestr(_text(part).lstrip())
    return None


def _quoted_headers(parts: list[Message]) -> Message | None:
    """As qmail and Exim quote it."""
    for text in _plain_texts(parts):
        lines = text.splitlines()
        start = _quoted_headers_start(lines)
        if start is None:
            continue
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        return _HEADERS.parsestr("\n".join(lines[start:end]) + "\n")
    return None


def _quoted_headers_start(lines: list[str]) -> int | None:
    """The block runs up from a quoted ``Message-ID:`` to the blank line before it."""
    for index, line in enumerate(lines):
        if line.lower().startswith("message-id:"):
            start = index
            while (
                start > 0
                and lines[start - 1].strip()
                and (_HEADER_LINE.match(lines[start - 1]) or lines[start - 1][0] in " \t")
            ):
                start -= 1
            return start
    return None


def _quoted_message_id(parts: list[Message]) -> str | None:
    for text in _plain_texts(parts):
        match = _QUOTED_MESSAGE_ID.search(text)
        if match is not None:
            return _message_id(match["id"])
    return None


def _parts(msg: Message, depth: int = 0) -> Iterator[Message]:
    """Not an attached email's parts: a returned original may be a report itself."""
    yield msg
    if depth >= _MAX_DEPTH or msg.get_content_maintype() != "multipart":
        return
    payload = msg.get_payload()
    if isinstance(payload, list):
        for part in payload:
            if isinstance(part, Message):
                yield from _parts(part, depth + 1)


def _first_of(parts: Iterable[Message], types: frozenset[str] | set[str]) -> Message | None:
    return next((part for part in parts if part.get_content_type() in types), None)


def _is_report_of(msg: Message, report_type: str) -> bool:
    report_type_param = str(msg.get_param("report-type", "")).strip().lower()
    return msg.get_content_type() == "multipart/report" and report_type_param == report_type


def _text(part: Message) -> str:
    """An unknown charset or a broken encoding reads as UTF-8, replaced."""
    if isinstance(part, EmailMessage):
        try:
            content = part.get_content()
            if isinstance(content, str):
                return content
        except Exception:  # noqa: BLE001 - fall back to the bytes, decoded leniently
            pass
    return _utf8_payload(part)


def _plain_texts(parts: Iterable[Message]) -> Iterator[str]:
    return (_text(part) for part in parts if part.get_content_type() == "text/plain")


def _all_headers(msg: Message, name: str) -> list[str]:
    """A value the policy cannot parse is read raw rather than raising."""
    try:
        return [str(value) for value in msg.get_all(name) or []]
    except Exception:  # noqa: BLE001 - the default policy's parsers raise on some hostile values
        return [str(value) for key, value in msg.raw_items() if key.lower() == name]


def _header(msg: Message, name: str) -> str:
    values = _all_headers(msg, name)
    return values[0] if values else ""


def _addresses(values: list[str]) -> list[str]:
    found: list[str] = []
    for _name, value in getaddresses(values):
        address = _address(value)
        if address is not None and address not in found:
            found.append(address)
    return found


def _address(value: str) -> str | None:
    """``rfc822; <Reader@Example.org>`` -> ``reader@example.org``; None when it is no address."""
    value = one_line(value, 1000)
    kind, semicolon, rest = value.partition(";")
    if semicolon and "@" not in kind:
        value = rest.strip()
    address = parseaddr(value)[1] or value
    address = address.strip().strip("<>").strip().lower()
    local, at, domain = address.rpartition("@")
    return address if at and local and domain and " " not in address else None


def _message_id(value: str) -> str | None:
    value = one_line(value, 1000)
    match = re.search(r"<[^<>\s]+>", value)
    if match is not None:
        return match[0]
    # Some servers drop the brackets; a bare id still has its "@" (RFC 5322's id-left@id-right).
    token = value.split(" ")[0] if value else ""
    return f"<{token}>" if "@" in token else None
