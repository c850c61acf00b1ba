"""The site's emails, written here byte for byte (visitor text never becomes a header line but through
``header_words``: CVE-2024-6923), sent with aiosmtplib (cancelled cleanly at shutdown, no thread held by
a slow server), DKIM-signed when configured."""

from __future__ import annotations

import binascii
import contextlib
import re
import secrets
import ssl
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from email import utils as email_utils

import aiosmtplib

from publisher.config.settings import Settings
from publisher.content import list_copy
from publisher.content.site import BRAND_NAME
from publisher.returns import DeliveryFailed
from publisher.rules import bounces, form_fields, list_rules
from publisher.storage import tables

# RFC 5322 2.1.1: a line MUST be at most 998 characters (without its CRLF), and SHOULD be at most 78.
MAX_LINE_LENGTH = 998
FOLD_AT = 78
_FIELD_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext
# An address as a header carries it: a dot-atom local part, an ASCII domain (mailer.envelope_address).
_ADDRESS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+")
# RFC 8058: a mail provider's POST to the List-Unsubscribe link unsubscribes at once.
ONE_CLICK = "List-Unsubscribe=One-Click"
# Connect, TLS handshake and each SMTP command: a server slower than this is retried later.
SMTP_TIMEOUT_S = 30.0
# The random bytes in a Message-ID's left part (128 bits, from the OS through ``secrets``).
MESSAGE_ID_RANDOM_BYTES = 16


def verbatim_header(name: str, value: str) -> bytes:
    """``name: value`` and CRLF, folded only at a space outside ``<...>``; ValueError rather than a broken line."""
    if not _FIELD_NAME.fullmatch(name):
        raise ValueError(f"not a header name: {name!r}")
    if not (value.isascii() and value.isprintable()):
        raise ValueError(
            f"{name}: a header that carries a URL or a token must be printable ASCII on one line "
            f"(no CR, LF or other control character, nothing non-ASCII), got {value!r}"
        )
    lines = _fold_outside_brackets(f"{name}: {value}", first_fold=len(name) + 2)
    if (longest := max(len(line) for line in lines)) > MAX_LINE_LENGTH:
        raise ValueError(
            f"{name}: a line of {longest} characters is longer than RFC 5322's {MAX_LINE_LENGTH}, "
            "and it cannot be folded outside its <...>; it is not sent broken"
        )
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


def _fold_outside_brackets(line: str, first_fold: int) -> list[str]:
    depth = 0
    spaces = []
    for index, char in enumerate(line):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif (
            char == " "
            and depth == 0
            and index >= first_fold
            and line[index - 1] != " "
            and index + 1 < len(line)
            and line[index + 1] != " "
        ):
            spaces.append(index)
    lines, start = [], 0
    while len(line) - start > FOLD_AT:
        fitting = [space for space in spaces if start < space <= start + FOLD_AT]
        later = [space for space in spaces if space > start]
        if not later:
            break
        cut = fitting[-1] if fitting else later[0]
        lines.append(line[start:cut])
        start = cut  # the continuation line starts with the space
    lines.append(line[start:])
    return lines


def list_unsubscribe(link: str) -> str:
    if not (link.isascii() and link.isprintable()) or any(char in link for char in ' <>"'):
        raise ValueError(f"List-Unsubscribe: not one URL: {link!r}")
    return f"<{link}>"


class UnsafeHeaders(ValueError):
    """That one email is refused, never sent; nothing else stops."""

    def __init__(self, problem: str):
        super().__init__(f"not sent, its headers are unsafe: {problem}")
        self.problem = problem


# A plain word, written as typed: at most this long, so every header line stays within FOLD_AT.
PLAIN_WORD_MAX = 40
# An encoded word this module writes: at most this long (RFC 2047 allows 75), for the same reason.
ENCODED_WORD_MAX = 66
_ENCODED_WORD_START, _ENCODED_WORD_END = "=?utf-8?q?", "?="
_ENCODED_TEXT_MAX = ENCODED_WORD_MAX - len(_ENCODED_WORD_START) - len(_ENCODED_WORD_END)
# RFC 2047 5(3): the characters a "Q" encoded word may carry as themselves anywhere in a header.
_Q_LITERAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!*+/-")
# A plain word holds no "=" (so no "=?...?=" the receiver would decode) and nothing that would
# change how the header reads: in a display name, RFC 5322's atext; in other text (a Subject),
# any printable ASCII but "<" and ">" (which verbatim_header never folds inside).
_PLAIN_IN_PHRASE = re.compile(r"[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+")
_PLAIN_IN_TEXT = re.compile(r"[!-;?-~]+")
# Unicode's line breaks and controls (CR, LF, NEL, U+2028, U+2029...): a space in a header.
_BREAKING = ("Cc", "Zl", "Zp")


