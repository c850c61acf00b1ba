"""The site's emails: built with the standard library, sent with aiosmtplib, DKIM-signed when configured.
aiosmtplib, not smtplib in a thread: a task on the event loop is cancelled cleanly at shutdown (a thread
blocked in smtplib is not), and a slow server costs no thread of the pool the storage uses."""

from __future__ import annotations

import contextlib
import secrets
import ssl
from datetime import datetime
from email import errors as email_errors
from email import utils as email_utils
from email.message import EmailMessage

import aiosmtplib

from publisher.config.settings import MailSettings
from publisher.content import list_copy
from publisher.content.site import BRAND_NAME
from publisher.mail import headers
from publisher.mail.headers import WIRE, list_unsubscribe
from publisher.rules import bounces, validation

# Connect, TLS handshake and each SMTP command: a server slower than this is retried later.
SMTP_TIMEOUT_S = 30.0
# The random bytes in a Message-ID's left part (128 bits, from the OS through ``secrets``).
MESSAGE_ID_RANDOM_BYTES = 16


def return_path(settings: MailSettings, delivery_id: int) -> str | None:
    """A list email's envelope sender: ``bounces+TOKEN@domain`` (VERP) with a bounce address, so whatever
    comes back names the email it is about; None (the From address) otherwise."""
    if settings.bounce_address is None:
        return None
    return bounces.verp_address(settings.bounce_address, settings.list_secret, delivery_id)


def new_message_id(settings: MailSettings) -> str:
    """An RFC 5322 msg-id, fixed when the job is stored. A bounce is matched to its email by it, so it must
    be unguessable: ``email.utils.make_msgid`` draws from ``random`` (predictable), ``secrets`` from the OS."""
    return f"<{secrets.token_hex(MESSAGE_ID_RANDOM_BYTES)}@{settings.domain}>"


def sender_address(settings: MailSettings) -> headers.Written:
    """From: the site's name and address."""
    return headers.mailbox(settings.mail_from_name, settings.mail_from)


def recipient_address(name: str, email: str) -> headers.Written:
    """A reader's or a visitor's name and address, the address with its domain in ASCII."""
    return headers.mailbox(name, envelope_address(email))


def publisher_inbox(settings: MailSettings) -> headers.Written:
    """To: the publisher's inbox (``PUBLISHER_NOTIFY_TO``), bare addresses."""
    return headers.address_list(headers.mailbox("", envelope_address(address)) for address in settings.notify_to)


def envelope_address(email: str) -> str:
    """The address as the SMTP envelope carries it: its domain in ASCII. One that needs SMTPUTF8 fails its
    own email, permanently, never the sender."""
    if email.isascii():
        return email
    try:
        return validation.sendable_address(email)
    except validation.NotSendable as exc:
        raise DeliveryFailed(str(exc), permanent=True) from None


def _sent_at(moment: datetime) -> str:
    return moment.strftime("%A %-d %B %Y, %H:%M:%S UTC")


def _email(
    settings: MailSettings,
    *,
    subject: str,
    moment: datetime,
    message_id: str,
    to: headers.Written | None = None,
    reply_to: headers.Written | None = None,
) -> EmailMessage:
    """An email from the site (``to`` None: to the publisher's inbox), its headers in the
    order each of the site's emails writes them."""
    message = EmailMessage(policy=WIRE)
    message["From"] = sender_address(settings)
    message["To"] = publisher_inbox(settings) if to is None else to
    if reply_to is not None:
        message["Reply-To"] = reply_to
    message["Subject"] = headers.unstructured(subject)
    message["Date"] = email_utils.format_datetime(moment)
    message["Message-ID"] = message_id
    return message


