"""Runtime configuration, read from the environment in one place and checked at start-up."""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from reflex_base import config as reflex_config

from publisher.config.secret_files import ConfigurationError, from_env_or_file, redact_url
from publisher.rules import validation


# ConfigurationError and redact_url live with the secret files (rxconfig.py reads those before
# anything of the site is imported); the settings' readers find them here as before.
def _absolute_http_url(name: str, value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{name} must be an absolute http(s) URL such as https://www.example.com, got {value!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must not contain a query or fragment, got {value!r}")
    return value.strip().rstrip("/")


def site_url() -> str:
    """The public address of the site, without a trailing slash.

    It is Reflex's ``deploy_url`` (``REFLEX_DEPLOY_URL`` in the environment), so the
    sitemap Reflex writes and our canonical links can never disagree.
    """
    return _absolute_http_url("REFLEX_DEPLOY_URL (deploy_url)", reflex_config.get_config().deploy_url or "")


GATEWAY_URL_VAR = "PUBLISHER_GATEWAY_URL"
GATEWAY_API_KEY_VAR = "PUBLISHER_GATEWAY_API_KEY"


def gateway_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The cloud API gateway's base URL (scheme and host), or None when unset.

    A malformed value stops start-up with an error naming the variable.
    """
    env = os.environ if environ is None else environ
    value = env.get(GATEWAY_URL_VAR, "").strip()
    if not value:
        return None
    url = _absolute_http_url(GATEWAY_URL_VAR, value)
    if urlsplit(url).path not in ("", "/"):
        raise ConfigurationError(
            f"{GATEWAY_URL_VAR} must be only a scheme and host such as "
            f"https://abc123.execute-api.us-east-1.amazonaws.com, got {value!r}"
        )
    return url


def gateway_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """Sent as x-api-key when set, so the cloud gateway can accept only this site."""
    env = os.environ if environ is None else environ
    return from_env_or_file(env, GATEWAY_API_KEY_VAR) or None


RATE_LIMIT_CLIENT_VAR = "PUBLISHER_RATE_LIMIT_CLIENT"
RATE_LIMIT_ADDRESS_VAR = "PUBLISHER_RATE_LIMIT_ADDRESS"


def _attempts_per_window(name: str, value: str) -> tuple[int, int]:
    attempts, _, window = value.partition("/")
    if not (attempts.strip().isdigit() and window.strip().isdigit() and int(attempts) > 0 and int(window) > 0):
        raise ConfigurationError(f"{name} must look like ATTEMPTS/SECONDS, e.g. 8/600, got {value!r}")
    return int(attempts), int(window)


def rate_limits(environ: Mapping[str, str] | None = None) -> dict[str, tuple[int, int] | None]:
    """Overrides of the per-client and per-address submission limits, as (attempts, seconds)."""
    env = os.environ if environ is None else environ
    return {
        scope: _attempts_per_window(var, env[var].strip()) if env.get(var, "").strip() else None
        for scope, var in (("client", RATE_LIMIT_CLIENT_VAR), ("address", RATE_LIMIT_ADDRESS_VAR))
    }


MAX_TABS_PER_ADDRESS_VAR = "PUBLISHER_MAX_TABS_PER_ADDRESS"
NEW_TABS_PER_MINUTE_VAR = "PUBLISHER_NEW_TABS_PER_MINUTE"
MAX_TABS_VAR = "PUBLISHER_MAX_TABS"
MAX_TAB_LIFETIME_VAR = "PUBLISHER_MAX_TAB_LIFETIME_S"
# A class of 30 pupils behind one school router, each with the form open in two tabs.
DEFAULT_MAX_TABS_PER_ADDRESS = 60
# The same class opening the page at once, and reconnecting once.
DEFAULT_NEW_TABS_PER_MINUTE = 60
# A worker's open tabs: 2,000 at the measured ~190 KB each (benchmarks/flood.py) is about 380 MB
# above a worker's ~240 MB, so a one-worker container stays under 700 MB.
DEFAULT_MAX_TABS = 2000
# How long one websocket may stay open (the page then reconnects by itself): a tab left open
# for days is counted again at its reconnect, and a connection's state is let go regularly.
DEFAULT_MAX_TAB_LIFETIME_S = 7200


def _positive_count(name: str, value: str, default: int) -> int:
    if not value.strip():
        return default
    if not value.strip().isdigit() or int(value) < 1:
        raise ConfigurationError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class TabLimits:
    """The event channel's limits (hosting/tabs.py)."""

    per_address: int
    new_per_minute: int
    per_worker: int
    # Seconds (tests give fractions); from the environment a whole number of at least 1.
    max_lifetime_s: float = DEFAULT_MAX_TAB_LIFETIME_S


def tab_limits(environ: Mapping[str, str] | None = None) -> TabLimits:
    """Open tabs per address, new ones a minute per address, open tabs per worker, a tab's longest connection."""
    env = os.environ if environ is None else environ
    return TabLimits(
        per_address=_positive_count(
            MAX_TABS_PER_ADDRESS_VAR, env.get(MAX_TABS_PER_ADDRESS_VAR, ""), DEFAULT_MAX_TABS_PER_ADDRESS
        ),
        new_per_minute=_positive_count(
            NEW_TABS_PER_MINUTE_VAR, env.get(NEW_TABS_PER_MINUTE_VAR, ""), DEFAULT_NEW_TABS_PER_MINUTE
        ),
        per_worker=_positive_count(MAX_TABS_VAR, env.get(MAX_TABS_VAR, ""), DEFAULT_MAX_TABS),
        max_lifetime_s=_positive_count(
            MAX_TAB_LIFETIME_VAR, env.get(MAX_TAB_LIFETIME_VAR, ""), DEFAULT_MAX_TAB_LIFETIME_S
        ),
    )


GATEWAY_TIMEOUT_VAR = "PUBLISHER_GATEWAY_TIMEOUT_S"
DEFAULT_GATEWAY_TIMEOUT_S = 10.0


def gateway_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """Total time allowed for one gateway call (connect, send, answer), in seconds."""
    env = os.environ if environ is None else environ
    value = env.get(GATEWAY_TIMEOUT_VAR, "").strip()
    if not value:
        return DEFAULT_GATEWAY_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 60:
        raise ConfigurationError(f"{GATEWAY_TIMEOUT_VAR} must be a number of seconds between 0 and 60, got {value!r}")
    return seconds


# --- Mail from the embedded gateway (gateway/mailer.py, gateway/outbox.py). ---

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
# The site's confirmation emails in any hour (README: the ceiling and why this default):
# far above a small publisher's busiest hour of real sign-ups, and a bound on what a bot
# typing strangers' addresses can make the publisher's domain send (2,880 a day at most).
DEFAULT_CONFIRMATIONS_PER_HOUR = 120
LIST_SECRET_MIN = 32
# Emails per second for a release, all senders together: within a typical provider's starting
# quota (Amazon SES allows 14 per second on a new production account, others similar or more).
DEFAULT_SEND_RATE = 10.0
POSTAL_ADDRESS_MAX = 300
_MAIL_VARS = (
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
_SECRET_VARS = frozenset({SMTP_URL_VAR, LIST_SECRET_VAR})


@dataclass(frozen=True)
class SmtpServer:
    """Where mail goes, and how the connection is protected.

    ``smtps`` is TLS from the first byte. ``smtp`` upgrades with STARTTLS, which is
    required unless the host is a loopback address (a local relay, or tests), where
    it is used when offered. Certificates are always verified.
    """

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
    # A release's emails per second for the whole site (0: no limit); gateway/campaign.py.
    send_rate: float = DEFAULT_SEND_RATE
    # Signs every email when given (gateway/mailer.py).
    dkim: DkimKey | None = field(default=None, repr=False)
    # At most this many confirmation emails in any hour; the rest wait in the outbox (gateway/outbox.py).
    confirmations_per_hour: int = DEFAULT_CONFIRMATIONS_PER_HOUR

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


def _smtp_server(value: str) -> SmtpServer:
    example = "smtps://user:password@smtp.example.com:465 or smtp://user:password@smtp.example.com:587"
    parts = urlsplit(value)
    shown = redact_url(value)
    if parts.scheme not in _DEFAULT_SMTP_PORTS:
        raise ConfigurationError(
            f"{SMTP_URL_VAR} must start with smtps:// or smtp://, such as {example}; got {shown!r}"
        )
    if not parts.hostname:
        raise ConfigurationError(f"{SMTP_URL_VAR} has no host, e.g. {example}; got {shown!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigurationError(f"{SMTP_URL_VAR} must be only scheme, user, password, host and port; got {shown!r}")
    try:
        port = parts.port or _DEFAULT_SMTP_PORTS[parts.scheme]
    except ValueError:
        raise ConfigurationError(f"{SMTP_URL_VAR} has an invalid port; got {shown!r}") from None
    if parts.username is not None and parts.password is None:
        raise ConfigurationError(f"{SMTP_URL_VAR} names a user but no password (user:password@host); got {shown!r}")
    implicit_tls = parts.scheme == "smtps"
    return SmtpServer(
        host=parts.hostname,
        port=port,
        implicit_tls=implicit_tls,
        require_starttls=not implicit_tls and not is_loopback(parts.hostname),
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


def _ca_file(value: str) -> str:
    try:
        ssl.create_default_context().load_verify_locations(cafile=value)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(
            f"{SMTP_CA_FILE_VAR} must be a readable PEM file of certificates to trust, got {value!r} ({exc})"
        ) from None
    return value


def _list_secrets(value: str) -> tuple[str, ...]:
    if not value:
        raise ConfigurationError(
            f"{SMTP_URL_VAR} is set, so {LIST_SECRET_VAR} is required: a random secret of at least "
            f"{LIST_SECRET_MIN} characters that signs the list's confirmation and unsubscribe links "
            "(for example the output of `openssl rand -hex 32`)"
        )
    secrets = tuple(value.split())
    if any(len(secret) < LIST_SECRET_MIN for secret in secrets):
        raise ConfigurationError(
            f"{LIST_SECRET_VAR} must be at least {LIST_SECRET_MIN} characters (several: separated by spaces, "
            "the first signs new links); got a shorter one"
        )
    return secrets


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
    if not value:
        return DEFAULT_SEND_RATE
    try:
        rate = float(value)
    except ValueError:
        rate = -1.0
    if not 0 <= rate <= 10_000:
        raise ConfigurationError(
            f"{SEND_RATE_VAR} must be emails per second for the whole site, a number from 0 (no limit) "
            f"to 10000, got {value!r}"
        )
    return rate


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


def mail_settings(environ: Mapping[str, str] | None = None) -> MailSettings | None:
    """How the embedded gateway sends email, or None (store only) without an SMTP URL."""
    env = os.environ if environ is None else environ
    return _read_mail_settings(
        tuple(from_env_or_file(env, var) if var in _SECRET_VARS else env.get(var, "").strip() for var in _MAIL_VARS)
    )


@functools.lru_cache(maxsize=8)
def _read_mail_settings(raw: tuple[str, ...]) -> MailSettings | None:
    """Parsed once per distinct environment: the forms ask on every visit."""
    values = dict(zip(_MAIL_VARS, raw, strict=True))
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
        ca_file=_ca_file(values[SMTP_CA_FILE_VAR]) if values[SMTP_CA_FILE_VAR] else None,
        list_secrets=_list_secrets(values[LIST_SECRET_VAR]),
        postal_address=_postal_address(values[POSTAL_ADDRESS_VAR]),
        send_rate=_send_rate(values[SEND_RATE_VAR]),
        dkim=_dkim(values[DKIM_SELECTOR_VAR], values[DKIM_KEY_FILE_VAR], mail_from.rpartition("@")[2]),
        confirmations_per_hour=_positive_count(
            CONFIRMATIONS_PER_HOUR_VAR, values[CONFIRMATIONS_PER_HOUR_VAR], DEFAULT_CONFIRMATIONS_PER_HOUR
        ),
    )


def list_emails_on(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this site runs the list itself: the embedded gateway, with SMTP to confirm addresses.

    With the cloud gateway the cloud keeps the list; without SMTP nothing can be confirmed.
    """
    return gateway_url(environ) is None and mail_settings(environ) is not None


def check_at_start() -> None:
    """Read every setting once, so a malformed one stops start-up with an error naming it.

    Called by the app when it is imported (``reflex run``, every worker) and by
    ``publisher-serve`` before any worker starts.
    """
    gateway_url()
    rate_limits()
    tab_limits()
    gateway_timeout_s()
    mail_settings()


def notes_at_start() -> list[str]:
    """What an operator should hear at start-up although the site can run: settings it may want."""
    mail = mail_settings()
    if list_emails_on() and mail.postal_address is None:
        return [
            f"{POSTAL_ADDRESS_VAR} is not set: list emails (the welcome email) go out without the sender's "
            "postal address, which the US CAN-SPAM Act asks of commercial email"
        ]
    return []
