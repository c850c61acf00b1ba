"""The mail settings (PUBLISHER_SMTP_URL and friends) and the typed results the mail code uses."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import SplitResult, quote, unquote, urlsplit

from publisher.config.checks import bounded_number, ca_file, positive_count, signing_secrets
from publisher.config.secret_files import ConfigurationError, has_unencoded_delimiter, redact_url
from publisher.rules import validation

SMTP_URL_VAR = "PUBLISHER_SMTP_URL"
NOTIFY_TO_VAR = "PUBLISHER_NOTIFY_TO"
MAIL_FROM_VAR = "PUBLISHER_MAIL_FROM"
NOTIFY_SUBSCRIBERS_VAR = "PUBLISHER_NOTIFY_SUBSCRIBERS"
SMTP_CA_FILE_VAR = "PUBLISHER_SMTP_CA_FILE"
LIST_SECRET_VAR = "PUBLISHER_LIST_SECRET"
POSTAL_ADDRESS_VAR = "PUBLISHER_POSTAL_ADDRESS"
SEND_RATE_VAR = "PUBLISHER_SEND_RATE"
DKIM_SELECTOR_VAR = "PUBLISHER_DKIM_SELECTOR"
DKIM_KEY_FILE_VAR = "PUBLISHER_DKIM_KEY_FILE"
CONFIRMATIONS_PER_HOUR_VAR = "PUBLISHER_CONFIRMATIONS_PER_HOUR"
# Confirmation emails in any hour: far above a small publisher's busiest hour of real sign-ups, and
# a bound on what a bot typing strangers' addresses makes the domain send (docs/mailing-list.md).
DEFAULT_CONFIRMATIONS_PER_HOUR = 120
LIST_SECRET_MIN = 32
# Emails per second for a release, all senders together: within a typical provider's starting
# quota (Amazon SES allows 14 per second on a new production account, others similar or more).
DEFAULT_SEND_RATE = 10.0
POSTAL_ADDRESS_MAX = 300
MAIL_VARS = (
    SMTP_URL_VAR,
    NOTIFY_TO_VAR,
    MAIL_FROM_VAR,
    NOTIFY_SUBSCRIBERS_VAR,
    SMTP_CA_FILE_VAR,
    LIST_SECRET_VAR,
    POSTAL_ADDRESS_VAR,
    SEND_RATE_VAR,
    DKIM_SELECTOR_VAR,
    DKIM_KEY_FILE_VAR,
    CONFIRMATIONS_PER_HOUR_VAR,
)
_DEFAULT_SMTP_PORTS = {"smtps": 465, "smtp": 587}
# The mail settings that may come from a file (NAME_FILE): the SMTP URL carries a password.
SECRET_VARS = frozenset({SMTP_URL_VAR, LIST_SECRET_VAR})


@dataclass(frozen=True)
class SmtpServer:
    """Where mail goes: ``smtps`` is TLS from the first byte; ``smtp`` must upgrade with STARTTLS unless
    the host is loopback (then only when offered). Certificates are always verified."""

    host: str
    port: int
    implicit_tls: bool
    require_starttls: bool
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def describe(self) -> str:
        """The server as it may be printed: its URL with the password hidden."""
        scheme = "smtps" if self.implicit_tls else "smtp"
        user = f"{quote(self.username, safe='')}:{quote(self.password or '', safe='')}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return redact_url(f"{scheme}://{user}{host}:{self.port}")


@dataclass(frozen=True)
class DkimKey:
    """A DKIM selector and its private key (PEM); the domain is the sender's."""

    selector: str
    domain: str
    private_key: bytes = field(repr=False)