def contact_email(
    settings: MailSettings,
    *,
    sender_name: str,
    sender_email: str,
    subject: str,
    text: str,
    received_at: datetime,
    message_id: str,
) -> EmailMessage:
    """A contact message as the publisher receives it: Reply answers the visitor."""
    visitor = recipient_address(sender_name, sender_email)
    message = _email(settings, subject=subject, reply_to=visitor, moment=received_at, message_id=message_id)
    message.set_content(
        f"From: {sender_name} <{sender_email}>\nSent: {_sent_at(received_at)}\n\n{text}\n",
        charset="utf-8",
        cte="quoted-printable",
    )
    return message


def subscriber_notice(
    settings: MailSettings,
    *,
    name: str,
    email: str,
    subscribed_at: datetime,
    message_id: str,
    confirmed_at: datetime | None = None,
) -> EmailMessage:
    """The optional notice of a new address on the new-release list (sent once it is confirmed)."""
    subscriber = recipient_address(name, email)
    moment = confirmed_at or subscribed_at
    message = _email(
        settings, subject=f"New subscriber: {name}", reply_to=subscriber, moment=moment, message_id=message_id
    )
    confirmed = f"Confirmed: {_sent_at(confirmed_at)}\n" if confirmed_at else ""
    message.set_content(
        f"{name} <{email}> joined the new-release email list.\nSubscribed: {_sent_at(subscribed_at)}\n{confirmed}",
        charset="utf-8",
        cte="quoted-printable",
    )
    return message


def publisher_notice(
    settings: MailSettings, *, subject: str, body: str, written_at: datetime, message_id: str
) -> EmailMessage:
    """An email the site writes to the publisher when something needs them: nothing a visitor typed in it."""
    message = _email(settings, subject=subject, moment=written_at, message_id=message_id)
    message.set_content(body, charset="utf-8", cte="quoted-printable")
    return message


def confirmation_email(
    settings: MailSettings, *, email: str, link: str, site: str, sent_at: datetime, message_id: str
) -> EmailMessage:
    """Double opt-in: who writes and why, and the link that confirms. To the bare address, no name: until
    the reader confirms, what was typed into the form is a stranger's words."""
    message = _email(
        settings,
        to=recipient_address("", email),
        subject=list_copy.CONFIRMATION_SUBJECT,
        moment=sent_at,
        message_id=message_id,
    )
    body = list_copy.CONFIRMATION_TEXT.format(list_name=list_copy.LIST_NAME, site=site, link=link, brand=BRAND_NAME)
    message.set_content(body, charset="utf-8", cte="quoted-printable")
    return message


def list_footer(settings: MailSettings, *, site: str, unsubscribe_link: str) -> str:
    """The foot of every list email: why the reader gets it, the one-click way out, the postal address."""
    lines = [
        list_copy.LIST_EMAIL_WHY.format(list_name=list_copy.LIST_NAME, site=site),
        list_copy.LIST_EMAIL_UNSUBSCRIBE.format(link=unsubscribe_link),
    ]
    if settings.postal_address:
        lines.append(settings.postal_address)
    return "\n".join(lines) + "\n"


# RFC 8058: a mail provider's POST to the List-Unsubscribe link unsubscribes at once.
ONE_CLICK = "List-Unsubscribe=One-Click"


def list_id(settings: MailSettings) -> str:
    """RFC 2919's List-Id: lets a reader's client file and filter the list's emails."""
    return f"{BRAND_NAME} new releases <new-releases.{settings.domain}>"


def add_list_headers(message: EmailMessage, settings: MailSettings, unsubscribe_link: str) -> None:
    """RFC 2369's List-Unsubscribe, RFC 8058's one-click, RFC 2919's List-Id; under the WIRE policy one
    that cannot be written right raises ValueError here, before the email is built."""
    message["List-Unsubscribe"] = list_unsubscribe(unsubscribe_link)
    message["List-Unsubscribe-Post"] = ONE_CLICK
    message["List-Id"] = list_id(settings)