def header_words(text: str, *, phrase: bool = False) -> str:
    """Text from outside as header words (printable ASCII, never a line break): plain words as typed, the
    rest RFC 2047 "Q" words written here, so an encoded word typed in reads as typed, never decoded."""
    text = "".join(" " if unicodedata.category(char) in _BREAKING else char for char in text)
    plain_word = _PLAIN_IN_PHRASE if phrase else _PLAIN_IN_TEXT
    words = text.split(" ")
    encode = [len(word) > PLAIN_WORD_MAX or not plain_word.fullmatch(word) for word in words]
    # Two spaces in a row (or one at an end) leave an empty word, whose run would encode
    # nothing: it takes a plain neighbour into its run, so the spaces are carried too.
    for index, word in enumerate(words):
        alone = not word and not (index and encode[index - 1]) and not (index + 1 < len(words) and encode[index + 1])
        if alone and len(words) > 1:
            encode[index - 1 if index else index + 1] = True
    tokens: list[str] = []
    run: list[str] = []
    for word, encoded in zip(words, encode, strict=True):
        if encoded:
            run.append(word)
            continue
        if run:
            tokens.extend(_encoded_words(" ".join(run)))
            run = []
        tokens.append(word)
    if run and (joined := " ".join(run)):
        tokens.extend(_encoded_words(joined))
    return " ".join(tokens)


def _encoded_words(text: str) -> list[str]:
    # Adjacent encoded words: a reader joins them without the spaces between.
    pieces = []
    current = ""
    for char in text:
        if char == " ":
            piece = "_"
        elif char in _Q_LITERAL:
            piece = char
        else:
            piece = "".join(f"={byte:02X}" for byte in char.encode("utf-8", "replace"))
        if len(current) + len(piece) > _ENCODED_TEXT_MAX:
            pieces.append(current)
            current = ""
        current += piece
    pieces.append(current)
    return [f"{_ENCODED_WORD_START}{piece}{_ENCODED_WORD_END}" for piece in pieces]


def mailbox(display_name: str, address: str) -> str:
    if not _ADDRESS.fullmatch(address):
        raise UnsafeHeaders(f"not an address a header can carry: {address!r}")
    words = header_words(display_name, phrase=True)
    return f"{words} <{address}>" if words else address


def check_header_block(data: bytes, written: Sequence[str]) -> None:
    """Raise UnsafeHeaders unless the header block of ``data`` holds exactly the fields ``written``, in
    order, on clean lines: no ``Bcc:`` from a decoded name, no empty line starting the body early."""
    head, blank, _ = data.partition(b"\r\n\r\n")
    if not blank:
        raise UnsafeHeaders("no empty line ends the header block")
    found: list[str] = []
    for number, line in enumerate(head.split(b"\r\n"), 1):
        if b"\r" in line or b"\n" in line:
            raise UnsafeHeaders(f"header line {number} holds a CR or LF that is not a line end")
        if not line.isascii() or any(byte < 0x20 and byte != 0x09 or byte == 0x7F for byte in line):
            raise UnsafeHeaders(f"header line {number} holds a control character or a byte beyond ASCII")
        if len(line) > MAX_LINE_LENGTH:
            raise UnsafeHeaders(f"header line {number} is longer than {MAX_LINE_LENGTH} characters")
        if line[:1] in (b" ", b"\t"):
            if not found:
                raise UnsafeHeaders("the header block starts with a continuation line")
            if not line.strip():
                raise UnsafeHeaders(f"header line {number} is only spaces (an empty line inside the header block)")
            continue
        name, colon, _ = line.partition(b":")
        if not colon or not _FIELD_NAME.fullmatch(name.decode("ascii")):
            raise UnsafeHeaders(f"header line {number} is not a header (name: value): {line[:40].decode('ascii')!r}")
        found.append(name.decode("ascii"))
    expected = [name.lower() for name in written]
    if [name.lower() for name in found] == expected:
        return
    strangers = [name for name in found if name.lower() not in expected]
    if strangers:
        raise UnsafeHeaders(f"it holds headers the site did not write: {', '.join(strangers)}")
    missing = [name for name in written if name.lower() not in {name.lower() for name in found}]
    if missing:
        raise UnsafeHeaders(
            f"the header block ends before {', '.join(missing)} (an empty line inside it starts the body early)"
        )
    raise UnsafeHeaders(f"its headers are {', '.join(found)}, not the {', '.join(written)} written")