@dataclass(frozen=True)
class MailSettings:
    server: SmtpServer
    notify_to: tuple[str, ...]
    mail_from: str
    mail_from_name: str = ""
    notify_subscribers: bool = False
    ca_file: str | None = None
    # Sign the list's confirmation and unsubscribe links: the first signs, all are accepted.
    list_secrets: tuple[str, ...] = field(default=(), repr=False)
    # Printed at the foot of every list email (the sender's postal address), when given.
    postal_address: str | None = None
    # A release's emails per second for the whole site (0: no limit).
    send_rate: float = DEFAULT_SEND_RATE
    # Signs every email when given.
    dkim: DkimKey | None = field(default=None, repr=False)
    # At most this many confirmation emails in any hour; the rest wait in the outbox.
    confirmations_per_hour: int = DEFAULT_CONFIRMATIONS_PER_HOUR
    # The list emails' envelope sender, made bounces+TOKEN@domain per email; None: the From address.
    bounce_address: str | None = None

    @property
    def list_secret(self) -> str:
        return self.list_secrets[0]

    @property
    def domain(self) -> str:
        """The sender's domain, which the Message-IDs use."""
        return self.mail_from.rpartition("@")[2]


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_url(
    var: str, value: str, default_ports: Mapping[str, int], example: str, encode_also: str = ""
) -> tuple[SplitResult, str, str]:
    """A mail server's URL (SMTP, IMAP) split and checked as far as both agree, its host, and the URL
    as it may be shown; ``encode_also``: where else delimiters must be percent-encoded."""
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
    if not parts.hostname:
        raise ConfigurationError(f"{var} has no host, e.g. {example}; got {shown!r}")
    return parts, parts.hostname, shown


def server_port(var: str, parts: SplitResult, default_ports: Mapping[str, int], shown: str) -> int:
    """The port a mail server's URL names, else its scheme's."""
    try:
        return parts.port or default_ports[parts.scheme]
    except ValueError:
        raise ConfigurationError(f"{var} has an invalid port; got {shown!r}") from None


def _smtp_server(value: str) -> SmtpServer:
    example = "smtps://user:password@smtp.example.com:465 or smtp://user:password@smtp.example.com:587"
    parts, host, shown = server_url(SMTP_URL_VAR, value, _DEFAULT_SMTP_PORTS, example)
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigurationError(f"{SMTP_URL_VAR} must be only scheme, user, password, host and port; got {shown!r}")
    port = server_port(SMTP_URL_VAR, parts, _DEFAULT_SMTP_PORTS, shown)
    if parts.username is not None and parts.password is None:
        raise ConfigurationError(f"{SMTP_URL_VAR} names a user but no password (user:password@host); got {shown!r}")
    implicit_tls = parts.scheme == "smtps"
    return SmtpServer(
        host=host,
        port=port,
        implicit_tls=implicit_tls,
        require_starttls=not implicit_tls and not is_loopback(host),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
    )


def _address(name: str, value: str) -> str:
    try:
        return validation.sendable_address(value)
    except validation.NotSendable as exc:
        raise ConfigurationError(f"{name}: {exc}") from None


def _mail_from(value: str) -> tuple[str, str]:
    """``address`` or ``Display Name <address>``."""
    name, bracket, rest = value.rpartition("<")
    if not bracket:
        return _address(MAIL_FROM_VAR, value), ""
    if not rest.endswith(">"):
        raise ConfigurationError(f"{MAIL_FROM_VAR} must be an address or Name <address>, got {value!r}")
    display = name.strip().strip('"').strip()
    if validation.has_control_characters(display) or '"' in display:
        raise ConfigurationError(f"{MAIL_FROM_VAR}: the name must not contain quotes or control characters")
    return _address(MAIL_FROM_VAR, rest[:-1].strip()), display