def welcome_email(
    settings: MailSettings,
    *,
    name: str,
    email: str,
    site: str,
    unsubscribe_link: str,
    confirmed_at: datetime,
    message_id: str,
) -> EmailMessage:
    """The first list email: what the reader will get, and how often."""
    reader = recipient_address(name, email)
    message = _email(settings, to=reader, subject=list_copy.WELCOME_SUBJECT, moment=confirmed_at, message_id=message_id)
    add_list_headers(message, settings, unsubscribe_link)
    body = list_copy.WELCOME_TEXT.format(name=name, list_name=list_copy.LIST_NAME, brand=BRAND_NAME, site=site)
    footer = list_footer(settings, site=site, unsubscribe_link=unsubscribe_link)
    message.set_content(f"{body}\n--\n{footer}", charset="utf-8", cte="quoted-printable")
    return message


class DeliveryFailed(Exception):
    """The server did not take the message. ``permanent``: a 5xx refusal, never retried.
    ``about_recipient``: refused at RCPT or DATA, not the session: for a list email, a bounce."""

    def __init__(self, reason: str, *, permanent: bool, about_recipient: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.about_recipient = about_recipient


def tls_context(settings: MailSettings) -> ssl.SSLContext:
    """The system's trusted certificates, plus ``PUBLISHER_SMTP_CA_FILE`` (a relay's own)."""
    context = ssl.create_default_context()
    if settings.ca_file:
        context.load_verify_locations(cafile=settings.ca_file)
    return context


def _reply(code: int, text: str) -> str:
    return f"{code} {' '.join(text.split())}".strip()


def _failure(exc: BaseException) -> DeliveryFailed:
    """Classify what went wrong: a 5xx reply is permanent, anything else is worth retrying."""
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused):
        codes = [refusal.code for refusal in exc.recipients]
        reason = "; ".join(f"{r.recipient}: {_reply(r.code, r.message)}" for r in exc.recipients)
        return DeliveryFailed(
            f"recipients refused: {reason}", permanent=all(code >= 500 for code in codes), about_recipient=True
        )
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


def wire_bytes(message: EmailMessage, settings: MailSettings) -> bytes:
    """The message as it goes on the wire, DKIM-signed when a key is set; its header block must hold exactly
    the headers set (else headers.UnsafeHeaders, never sent; CVE-2024-6923)."""
    try:
        data = message.as_bytes(policy=WIRE)
    except email_errors.MessageError as exc:  # HeaderWriteError, on interpreters with the fix
        raise headers.UnsafeHeaders(f"the email package refused to write it: {exc}") from None
    headers.check_header_block(data, message.keys())
    return signed(data, settings)


def signed(data: bytes, settings: MailSettings) -> bytes:
    """``data`` (a whole message, CRLF lines) with a DKIM-Signature first when a key is set."""
    if settings.dkim is None:
        return data
    import dkim  # noqa: PLC0415 (only a site that signs needs it)

    head = data.split(b"\r\n\r\n", 1)[0].decode("ascii")
    present = {line.partition(":")[0].lower() for line in head.split("\r\n") if line[:1] not in (" ", "\t")}
    headers = [name.encode() for name in DKIM_HEADERS if name.lower() in present]
    signature = dkim.sign(
        data,
        settings.dkim.selector.encode(),
        settings.dkim.domain.encode(),
        settings.dkim.private_key,
        include_headers=headers,
        canonicalize=(b"relaxed", b"relaxed"),
    )
    return signature + data


def _client(settings: MailSettings) -> aiosmtplib.SMTP:
    server = settings.server
    return aiosmtplib.SMTP(
        hostname=server.host,
        port=server.port,
        username=server.username,
        password=server.password,
        use_tls=server.implicit_tls,
        start_tls=True if server.require_starttls else None,  # None: STARTTLS when offered
        tls_context=tls_context(settings),
        timeout=SMTP_TIMEOUT_S,
    )


def _refusal_note(refused: dict) -> str | None:
    if not refused:
        return None
    return "accepted, but refused for " + "; ".join(
        f"{recipient}: {_reply(code, text)}" for recipient, (code, text) in refused.items()
    )


