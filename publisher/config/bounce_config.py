"""The bounce settings (PUBLISHER_BOUNCE_* and the pause thresholds): where what comes back
from the list's emails arrives, and when a campaign stops on it (docs/mailing-list.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from publisher.config.checks import bounded_number, ca_file, positive_count
from publisher.config.mail_config import SMTP_URL_VAR, is_loopback, server_port, server_url
from publisher.config.secret_files import ConfigurationError, redact_url
from publisher.rules import bounces, validation

BOUNCE_ADDRESS_VAR = "PUBLISHER_BOUNCE_ADDRESS"
BOUNCE_MAILBOX_VAR = "PUBLISHER_BOUNCE_MAILBOX"
BOUNCE_CA_FILE_VAR = "PUBLISHER_BOUNCE_CA_FILE"
BOUNCE_POLL_VAR = "PUBLISHER_BOUNCE_POLL_S"
BOUNCE_DONE_FOLDER_VAR = "PUBLISHER_BOUNCE_DONE_FOLDER"
BOUNCE_MAX_BYTES_VAR = "PUBLISHER_BOUNCE_MAX_BYTES"
BOUNCE_WEBHOOK_SECRET_VAR = "PUBLISHER_BOUNCE_WEBHOOK_SECRET"
PAUSE_BOUNCE_RATE_VAR = "PUBLISHER_PAUSE_BOUNCE_RATE"
PAUSE_COMPLAINT_RATE_VAR = "PUBLISHER_PAUSE_COMPLAINT_RATE"
BOUNCE_VARS = (
    BOUNCE_ADDRESS_VAR,
    BOUNCE_MAILBOX_VAR,
    BOUNCE_CA_FILE_VAR,
    BOUNCE_POLL_VAR,
    BOUNCE_DONE_FOLDER_VAR,
    BOUNCE_MAX_BYTES_VAR,
    BOUNCE_WEBHOOK_SECRET_VAR,
    PAUSE_BOUNCE_RATE_VAR,
    PAUSE_COMPLAINT_RATE_VAR,
)
# The ones that may come from a file (NAME_FILE): the mailbox URL carries a password.
SECRET_VARS = frozenset({BOUNCE_MAILBOX_VAR, BOUNCE_WEBHOOK_SECRET_VAR})
# Five minutes: a bounce mostly arrives within seconds of the email, and a release at the
# default pace sends 3,000 emails in that time, so a dead address is stopped before the next one.
DEFAULT_POLL_S = 300
DEFAULT_DONE_FOLDER = "Processed"
# A real bounce or complaint is a few kilobytes, a few hundred with the original; a message above
# this is left unread, never downloaded (a 40 MB one took 24 s of CPU and 355 MB to parse).
DEFAULT_MAX_BYTES = 1_000_000
WEBHOOK_SECRET_MIN = 32
_DEFAULT_IMAP_PORTS = {"imaps": 993, "imap": 143}
# RFC 5321: a local part is at most 64 octets, and VERP adds "+" and the token to it.
_LOCAL_PART_MAX = 64 - 1 - len(bounces.verp_token("x", 0xFFFFFFFFFFFF))


@dataclass(frozen=True)
class ImapServer:
    """The bounce mailbox: ``imaps`` is TLS from the first byte; ``imap`` must upgrade with STARTTLS
    unless the host is loopback. Certificates are always verified."""

    host: str
    port: int
    implicit_tls: bool
    require_starttls: bool
    username: str
    password: str = field(repr=False)
    folder: str = "INBOX"

    def describe(self) -> str:
        """The mailbox as it may be printed: its URL with the password hidden."""
        scheme = "imaps" if self.implicit_tls else "imap"
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{quote(self.username, safe='')}:{quote(self.password, safe='')}@"
        return redact_url(f"{scheme}://{user}{host}:{self.port}/{quote(self.folder, safe='')}")


@dataclass(frozen=True)
class BounceSettings:
    # The envelope sender (Return-Path) of every list email, as bounces+TOKEN@domain; None: the From address.
    address: str | None = None
    mailbox: ImapServer | None = None
    ca_file: str | None = None
    poll_s: int = DEFAULT_POLL_S
    done_folder: str = DEFAULT_DONE_FOLDER
    max_bytes: int = DEFAULT_MAX_BYTES
    webhook_secret: str | None = field(default=None, repr=False)
    pause_bounce_rate: float = bounces.DEFAULT_PAUSE_BOUNCE_RATE
    pause_complaint_rate: float = bounces.DEFAULT_PAUSE_COMPLAINT_RATE


def imap_server(value: str) -> ImapServer:
    """``PUBLISHER_BOUNCE_MAILBOX``: ``imaps://user:password@host:993/INBOX`` or ``imap://...:143/INBOX``."""
    example = "imaps://user:password@imap.example.com:993/INBOX or imap://user:password@imap.example.com:143/INBOX"
    parts, host, shown = server_url(BOUNCE_MAILBOX_VAR, value, _DEFAULT_IMAP_PORTS, example, ", and @ in the folder")
    if parts.query or parts.fragment:
        raise ConfigurationError(
            f"{BOUNCE_MAILBOX_VAR} must be only scheme, user, password, host, port and folder; got {shown!r}"
        )
    port = server_port(BOUNCE_MAILBOX_VAR, parts, _DEFAULT_IMAP_PORTS, shown)
    if not parts.username or parts.password is None:
        raise ConfigurationError(
            f"{BOUNCE_MAILBOX_VAR} must name the mailbox's user and password (user:password@host); got {shown!r}"
        )
    folder = unquote(parts.path.lstrip("/")) or "INBOX"
    if validation.has_control_characters(folder):
        raise ConfigurationError(f"{BOUNCE_MAILBOX_VAR}: the folder name holds a control character; got {shown!r}")
    implicit_tls = parts.scheme == "imaps"
    return ImapServer(
        host=host,
        port=port,
        implicit_tls=implicit_tls,
        require_starttls=not implicit_tls and not is_loopback(host),
        username=unquote(parts.username),
        password=unquote(parts.password),
        folder=folder,
    )