def _flag(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("", "0", "false", "no", "off"):
        return False
    if lowered in ("1", "true", "yes", "on"):
        return True
    raise ConfigurationError(f"{name} must be 1 (on) or 0 (off), got {value!r}")


def _list_secrets(value: str) -> tuple[str, ...]:
    if not value:
        raise ConfigurationError(
            f"{SMTP_URL_VAR} is set, so {LIST_SECRET_VAR} is required: a random secret of at least "
            f"{LIST_SECRET_MIN} characters that signs the list's confirmation and unsubscribe links "
            "(for example the output of `openssl rand -hex 32`)"
        )
    return signing_secrets(LIST_SECRET_VAR, value, LIST_SECRET_MIN)


def _postal_address(value: str) -> str | None:
    address = value.replace("\\n", "\n").strip()
    if not address:
        return None
    if len(address) > POSTAL_ADDRESS_MAX or validation.has_control_characters(address, frozenset("\n")):
        raise ConfigurationError(
            f"{POSTAL_ADDRESS_VAR} must be a postal address of at most {POSTAL_ADDRESS_MAX} characters "
            "(lines separated by commas or \\n), without control characters"
        )
    return address


def _send_rate(value: str) -> float:
    refusal = (
        f"{SEND_RATE_VAR} must be emails per second for the whole site, a number from 0 (no limit) "
        f"to 10000, got {value!r}"
    )
    return bounded_number(value, DEFAULT_SEND_RATE, lambda rate: 0 <= rate <= 10_000, refusal)


def _dkim(selector: str, key_file: str, domain: str) -> DkimKey | None:
    if not selector and not key_file:
        return None
    if not key_file:
        raise ConfigurationError(
            f"{DKIM_SELECTOR_VAR} is set, so {DKIM_KEY_FILE_VAR} is required: the private key (PEM)"
        )
    if not selector:
        raise ConfigurationError(f"{DKIM_KEY_FILE_VAR} is set, so {DKIM_SELECTOR_VAR} is required: the DNS selector")
    if not all(part and part.replace("-", "").replace("_", "").isalnum() for part in selector.split(".")):
        raise ConfigurationError(f"{DKIM_SELECTOR_VAR} must be a DNS label such as mail2026, got {selector!r}")
    try:
        key = Path(key_file).read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{DKIM_KEY_FILE_VAR}: cannot read the private key {key_file!r} ({exc})") from None
    try:
        import dkim.crypto  # noqa: PLC0415 (only a site that signs needs it)

        dkim.crypto.parse_pem_private_key(key)
    except Exception as exc:  # noqa: BLE001 (dkimpy raises several kinds for a bad key)
        raise ConfigurationError(
            f"{DKIM_KEY_FILE_VAR}: {key_file!r} is not a PEM private key (RSA or Ed25519) ({exc})"
        ) from None
    return DkimKey(selector=selector, domain=domain, private_key=key)


def read(values: Mapping[str, str]) -> MailSettings | None:
    """How the embedded gateway sends email, or None (store only) without an SMTP URL.
    ``values``: each of ``MAIL_VARS`` by name, stripped, an unset one empty."""
    if not values[SMTP_URL_VAR]:
        stray = [var for var in (NOTIFY_TO_VAR, MAIL_FROM_VAR) if values[var]]
        if stray:
            raise ConfigurationError(
                f"{' and '.join(stray)} {'is' if len(stray) == 1 else 'are'} set but {SMTP_URL_VAR} is not: "
                f"set {SMTP_URL_VAR} to email the publisher, or unset {' and '.join(stray)}"
            )
        _flag(NOTIFY_SUBSCRIBERS_VAR, values[NOTIFY_SUBSCRIBERS_VAR])
        return None
    server = _smtp_server(values[SMTP_URL_VAR])
    for var, shape in (
        (NOTIFY_TO_VAR, "one or more addresses, comma-separated"),
        (MAIL_FROM_VAR, "the sender address"),
    ):
        if not values[var]:
            raise ConfigurationError(f"{SMTP_URL_VAR} is set, so {var} is required: {shape}")
    recipients = tuple(
        _address(NOTIFY_TO_VAR, part.strip()) for part in values[NOTIFY_TO_VAR].split(",") if part.strip()
    )
    if not recipients:
        raise ConfigurationError(f"{NOTIFY_TO_VAR} must list at least one address")
    mail_from, mail_from_name = _mail_from(values[MAIL_FROM_VAR])
    return MailSettings(
        server=server,
        notify_to=recipients,
        mail_from=mail_from,
        mail_from_name=mail_from_name,
        notify_subscribers=_flag(NOTIFY_SUBSCRIBERS_VAR, values[NOTIFY_SUBSCRIBERS_VAR]),
        ca_file=ca_file(SMTP_CA_FILE_VAR, values[SMTP_CA_FILE_VAR]),
        list_secrets=_list_secrets(values[LIST_SECRET_VAR]),
        postal_address=_postal_address(values[POSTAL_ADDRESS_VAR]),
        send_rate=_send_rate(values[SEND_RATE_VAR]),
        dkim=_dkim(values[DKIM_SELECTOR_VAR], values[DKIM_KEY_FILE_VAR], mail_from.rpartition("@")[2]),
        confirmations_per_hour=positive_count(
            CONFIRMATIONS_PER_HOUR_VAR, values[CONFIRMATIONS_PER_HOUR_VAR], DEFAULT_CONFIRMATIONS_PER_HOUR
        ),
    )