class ConnectionTrouble(DeliveryFailed):
    """The server could not be reached, or refused the session itself (TLS, login): no
    recipient's fault, so never final for one; the session must be opened afresh."""

    def __init__(self, reason: str):
        super().__init__(reason, permanent=False)


class SmtpSession:
    """One SMTP connection for many messages (a release): opened on the first send, kept
    while messages follow, opened again after the server drops it. ``close()`` ends it."""

    def __init__(self, settings: MailSettings):
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
            raise ConnectionTrouble(_failure(exc).reason) from None
        self._client = client
        return client

    async def send(self, message: bytes, recipient: str, envelope_from: str | None = None) -> None:
        """Hand one message (wire bytes, signed here) to the server for one recipient. Raises DeliveryFailed:
        a ConnectionTrouble, or the server's answer to this message (5xx: permanent)."""
        await self.begin(recipient, envelope_from)
        await self.finish(message)

    async def begin(self, recipient: str, envelope_from: str | None = None) -> None:
        """The envelope of the next message (MAIL FROM, RCPT TO), so a campaign opens it while the previous
        email is recorded; nothing is delivered before ``finish``, and ``abandon`` drops it."""
        client = await self._open()
        recipient = envelope_address(recipient)
        await self._command(client.mail(envelope_from or self.settings.mail_from))
        try:
            await self._command(client.rcpt(recipient))
        except aiosmtplib.SMTPRecipientRefused as refused:
            await self._reset()
            raise _failure(aiosmtplib.SMTPRecipientsRefused([refused])) from None

    async def finish(self, message: bytes) -> None:
        """DATA for the envelope ``begin`` opened, on the same connection only: a new one has no envelope,
        and its refusal would read as the recipient's permanent failure."""
        if self._client is None or not self._client.is_connected:
            raise ConnectionTrouble("the server closed the connection after the envelope")
        await self._command(self._client.data(signed(message, self.settings)))

    async def abandon(self) -> None:
        """Drop the envelope ``begin`` opened (the reader left the list meanwhile)."""
        await self._reset()

    async def _command(self, command):
        try:
            return await command
        except aiosmtplib.SMTPRecipientRefused:
            raise
        except aiosmtplib.SMTPServerDisconnected as exc:
            self._drop()
            raise ConnectionTrouble(f"the server closed the connection: {exc}") from None
        except (aiosmtplib.SMTPRecipientsRefused, aiosmtplib.SMTPResponseException) as exc:
            await self._reset()
            raise _failure(exc) from None
        except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
            self._drop()
            raise ConnectionTrouble(_failure(exc).reason) from None

    async def _reset(self) -> None:
        """After a refused message the session goes on, from a clean state (RSET)."""
        if self._client is None or not self._client.is_connected:
            return
        try:
            await self._client.rset()
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            self._drop()

    def _drop(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None

    def discard(self) -> None:
        """Forget the connection without a word to the server: after an error no rule
        foresaw, its state is unknown; the next message opens a new one."""
        self._drop()

    async def close(self) -> None:
        if self._client is not None and self._client.is_connected:
            with contextlib.suppress(aiosmtplib.SMTPException, OSError, TimeoutError):
                await self._client.quit()
        self._drop()


async def send(
    message: EmailMessage,
    settings: MailSettings,
    recipients: tuple[str, ...] = (),
    envelope_from: str | None = None,
) -> str | None:
    """Hand ``message`` to the SMTP server for ``recipients`` (none: the publisher's inbox); a note when
    some were refused. ``envelope_from``: the Return-Path (None: From). Raises DeliveryFailed."""
    envelope = [envelope_address(recipient) for recipient in recipients or settings.notify_to]
    data = wire_bytes(message, settings)
    client = _client(settings)
    try:
        async with client:
            refused, _reply_text = await client.sendmail(envelope_from or settings.mail_from, envelope, data)
    except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
        raise _failure(exc) from None
    return _refusal_note(refused)