def return_path(settings: Settings, delivery_id: int) -> str | None:
    """VERP: what comes back names its email; None: the From address."""
    if settings.bounce_address is None:
        return None
    return bounces.verp_address(settings.bounce_address, settings.list_secrets[0], delivery_id)


def new_message_id(settings: Settings) -> str:
    """A bounce is matched to its email by it, so it must be unguessable: ``email.utils.make_msgid`` draws
    from ``random`` (predictable), ``secrets`` from the OS."""
    return f"<{secrets.token_hex(MESSAGE_ID_RANDOM_BYTES)}@{settings.domain}>"


def recipient_address(name: str, email: str) -> str:
    return mailbox(name, envelope_address(email))


def envelope_address(email: str) -> str:
    """Its domain in ASCII; one that needs SMTPUTF8 fails its own email, permanently, never the sender."""
    if email.isascii():
        return email
    try:
        return form_fields.sendable_address(email)
    except form_fields.NotSendable as exc:
        raise DeliveryFailed(str(exc), permanent=True) from None


def _sent_at(moment: datetime) -> str:
    return moment.strftime("%A %-d %B %Y, %H:%M:%S UTC")


def text_part(subtype: str, content: str) -> bytes:
    """Quoted-printable, every line ending CRLF: a bare CR a visitor typed is a line break (a server
    rewriting it would break the DKIM signature)."""
    lines = content.replace("\r\n", "\n").replace("\r", "\n")
    body = binascii.b2a_qp(lines.encode("utf-8"), istext=True).replace(b"\n", b"\r\n")
    if not body.endswith(b"\r\n"):
        body += b"\r\n"
    return (
        f'Content-Type: text/{subtype}; charset="utf-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
    ).encode() + body


def compose(
    settings: Settings,
    *,
    subject: str,
    moment: datetime,
    message_id: str,
    body: str = "",
    to: str | None = None,
    reply_to: str | None = None,
    unsubscribe_link: str | None = None,
    multipart: tuple[str, bytes] | None = None,
) -> bytes:
    """``to`` None: the publisher's inbox; ``unsubscribe_link``: a list email; ``multipart``: (Content-Type,
    parts). Its headers in the site's order, checked: ValueError when one cannot be written right, no email."""
    headers = [
        ("From", mailbox(settings.mail_from.name, settings.mail_from.address)),
        ("To", to or ", ".join(mailbox("", envelope_address(address)) for address in settings.notify_to)),
        *([("Reply-To", reply_to)] if reply_to is not None else []),
        ("Subject", header_words(subject)),
        ("Date", email_utils.format_datetime(moment)),
        ("Message-ID", message_id),
        *([] if unsubscribe_link is None else _list_headers(settings, unsubscribe_link)),
        ("MIME-Version", "1.0"),
        *([] if multipart is None else [("Content-Type", multipart[0])]),
    ]
    content = text_part("plain", body) if multipart is None else b"\r\n" + multipart[1]
    data = b"".join(verbatim_header(name, value) for name, value in headers) + content
    part_headers = ["Content-Type", "Content-Transfer-Encoding"] if multipart is None else []
    check_header_block(data, [name for name, _ in headers] + part_headers)
    return data


def _list_headers(settings: Settings, unsubscribe_link: str) -> list[tuple[str, str]]:
    return [
        ("List-Unsubscribe", list_unsubscribe(unsubscribe_link)),
        ("List-Unsubscribe-Post", ONE_CLICK),
        # RFC 2919: lets a reader's client file and filter the list's emails.
        ("List-Id", f"{BRAND_NAME} new releases <new-releases.{settings.domain}>"),
    ]


def contact_email(settings: Settings, source: tables.ContactMessage, message_id: str) -> bytes:
    name, email, received_at = source.sender_name, source.sender_email, source.received_at
    body = f"From: {name} <{email}>\nSent: {_sent_at(received_at)}\n\n{source.message}\n"
    visitor = recipient_address(name, email)
    return compose(
        settings, subject=source.subject, reply_to=visitor, moment=received_at, message_id=message_id, body=body
    )


def subscriber_notice(settings: Settings, source: tables.Subscriber, message_id: str) -> bytes:
    name, email, subscribed_at, confirmed_at = source.name, source.email, source.subscribed_at, source.confirmed_at
    subscriber = recipient_address(name, email)
    confirmed = f"Confirmed: {_sent_at(confirmed_at)}\n" if confirmed_at else ""
    body = f"{name} <{email}> joined the new-release email list.\nSubscribed: {_sent_at(subscribed_at)}\n{confirmed}"
    subject, moment = f"New subscriber: {name}", confirmed_at or subscribed_at
    return compose(settings, subject=subject, reply_to=subscriber, moment=moment, message_id=message_id, body=body)


