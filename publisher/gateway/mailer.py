"""Emails to the publisher: built with the standard library, sent with aiosmtplib.

``email.message.EmailMessage`` with the SMTP policy writes every header, so a
visitor's name can never add one (CR/LF in a header value is refused) and a
non-ASCII name is encoded as RFC 2047 words. The body is UTF-8 plain text in
quoted-printable, which every server accepts.

aiosmtplib rather than smtplib in a thread: the sender is a task on the backend's
own event loop, so shutting down cancels it cleanly (a thread blocked in smtplib
cannot be interrupted), timeouts cover connect, TLS and each command, and waiting
on a slow server costs no thread from the pool the gateway's storage uses.
"""

from __future__ import annotations

import ssl
from datetime import datetime
from email import utils as email_utils
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP

import aiosmtplib

from publisher.content import list_copy
from publisher.content.site import BRAND_NAME
from publisher.settings import MailSettings

# Connect, TLS handshake and each SMTP command: a server slower than this is retried later.
SMTP_TIMEOUT_S = 30.0


def new_message_id(settings: MailSettings) -> str:
    """A Message-ID fixed when the job is stored, so every send of it carries the same one."""
    return email_utils.make_msgid(domain=settings.domain)


def _address(display_name: str, addr: str) -> Address:
    username, _, domain = addr.rpartition("@")
    return Address(display_name=display_name, username=username, domain=domain)


def _sent_at(moment: datetime) -> str:
    return moment.strftime("%A %-d %B %Y, %H:%M:%S UTC")


def _base(
    settings: MailSettings, *, subject: str, reply_to: Address, moment: datetime, message_id: str
) -> EmailMessage:
    message = EmailMessage(policy=SMTP)
    message["From"] = _address(settings.mail_from_name, settings.mail_from)
    message["To"] = [_address("", recipient) for recipient in settings.notify_to]
    message["Reply-To"] = reply_to
    message["Subject"] = subject
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
    visitor = _address(sender_name, sender_email)
    message = _base(settings, subject=subject, reply_to=visitor, moment=received_at, message_id=message_id)
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
    subscriber = _address(name, email)
    moment = confirmed_at or subscribed_at
    message = _base(
        settings, subject=f"New subscriber: {name}", reply_to=subscriber, moment=moment, message_id=message_id
    )
    confirmed = f"Confirmed: {_sent_at(confirmed_at)}\n" if confirmed_at else ""
    message.set_content(
        f"{name} <{email}> joined the new-release email list.\nSubscribed: {_sent_at(subscribed_at)}\n{confirmed}",
        charset="utf-8",
        cte="quoted-printable",
    )
    return message


def _to_subscriber(
    settings: MailSettings, *, name: str, email: str, subject: str, moment: datetime, message_id: str
) -> EmailMessage:
    message = EmailMessage(policy=SMTP)
    message["From"] = _address(settings.mail_from_name, settings.mail_from)
    message["To"] = _address(name, email)
    message["Subject"] = subject
    message["Date"] = email_utils.format_datetime(moment)
    message["Message-ID"] = message_id
    return message


def confirmation_email(
    settings: MailSettings, *, name: str, email: str, link: str, site: str, sent_at: datetime, message_id: str
) -> EmailMessage:
    """Double opt-in: who writes and why, and the link to the page that confirms. Not a list email."""
    message = _to_subscriber(
        settings,
        name=name,
        email=email,
        subject=list_copy.CONFIRMATION_SUBJECT,
        moment=sent_at,
        message_id=message_id,
    )
    body = list_copy.CONFIRMATION_TEXT.format(
        name=name, list_name=list_copy.LIST_NAME, site=site, link=link, brand=BRAND_NAME
    )
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


def add_list_headers(message: EmailMessage, settings: MailSettings, unsubscribe_link: str) -> None:
    """RFC 8058 one-click unsubscribe (a mail provider's POST to the link), and RFC 2919's List-Id."""
    message["List-Unsubscribe"] = f"<{unsubscribe_link}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["List-Id"] = f"{BRAND_NAME} new releases <new-releases.{settings.domain}>"


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
    message = _to_subscriber(
        settings, name=name, email=email, subject=list_copy.WELCOME_SUBJECT, moment=confirmed_at, message_id=message_id
    )
    add_list_headers(message, settings, unsubscribe_link)
    body = list_copy.WELCOME_TEXT.format(name=name, list_name=list_copy.LIST_NAME, brand=BRAND_NAME, site=site)
    footer = list_footer(settings, site=site, unsubscribe_link=unsubscribe_link)
    message.set_content(f"{body}\n--\n{footer}", charset="utf-8", cte="quoted-printable")
    return message


class DeliveryFailed(Exception):
    """The server did not take the message. ``permanent``: a 5xx refusal, never retried."""

    def __init__(self, reason: str, *, permanent: bool):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


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
        return DeliveryFailed(f"recipients refused: {reason}", permanent=all(code >= 500 for code in codes))
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        return DeliveryFailed(_reply(exc.code, exc.message), permanent=500 <= exc.code < 600)
    if isinstance(exc, aiosmtplib.SMTPTimeoutError | TimeoutError):
        return DeliveryFailed(f"timed out after {SMTP_TIMEOUT_S:g} s", permanent=False)
    if isinstance(exc, aiosmtplib.SMTPConnectError):
        return DeliveryFailed(f"cannot connect: {exc}", permanent=False)
    text = str(exc).strip() or type(exc).__name__
    return DeliveryFailed(f"{type(exc).__name__}: {text}", permanent=False)


async def send(message: EmailMessage, settings: MailSettings, recipients: tuple[str, ...] = ()) -> str | None:
    """Hand ``message`` to the SMTP server for ``recipients`` (the publisher's inbox when
    none are given); a note when some recipients were refused.

    Raises DeliveryFailed. STARTTLS is required except on loopback (see settings.SmtpServer).
    """
    server = settings.server
    try:
        refused, _reply_text = await aiosmtplib.send(
            message,
            sender=settings.mail_from,
            recipients=list(recipients or settings.notify_to),
            hostname=server.host,
            port=server.port,
            username=server.username,
            password=server.password,
            use_tls=server.implicit_tls,
            start_tls=True if server.require_starttls else None,  # None: STARTTLS when offered
            tls_context=tls_context(settings),
            timeout=SMTP_TIMEOUT_S,
        )
    except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError) as exc:
        raise _failure(exc) from None
    if refused:
        return "accepted, but refused for " + "; ".join(
            f"{recipient}: {_reply(code, text)}" for recipient, (code, text) in refused.items()
        )
    return None