def _bounce_address(value: str) -> str:
    try:
        address = validation.sendable_address(value)
    except validation.NotSendable as exc:
        raise ConfigurationError(f"{BOUNCE_ADDRESS_VAR}: {exc}") from None
    local = address.rpartition("@")[0]
    if "+" in local:
        raise ConfigurationError(
            f"{BOUNCE_ADDRESS_VAR} must be a plain address such as bounces@example.com, without a +tag: "
            f"the site adds +TOKEN to it for each email; got {value!r}"
        )
    if len(local) > _LOCAL_PART_MAX:
        raise ConfigurationError(
            f"{BOUNCE_ADDRESS_VAR}: the part before @ must be at most {_LOCAL_PART_MAX} characters, so that "
            f"it with +TOKEN fits the 64 that SMTP allows; got {value!r}"
        )
    # Any domain the publisher receives mail at; docs/mailing-list.md says why it should be
    # the From address's own (SPF alignment).
    return address


def _folder(value: str) -> str:
    folder = value or DEFAULT_DONE_FOLDER
    if validation.has_control_characters(folder) or len(folder) > 200:
        raise ConfigurationError(
            f"{BOUNCE_DONE_FOLDER_VAR} must be a folder name (at most 200 characters, no control characters), "
            f"got {value!r}"
        )
    return folder


def _webhook_secret(value: str) -> str | None:
    if not value:
        return None
    if len(value) < WEBHOOK_SECRET_MIN or any(character.isspace() for character in value):
        raise ConfigurationError(
            f"{BOUNCE_WEBHOOK_SECRET_VAR} must be at least {WEBHOOK_SECRET_MIN} characters without spaces "
            "(for example the output of `openssl rand -hex 32`); got a shorter one"
        )
    return value


def _percent(name: str, value: str, default: float) -> float:
    refusal = f"{name} must be a percentage of the emails sent, above 0 and at most 100, got {value!r}"
    return bounded_number(value, default, lambda rate: 0 < rate <= 100, refusal, unit="%")


def read(values: Mapping[str, str], mail_from: str | None) -> BounceSettings:
    """The bounce settings; ``mail_from``: the list's sender (None: no SMTP, so no list emails).
    ``values``: each of ``BOUNCE_VARS`` by name, stripped, an unset one empty."""
    if mail_from is None:
        stray = [var for var in (BOUNCE_ADDRESS_VAR, BOUNCE_MAILBOX_VAR) if values[var]]
        if stray:
            raise ConfigurationError(
                f"{' and '.join(stray)} {'is' if len(stray) == 1 else 'are'} set but {SMTP_URL_VAR} is not: "
                "bounces come back only from emails the site sends"
            )
    return BounceSettings(
        address=_bounce_address(values[BOUNCE_ADDRESS_VAR]) if values[BOUNCE_ADDRESS_VAR] else None,
        mailbox=imap_server(values[BOUNCE_MAILBOX_VAR]) if values[BOUNCE_MAILBOX_VAR] else None,
        ca_file=ca_file(BOUNCE_CA_FILE_VAR, values[BOUNCE_CA_FILE_VAR]),
        poll_s=positive_count(BOUNCE_POLL_VAR, values[BOUNCE_POLL_VAR], DEFAULT_POLL_S),
        done_folder=_folder(values[BOUNCE_DONE_FOLDER_VAR]),
        max_bytes=positive_count(BOUNCE_MAX_BYTES_VAR, values[BOUNCE_MAX_BYTES_VAR], DEFAULT_MAX_BYTES),
        webhook_secret=_webhook_secret(values[BOUNCE_WEBHOOK_SECRET_VAR]),
        pause_bounce_rate=_percent(
            PAUSE_BOUNCE_RATE_VAR, values[PAUSE_BOUNCE_RATE_VAR], bounces.DEFAULT_PAUSE_BOUNCE_RATE
        ),
        pause_complaint_rate=_percent(
            PAUSE_COMPLAINT_RATE_VAR, values[PAUSE_COMPLAINT_RATE_VAR], bounces.DEFAULT_PAUSE_COMPLAINT_RATE
        ),
    )
