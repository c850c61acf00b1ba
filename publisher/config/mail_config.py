"""The parsers of the mail and bounce settings (PUBLISHER_SMTP_URL, PUBLISHER_BOUNCE_MAILBOX and friends)
and the typed results the mail code uses; a refusal names the variable, never shows a password."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple
from urllib.parse import SplitResult, quote, unquote, urlsplit

from publisher.config.secret_files import ConfigurationError, has_unencoded_delimiter, redact_url
from publisher.rules import bounces, form_fields

# Emails per second for a release, all senders together: within a typical provider's starting
# quota (Amazon SES allows 14 per second on a new production account, others similar or more).
DEFAULT_SEND_RATE = 10.0
SECRET_MIN = 32
POSTAL_ADDRESS_MAX = 300
_DEFAULT_SMTP_PORTS = {"smtps": 465, "smtp": 587}


@dataclass(frozen=True)
class MailServer:
    """``smtp`` and ``imap`` must upgrade with STARTTLS unless the host is loopback (then only when offered)."""

    scheme: str
    host: str
    port: int
    require_starttls: bool
    username: str = ""
    password: str = field(default="", repr=False)
    folder: str = ""  # the bounce mailbox's
    implicit_tls: bool = field(init=False)  # a field, not a property: read on every send

    def __post_init__(self) -> None:
        object.__setattr__(self, "implicit_tls", self.scheme in ("smtps", "imaps"))

    def describe(self) -> str:
        user = f"{quote(self.username, safe='')}:***@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        folder = f"/{quote(self.folder, safe='')}" if self.folder else ""
        return f"{self.scheme}://{user}{host}:{self.port}{folder}"


@dataclass(frozen=True)
class DkimKey:
    selector: str
    domain: str
    private_key: bytes = field(repr=False)


class Sender(NamedTuple):
    address: str
    name: str  # shown beside the address; "" for none


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_url(
    var: str, value: str, default_ports: Mapping[str, int], example: str, encode_also: str = ""
) -> tuple[SplitResult, MailServer, str]:
    """Checked as far as SMTP and IMAP agree: the parts, the server, and the URL as it may be shown."""
    shown = redact_url(value)
    if has_unencoded_delimiter(value):
        raise ConfigurationError(
            f"{var}: percent-encode / ? # [ ] and @ in the user and password{encode_also} "
            f"(%2F %3F %23 %5B %5D %40); got {shown!r}"
        )
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ConfigurationError(f"{var} is not a URL such as {example}; got {shown!r}") from None
    if parts.scheme not in default_ports:
        schemes = " or ".join(f"{scheme}://" for scheme in default_ports)
        raise ConfigurationError(f"{var} must start with {schemes}, such as {example}; got {shown!r}")
    if not (host := parts.hostname):
        raise ConfigurationError(f"{var} has no host, e.g. {example}; got {shown!r}")
    try:
        port = parts.port or default_ports[parts.scheme]
    except ValueError:
        raise ConfigurationError(f"{var} has an invalid port; got {shown!r}") from None
    plain = parts.scheme in ("smtp", "imap")
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    return parts, MailServer(parts.scheme, host, port, plain and not is_loopback(host), user, password), shown


def smtp_server(value: str) -> MailServer:
    name = "PUBLISHER_SMTP_URL"
    example = "smtps://user:password@smtp.example.com:465 or smtp://user:password@smtp.example.com:587"
    parts, server, shown = server_url(name, value, _DEFAULT_SMTP_PORTS, example)
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must be only scheme, user, password, host and port; got {shown!r}")
    if parts.username is not None and parts.password is None:
        raise ConfigurationError(f"{name} names a user but no password (user:password@host); got {shown!r}")
    return server


def address(name: str, value: str) -> str:
    try:
        return form_fields.sendable_address(value)
    except form_fields.NotSendable as exc:
        raise ConfigurationError(f"{name}: {exc}") from None


def recipients(value: str) -> tuple[str, ...]:
    found = tuple(address("PUBLISHER_NOTIFY_TO", part.strip()) for part in value.split(",") if part.strip())
    if not found:
        raise ConfigurationError("PUBLISHER_NOTIFY_TO must list at least one address")
    return found


def sender(value: str) -> Sender:
    name, bracket, rest = value.rpartition("<")
    if not bracket:
        return Sender(address("PUBLISHER_MAIL_FROM", value), "")
    if not rest.endswith(">"):
        raise ConfigurationError(f"PUBLISHER_MAIL_FROM must be an address or Name <address>, got {value!r}")
    display = name.strip().strip('"').strip()
    if form_fields.has_control_characters(display) or '"' in display:
        raise ConfigurationError("PUBLISHER_MAIL_FROM: the name must not contain quotes or control characters")
    return Sender(address("PUBLISHER_MAIL_FROM", rest[:-1].strip()), display)


def postal_address(value: str) -> str | None:
    found = value.replace("\\n", "\n").strip()
    if len(found) > POSTAL_ADDRESS_MAX or form_fields.has_control_characters(found, frozenset("\n")):
        raise ConfigurationError(
            f"PUBLISHER_POSTAL_ADDRESS must be a postal address of at most {POSTAL_ADDRESS_MAX} characters "
            "(lines separated by commas or \\n), without control characters"
        )
    return found or None


def dkim_key(selector: str, key_file: str, domain: str) -> DkimKey | None:
    if not selector and not key_file:
        return None
    if not key_file:
        raise ConfigurationError(
            "PUBLISHER_DKIM_SELECTOR is set, so PUBLISHER_DKIM_KEY_FILE is required: the private key (PEM)"
        )
    if not selector:
        raise ConfigurationError(
            "PUBLISHER_DKIM_KEY_FILE is set, so PUBLISHER_DKIM_SELECTOR is required: the DNS selector"
        )
    if not all(part and part.replace("-", "").replace("_", "").isalnum() for part in selector.split(".")):
        raise ConfigurationError(f"PUBLISHER_DKIM_SELECTOR must be a DNS label such as mail2026, got {selector!r}")
    try:
        key = Path(key_file).read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"PUBLISHER_DKIM_KEY_FILE: cannot read the private key {key_file!r} ({exc})") from None
    try:
        import dkim.crypto  # noqa: PLC0415 (only a site that signs needs it)

        dkim.crypto.parse_pem_private_key(key)
    except Exception as exc:  # noqa: BLE001 (dkimpy raises several kinds for a bad key)
        raise ConfigurationError(
            f"PUBLISHER_DKIM_KEY_FILE: {key_file!r} is not a PEM private key (RSA or Ed25519) ({exc})"
        ) from None
    return DkimKey(selector=selector, domain=domain, private_key=key)


_DEFAULT_IMAP_PORTS = {"imaps": 993, "imap": 143}
# RFC 5321: a local part is at most 64 octets, and VERP adds "+" and the token to it.
_LOCAL_PART_MAX = 64 - 1 - len(bounces.verp_token("x", 0xFFFFFFFFFFFF))


def imap_server(value: str) -> MailServer:
    name = "PUBLISHER_BOUNCE_MAILBOX"
    example = "imaps://user:password@imap.example.com:993/INBOX or imap://user:password@imap.example.com:143/INBOX"
    parts, server, shown = server_url(name, value, _DEFAULT_IMAP_PORTS, example, ", and @ in the folder")
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must be only scheme, user, password, host, port and folder; got {shown!r}")
    if not parts.username or parts.password is None:
        raise ConfigurationError(
            f"{name} must name the mailbox's user and password (user:password@host); got {shown!r}"
        )
    folder = unquote(parts.path.lstrip("/")) or "INBOX"
    if form_fields.has_control_characters(folder):
        raise ConfigurationError(f"{name}: the folder name holds a control character; got {shown!r}")
    return replace(server, folder=folder)


def bounce_address(value: str) -> str:
    """Any domain the publisher receives mail at; docs/mailing-list.md says why the From's own is best."""
    checked = address("PUBLISHER_BOUNCE_ADDRESS", value)
    local = checked.rpartition("@")[0]
    if "+" in local:
        raise ConfigurationError(
            "PUBLISHER_BOUNCE_ADDRESS must be a plain address such as bounces@example.com, without a +tag: "
            f"the site adds +TOKEN to it for each email; got {value!r}"
        )
    if len(local) > _LOCAL_PART_MAX:
        raise ConfigurationError(
            f"PUBLISHER_BOUNCE_ADDRESS: the part before @ must be at most {_LOCAL_PART_MAX} characters, so that "
            f"it with +TOKEN fits the 64 that SMTP allows; got {value!r}"
        )
    return checked


def webhook_secret(value: str) -> str:
    if len(value) < SECRET_MIN or any(character.isspace() for character in value):
        raise ConfigurationError(
            f"PUBLISHER_BOUNCE_WEBHOOK_SECRET must be at least {SECRET_MIN} characters without "
            "spaces (for example the output of `openssl rand -hex 32`); got a shorter one"
        )
    return value