def publisher_notice(settings: Settings, source: tables.PublisherNotice, message_id: str) -> bytes:
    return compose(settings, subject=source.subject, moment=source.created_at, message_id=message_id, body=source.body)


def asked_for(joins: bool, titles: Sequence[str]) -> str:
    books = f"{', '.join(titles[:-1])} and {titles[-1]}" if len(titles) > 1 else "".join(titles)
    wait = (list_copy.ASKED_FOR_BOOKS if len(titles) > 1 else list_copy.ASKED_FOR_BOOK).format(titles=books)
    if not titles:
        return list_copy.ASKED_TO_JOIN
    return list_copy.ASKED_BOTH.format(join=list_copy.ASKED_TO_JOIN, wait=wait) if joins else wait


def confirmation_email(
    settings: Settings, source: tables.Subscriber, site: str, message_id: str, books: Sequence[str] = ()
) -> bytes:
    """To the bare address, no name: until the reader confirms, what was typed into the form is a
    stranger's words (a book's title is the publisher's)."""
    sent_at = source.confirmation_sent_at
    assert sent_at is not None  # a row waiting for its confirmation has the time it was asked
    link = list_rules.confirm_url(site, settings.list_secrets[0], source.link_key, sent_at)
    to = recipient_address("", source.email)
    asked = asked_for(source.book_updates != tables.WAITLIST_ONLY, books)
    body = list_copy.CONFIRMATION_TEXT.format(asked=asked, site=site, link=link, brand=BRAND_NAME)
    subject = list_copy.CONFIRMATION_SUBJECT
    return compose(settings, to=to, subject=subject, moment=sent_at, message_id=message_id, body=body)


def welcome_email(settings: Settings, source: tables.Subscriber, site: str, message_id: str) -> bytes:
    assert source.confirmed_at is not None  # a confirmed row has its time
    name, confirmed_at = source.name, source.confirmed_at
    unsubscribe_link = list_rules.unsubscribe_url(site, settings.list_secrets[0], source.link_key)
    reader = recipient_address(name, source.email)
    body = list_copy.WELCOME_TEXT.format(name=name, list_name=list_copy.LIST_NAME, brand=BRAND_NAME, site=site)
    why = list_copy.LIST_EMAIL_WHY.format(list_name=list_copy.LIST_NAME, site=site)
    footer = [why, list_copy.LIST_EMAIL_UNSUBSCRIBE.format(link=unsubscribe_link), settings.postal_address]
    text = "\n".join(line for line in footer if line)
    return compose(
        settings,
        to=reader,
        subject=list_copy.WELCOME_SUBJECT,
        moment=confirmed_at,
        message_id=message_id,
        body=f"{body}\n--\n{text}\n",
        unsubscribe_link=unsubscribe_link,
    )


def _reply(code: int, text: str) -> str:
    return f"{code} {' '.join(text.split())}".strip()


def _failure(exc: BaseException) -> DeliveryFailed:
    """A 5xx reply is permanent, anything else is worth retrying."""
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused):
        reason = "; ".join(f"{r.recipient}: {_reply(r.code, r.message)}" for r in exc.recipients)
        permanent = all(r.code >= 500 for r in exc.recipients)
        return DeliveryFailed(f"recipients refused: {reason}", permanent=permanent, about_recipient=True)
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        return DeliveryFailed(
            _reply(exc.code, exc.message),
            permanent=500 <= exc.code < 600,
            about_recipient=isinstance(exc, aiosmtplib.SMTPDataError),
        )
    if isinstance(exc, aiosmtplib.SMTPTimeoutError | TimeoutError):
        return DeliveryFailed(f"timed out after {SMTP_TIMEOUT_S:g} s", permanent=False)
    if isinstance(exc, aiosmtplib.SMTPConnectError):
        return DeliveryFailed(f"cannot connect: {exc}", permanent=False)
    text = str(exc).strip() or type(exc).__name__
    return DeliveryFailed(f"{type(exc).__name__}: {text}", permanent=False)


# What a DKIM signature covers (when configured): Gmail asks for the unsubscribe headers among them.
DKIM_HEADERS = (
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
    "List-Id",
    "MIME-Version",
    "Content-Type",
)


def signed(data: bytes, settings: Settings) -> bytes:
    if settings.dkim is None:
        return data
    import dkim  # noqa: PLC0415 (only a site that signs needs it)

    head = data.split(b"\r\n\r\n", 1)[0].decode("ascii")
    present = {line.partition(":")[0].lower() for line in head.split("\r\n") if line[:1] not in (" ", "\t")}
    covered = [name.encode() for name in DKIM_HEADERS if name.lower() in present]
    signature = dkim.sign(
        data,
        settings.dkim.selector.encode(),
        settings.dkim.domain.encode(),
        settings.dkim.private_key,
        include_headers=covered,
        canonicalize=(b"relaxed", b"relaxed"),
    )
    return signature + data


def _client(settings: Settings) -> aiosmtplib.SMTP:
    server = settings.smtp_url
    assert server is not None  # the mail code is given settings with an SMTP URL
    tls_context = ssl.create_default_context()  # the system's trusted certificates, and a relay's own
    if settings.smtp_ca_file:
        tls_context.load_verify_locations(cafile=settings.smtp_ca_file)
    return aiosmtplib.SMTP(
        hostname=server.host,
        port=server.port,
        username=server.username or None,
        password=server.password if server.username else None,
        use_tls=server.implicit_tls,
        start_tls=True if server.require_starttls else None,  # None: STARTTLS when offered
        tls_context=tls_context,
        timeout=SMTP_TIMEOUT_S,
    )


class SmtpSession:
    """One SMTP connection for a release's many emails, opened again after the server drops it."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._client: aiosmtplib.SMTP | None = None

    async def _open(self) -> aiosmtplib.SMTP:
        if self._client is not None and self._client.is_connected:
            return self._client
        client = _client(self.settings)
        try:
            await client.connect()
        except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
            client.close()
            raise DeliveryFailed(_failure(exc).reason, permanent=False) from None
        self._client = client
        return client

    async def begin(self, recipient: str, envelope_from: str | None = None) -> None:
        """MAIL FROM and RCPT TO, sent while the previous email is recorded; nothing goes before ``finish``."""
        client = await self._open()
        recipient = envelope_address(recipient)
        await self._command(client.mail(envelope_from or self.settings.mail_from.address))
        try:
            await self._command(client.rcpt(recipient))
        except aiosmtplib.SMTPRecipientRefused as refused:
            await self.abandon()
            raise _failure(aiosmtplib.SMTPRecipientsRefused([refused])) from None

    async def finish(self, message: bytes) -> None:
        """DATA for the envelope ``begin`` opened, on the same connection only: a new one has no envelope,
        and its refusal would read as the recipient's permanent failure."""
        if self._client is None or not self._client.is_connected:
            raise DeliveryFailed("the server closed the connection after the envelope", permanent=False)
        await self._command(self._client.data(signed(message, self.settings)))

    async def _command(self, command):
        try:
            return await command
        except aiosmtplib.SMTPRecipientRefused:
            raise
        except aiosmtplib.SMTPServerDisconnected as exc:
            self.discard()
            raise DeliveryFailed(f"the server closed the connection: {exc}", permanent=False) from None
        except (aiosmtplib.SMTPRecipientsRefused, aiosmtplib.SMTPResponseException) as exc:
            await self.abandon()
            raise _failure(exc) from None
        except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
            self.discard()
            raise DeliveryFailed(_failure(exc).reason, permanent=False) from None

    async def abandon(self) -> None:
        if self._client is None or not self._client.is_connected:
            return
        try:
            await self._client.rset()
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            self.discard()

    def discard(self) -> None:
        """Without a word to the server: its state is unknown, or it is gone."""
        if self._client is not None:
            self._client.close()
        self._client = None

    async def close(self) -> None:
        if self._client is not None and self._client.is_connected:
            with contextlib.suppress(aiosmtplib.SMTPException, OSError, TimeoutError):
                await self._client.quit()
        self.discard()


async def send(
    message: bytes, settings: Settings, recipients: tuple[str, ...] = (), envelope_from: str | None = None
) -> str | None:
    """To ``recipients`` (none: the publisher's inbox); a note when some were refused, DeliveryFailed when all."""
    envelope = [envelope_address(recipient) for recipient in recipients or settings.notify_to]
    data = signed(message, settings)
    client = _client(settings)
    try:
        async with client:
            refused, _reply_text = await client.sendmail(envelope_from or settings.mail_from.address, envelope, data)
    except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
        raise _failure(exc) from None
    if not refused:
        return None
    return "accepted, but refused for " + "; ".join(
        f"{recipient}: {_reply(code, text)}" for recipient, (code, text) in refused.items()
    )
