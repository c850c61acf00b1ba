"""Runtime configuration: one object, read once and checked at start-up (an error names the variable, never
shows a password); REFLEX_* variables are read from Reflex's config, so the two never disagree."""

from __future__ import annotations

import functools
import os
import secrets
import socket
import ssl
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from reflex_base import config as reflex_config
from reflex_base import constants

from publisher.config import mail_config
from publisher.config.mail_config import DkimKey, MailServer
from publisher.config.secret_files import FILE_SUFFIX, ConfigurationError, from_env_or_file, secret_made_once
from publisher.rules import admin_access, antispam, form_fields
from publisher.rules.bounces import DEFAULT_PAUSE_BOUNCE_RATE, DEFAULT_PAUSE_COMPLAINT_RATE


def absolute_http_url(name: str, value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{name} must be an absolute http(s) URL such as https://www.example.com, got {value!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"{name} must not contain a query or fragment, got {value!r}")
    return value.strip().rstrip("/")


def site_url() -> str:
    """Reflex's ``deploy_url``, so the sitemap Reflex writes and our canonical links never disagree."""
    return absolute_http_url("REFLEX_DEPLOY_URL (deploy_url)", reflex_config.get_config().deploy_url or "")


DEFAULT_GATEWAY_TIMEOUT_S = 10.0
# Daily visit counts kept two years: a launch compared with the last.
DEFAULT_VISITS_KEEP_DAYS = 730
# The signing secrets the site makes once in PUBLISHER_SECRETS_DIR when not given (the list's if it sends email).
MADE_SECRET_FILES = {"PUBLISHER_FORM_SECRET": "form-secret", "PUBLISHER_LIST_SECRET": "list-secret"}
# A class of 30 pupils behind one school router, each with the form open in two tabs.
DEFAULT_MAX_TABS_PER_ADDRESS = 60
# The same class opening the page at once, and reconnecting once.
DEFAULT_NEW_TABS_PER_MINUTE = 60
# A worker's open tabs: 2,000 at the measured ~190 KB each (benchmarks/flood.py) is about 380 MB
# above a worker's ~240 MB, so a one-worker container stays under 700 MB.
DEFAULT_MAX_TABS = 2000
# A websocket's longest life (the page reconnects): a tab left open for days is counted again, its state let go.
DEFAULT_MAX_TAB_LIFETIME_S = 7200


@dataclass(frozen=True)
class TabLimits:
    per_address: int
    new_per_minute: int
    per_worker: int
    # Seconds (tests give fractions); from the environment a whole number of at least 1.
    max_lifetime_s: float = DEFAULT_MAX_TAB_LIFETIME_S


def _var(name: str, default: Any, must: str = "", **constraints: Any) -> Any:
    """A value it refuses stops start-up: "NAME must MUST, got VALUE"."""
    return Field(default, validation_alias=name, description=must, **constraints)


COUNT = "be a whole number of at least 1"
PER_WINDOW = "look like ATTEMPTS/SECONDS, e.g. 8/600"
PEM_FILE = "be a readable PEM file of certificates to trust"
PERCENT = "be a percentage of the emails sent, above 0 and at most 100"
SECONDS = "be a number of seconds between 0 and 60"
SEND_RATE = "be emails per second for the whole site, a number from 0 (no limit) to 10000"
FOLDER = "be a folder name (at most 200 characters, no control characters)"


def _on_or_off(value: str) -> bool:
    if value.lower() not in ("on", "off"):
        raise ValueError
    return value.lower() == "on"


def _digits(value: Any) -> Any:
    if isinstance(value, str) and not value.strip().isdigit():
        raise ValueError  # not 80.0, +80 or 8_000, which int() would take
    return value


def _attempts_per_window(value: str) -> tuple[int, int]:
    attempts, _, window = value.partition("/")
    if not (attempts.strip().isdigit() and window.strip().isdigit() and int(attempts) > 0 and int(window) > 0):
        raise ValueError
    return int(attempts), int(window)


def _folder(value: str) -> str:
    if form_fields.has_control_characters(value):
        raise ValueError
    return value


def _pem_file(value: str) -> str:
    try:
        ssl.create_default_context().load_verify_locations(cafile=value)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(exc) from None
    return value


OnOff = Annotated[bool, BeforeValidator(_on_or_off)]
Whole = Annotated[int, BeforeValidator(_digits)]
AttemptsPerWindow = Annotated[tuple[int, int] | None, BeforeValidator(_attempts_per_window)]
Folder = Annotated[str, AfterValidator(_folder)]
PemFile = Annotated[str | None, BeforeValidator(_pem_file)]
Percent = Annotated[float, BeforeValidator(lambda value: value.removesuffix("%"))]


class Settings(BaseSettings):
    # Each variable by its exact name, as the text it is (``8/600`` is a rate limit, not JSON).
    model_config = SettingsConfigDict(
        frozen=True, extra="ignore", case_sensitive=True, enable_decoding=False, validate_default=False
    )

    host: str = _var("HOST", "127.0.0.1")
    port: Whole = _var("PORT", 8000, "be a TCP port number (1-65535)", gt=0, lt=65536)
    loglevel: constants.LogLevel = _var(
        "LOGLEVEL", constants.LogLevel.INFO, "be one of " + ", ".join(level.value for level in constants.LogLevel)
    )
    # The development server's address besides loopback (`make run DEV_HOST=`); Vite's config reads it too.
    dev_host: str = _var("PUBLISHER_DEV_HOST", "")
    gateway_url: str | None = _var("PUBLISHER_GATEWAY_URL", None)
    gateway_api_key: str | None = _var("PUBLISHER_GATEWAY_API_KEY", None, repr=False)
    gateway_api_key_file: str = _var("PUBLISHER_GATEWAY_API_KEY_FILE", "")
    gateway_timeout_s: float = _var("PUBLISHER_GATEWAY_TIMEOUT_S", DEFAULT_GATEWAY_TIMEOUT_S, SECONDS, gt=0, le=60)
    # Overrides of the submit limits, (attempts, seconds); None: the form's own.
    rate_limit_client: AttemptsPerWindow = _var("PUBLISHER_RATE_LIMIT_CLIENT", None, PER_WINDOW)
    rate_limit_address: AttemptsPerWindow = _var("PUBLISHER_RATE_LIMIT_ADDRESS", None, PER_WINDOW)
    max_tabs_per_address: Whole = _var("PUBLISHER_MAX_TABS_PER_ADDRESS", DEFAULT_MAX_TABS_PER_ADDRESS, COUNT, ge=1)
    new_tabs_per_minute: Whole = _var("PUBLISHER_NEW_TABS_PER_MINUTE", DEFAULT_NEW_TABS_PER_MINUTE, COUNT, ge=1)
    max_tabs: Whole = _var("PUBLISHER_MAX_TABS", DEFAULT_MAX_TABS, COUNT, ge=1)
    max_tab_lifetime_s: Whole = _var("PUBLISHER_MAX_TAB_LIFETIME_S", DEFAULT_MAX_TAB_LIFETIME_S, COUNT, ge=1)
    admin_idle_min: Whole = _var("PUBLISHER_ADMIN_IDLE_MIN", admin_access.DEFAULT_IDLE_MINUTES, COUNT, ge=1)
    min_fill_time_ms: Whole = _var("PUBLISHER_MIN_FILL_TIME_MS", antispam.MIN_FILL_TIME_MS, COUNT, ge=1)
    summary_on: OnOff = _var("PUBLISHER_SUMMARY", True, "be on or off")
    visits: OnOff = _var("PUBLISHER_VISITS", True, "be on or off")
    visits_keep_days: Whole = _var("PUBLISHER_VISITS_KEEP_DAYS", DEFAULT_VISITS_KEEP_DAYS, COUNT, ge=1)
    # Space-separated: the first signs, every one is accepted (a secret can be replaced).
    form_secrets: tuple[str, ...] = _var("PUBLISHER_FORM_SECRET", (), repr=False)
    form_secret_file: str = _var("PUBLISHER_FORM_SECRET_FILE", "")
    # Unset, publisher-serve refuses to start without a form secret; several containers share theirs as files.
    secrets_dir: str = _var("PUBLISHER_SECRETS_DIR", "")
    smtp_url: Annotated[MailServer | None, BeforeValidator(mail_config.smtp_server)] = _var(
        "PUBLISHER_SMTP_URL", None, repr=False
    )
    smtp_url_file: str = _var("PUBLISHER_SMTP_URL_FILE", "")
    notify_to: Annotated[tuple[str, ...], BeforeValidator(mail_config.recipients)] = _var("PUBLISHER_NOTIFY_TO", ())
    mail_from: Annotated[mail_config.Sender, BeforeValidator(mail_config.sender)] = _var(
        "PUBLISHER_MAIL_FROM", mail_config.Sender("", "")
    )
    notify_subscribers: bool = _var("PUBLISHER_NOTIFY_SUBSCRIBERS", False, "be 1 (on) or 0 (off)")
    smtp_ca_file: PemFile = _var("PUBLISHER_SMTP_CA_FILE", None, PEM_FILE)
    list_secrets: tuple[str, ...] = _var("PUBLISHER_LIST_SECRET", (), repr=False)
    list_secret_file: str = _var("PUBLISHER_LIST_SECRET_FILE", "")
    postal_address: Annotated[str | None, BeforeValidator(mail_config.postal_address)] = _var(
        "PUBLISHER_POSTAL_ADDRESS", None
    )
    send_rate: float = _var("PUBLISHER_SEND_RATE", mail_config.DEFAULT_SEND_RATE, SEND_RATE, ge=0, le=10_000)
    dkim_selector: str = _var("PUBLISHER_DKIM_SELECTOR", "")
    dkim_key_file: str = _var("PUBLISHER_DKIM_KEY_FILE", "")
    # Confirmation emails in any hour: far above a small publisher's busiest hour of real sign-ups, and
    # a bound on what a bot typing strangers' addresses makes the domain send (docs/mailing-list.md).
    confirmations_per_hour: Whole = _var("PUBLISHER_CONFIRMATIONS_PER_HOUR", 120, COUNT, ge=1)
    bounce_address: Annotated[str | None, BeforeValidator(mail_config.bounce_address)] = _var(
        "PUBLISHER_BOUNCE_ADDRESS", None
    )
    bounce_mailbox: Annotated[MailServer | None, BeforeValidator(mail_config.imap_server)] = _var(
        "PUBLISHER_BOUNCE_MAILBOX", None, repr=False
    )
    bounce_mailbox_file: str = _var("PUBLISHER_BOUNCE_MAILBOX_FILE", "")
    bounce_ca_file: PemFile = _var("PUBLISHER_BOUNCE_CA_FILE", None, PEM_FILE)
    # Five minutes: a bounce mostly arrives within seconds of the email, and a release at the
    # default pace sends 3,000 emails in that time, so a dead address is stopped before the next one.
    bounce_poll_s: Whole = _var("PUBLISHER_BOUNCE_POLL_S", 300, COUNT, ge=1)
    bounce_done_folder: Folder = _var("PUBLISHER_BOUNCE_DONE_FOLDER", "Processed", FOLDER, max_length=200)
    # A real bounce or complaint is a few kilobytes, a few hundred with the original; a message above
    # this is left unread, never downloaded (a 40 MB one took 24 s of CPU and 355 MB to parse).
    bounce_max_bytes: Whole = _var("PUBLISHER_BOUNCE_MAX_BYTES", 1_000_000, COUNT, ge=1)
    bounce_webhook_secret: Annotated[str | None, BeforeValidator(mail_config.webhook_secret)] = _var(
        "PUBLISHER_BOUNCE_WEBHOOK_SECRET", None, repr=False
    )
    bounce_webhook_secret_file: str = _var("PUBLISHER_BOUNCE_WEBHOOK_SECRET_FILE", "")
    pause_bounce_rate: Percent = _var("PUBLISHER_PAUSE_BOUNCE_RATE", DEFAULT_PAUSE_BOUNCE_RATE, PERCENT, gt=0, le=100)
    pause_complaint_rate: Percent = _var(
        "PUBLISHER_PAUSE_COMPLAINT_RATE", DEFAULT_PAUSE_COMPLAINT_RATE, PERCENT, gt=0, le=100
    )
    db_password_file: str = _var("PUBLISHER_DB_PASSWORD_FILE", "")

    _dkim: DkimKey | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _secrets_from_files(cls, data: Any) -> Any:
        """``NAME_FILE`` instead of ``NAME`` for a secret: a mounted file, in no container's environment."""
        values = {name: str(value).strip() for name, value in data.items() if name in VARIABLES}
        _point_at_made_secrets(values)
        for name in SECRET_VARIABLES:
            values[name] = from_env_or_file(values, name)
        return {name: value for name, value in values.items() if value}

    @field_validator("form_secrets", "list_secrets", mode="before")
    @classmethod
    def _signing_secrets(cls, value: str, info: ValidationInfo) -> tuple[str, ...]:
        if any(len(secret) < mail_config.SECRET_MIN for secret in value.split()):
            raise ConfigurationError(
                f"{cls.model_fields[str(info.field_name)].validation_alias} must be at least {mail_config.SECRET_MIN} "
                "characters (several: separated by spaces, the first signs); got a shorter one"
            )
        return tuple(value.split())

    @field_validator("gateway_url", mode="before")
    @classmethod
    def _gateway_url(cls, value: str) -> str:
        url = absolute_http_url("PUBLISHER_GATEWAY_URL", value)
        if urlsplit(url).path not in ("", "/"):
            raise ConfigurationError(
                "PUBLISHER_GATEWAY_URL must be only a scheme and host such as "
                f"https://abc123.execute-api.us-east-1.amazonaws.com, got {value!r}"
            )
        return url

    @model_validator(mode="after")
    def _mail_checked(self) -> Settings:
        """The mail variables depend on each other (an SMTP URL requires a sender...): checked together."""
        if self.smtp_url is None:
            _refuse_without_smtp(PUBLISHER_NOTIFY_TO=self.notify_to, PUBLISHER_MAIL_FROM=self.mail_from.address)
            _refuse_without_smtp(
                "bounces come back only from emails the site sends",
                PUBLISHER_BOUNCE_ADDRESS=self.bounce_address,
                PUBLISHER_BOUNCE_MAILBOX=self.bounce_mailbox,
            )
            return self
        for name, value, shape in (
            ("PUBLISHER_NOTIFY_TO", self.notify_to, "one or more addresses, comma-separated"),
            ("PUBLISHER_MAIL_FROM", self.mail_from.address, "the sender address"),
            ("PUBLISHER_LIST_SECRET", self.list_secrets, _LIST_SECRET_SHAPE),
        ):
            if not value:
                raise ConfigurationError(f"PUBLISHER_SMTP_URL is set, so {name} is required: {shape}")
        self._dkim = mail_config.dkim_key(self.dkim_selector, self.dkim_key_file, self.domain)
        return self

    @property
    def mail(self) -> Settings | None:
        """These settings where the embedded gateway sends email (an SMTP URL), or None (store only)."""
        return self if self.smtp_url is not None else None

    @property
    def dkim(self) -> DkimKey | None:
        return self._dkim

    @property
    def domain(self) -> str:
        return self.mail_from.address.rpartition("@")[2]

    @property
    def tabs(self) -> TabLimits:
        return TabLimits(self.max_tabs_per_address, self.new_tabs_per_minute, self.max_tabs, self.max_tab_lifetime_s)

    @property
    def admin_idle(self) -> timedelta:
        return timedelta(minutes=self.admin_idle_min)

    @property
    def dashboard_on(self) -> bool:
        """Only where the site keeps the list itself: with the cloud gateway it stores nothing to show."""
        return self.gateway_url is None

    @property
    def visits_on(self) -> bool:
        """Where the site keeps its own database (the dashboard shows them), unless ``PUBLISHER_VISITS`` is off."""
        return self.visits and self.dashboard_on

    @property
    def list_emails_on(self) -> bool:
        """The site runs the list itself: the embedded gateway, with SMTP to confirm addresses."""
        return self.gateway_url is None and self.mail is not None


def _refuse_without_smtp(why: str = "", **given: object) -> None:
    stray = [name for name, value in given.items() if value]
    if not stray:
        return
    names = " and ".join(stray)
    verb = "is" if len(stray) == 1 else "are"
    raise ConfigurationError(
        f"{names} {verb} set but PUBLISHER_SMTP_URL is not: "
        + (why or f"set PUBLISHER_SMTP_URL to email the publisher, or unset {names}")
    )


def _point_at_made_secrets(values: dict[str, Any]) -> None:
    folder = values.get("PUBLISHER_SECRETS_DIR", "")
    if not folder:
        return
    needed = ["PUBLISHER_FORM_SECRET"]
    if from_env_or_file(values, "PUBLISHER_SMTP_URL"):
        needed.append("PUBLISHER_LIST_SECRET")
    for name in needed:
        if values.get(name) or values.get(name + FILE_SUFFIX):
            continue  # given: never replaced by one of our own
        path = Path(folder) / MADE_SECRET_FILES[name]
        try:
            secret_made_once(path)
        except OSError as exc:
            raise ConfigurationError(
                f"{name} is not set, and none can be made in {folder} (PUBLISHER_SECRETS_DIR): cannot write "
                f"{str(path)!r} ({type(exc).__name__}). Make {folder} writable by the site's user (a volume), "
                f"or give {name} or {name}{FILE_SUFFIX}"
            ) from None
        values[name + FILE_SUFFIX] = str(path)


# Every variable the settings read (``_FILE`` ones too), in a fixed order: current()'s cache is keyed on them.
VARIABLES = tuple(str(field.validation_alias) for field in Settings.model_fields.values())
# The secrets that may come from a file (``NAME_FILE``): the ones with such a variable.
SECRET_VARIABLES = tuple(name for name in VARIABLES if name + FILE_SUFFIX in VARIABLES)
_LIST_SECRET_SHAPE = (
    f"a random secret of at least {mail_config.SECRET_MIN} characters that signs the list's confirmation and "
    "unsubscribe links (for example the output of `openssl rand -hex 32`)"
)
_MUST = {str(field.validation_alias): field.description for field in Settings.model_fields.values()}


def from_environ(environ: Mapping[str, str] | None = None) -> Settings:
    """From ``environ`` alone (a test's mapping), else the process's environment."""
    try:
        return Settings() if environ is None else Settings.model_validate(environ)
    except ValidationError as exc:
        error = exc.errors()[0]
        name, detail = str(error["loc"][0]), str(error.get("ctx", {}).get("error", ""))
        given = (os.environ if environ is None else environ).get(name)
        raise ConfigurationError(
            f"{name} must {_MUST[name]}, got {given!r}" + (f" ({detail})" if detail else "")
        ) from None


def current() -> Settings:
    """This process's settings: read again only when a variable changed (a test's monkeypatch.setenv)."""
    return _read(tuple(os.environ.get(name) for name in VARIABLES))


@functools.lru_cache(maxsize=8)
def _read(values: tuple[str | None, ...]) -> Settings:
    return from_environ()


# Development only: a file of the checkout, so a hot reload's backend accepts the pages served before.
DEVELOPMENT_FORM_SECRET_FILE = Path(".states") / "form-secret"


def form_secrets() -> tuple[str, ...]:
    """Unset: the checkout's development one."""
    return current().form_secrets or (_development_form_secret(),)


@functools.cache
def _development_form_secret() -> str:
    try:
        return secret_made_once(DEVELOPMENT_FORM_SECRET_FILE)
    except OSError:
        return secrets.token_urlsafe(32)  # a read-only checkout: this process's own (cached)


def require_form_secret(values: Settings) -> None:
    """Every worker and container of the production server must sign with one shared secret."""
    if not values.form_secrets:
        raise ConfigurationError(
            "PUBLISHER_FORM_SECRET is not set: the production server needs a random secret of at least "
            f"{mail_config.SECRET_MIN} characters, shared by every worker and container, that signs the contact "
            "form's question (e.g. the output of `openssl rand -hex 32`); or set PUBLISHER_SECRETS_DIR to a "
            "folder of this host's alone where the site makes one and keeps it, as the container image does"
        )


def notes_at_start() -> list[str]:
    """Settings an operator may want, said at start-up although the site can run."""
    values = current()
    notes = []
    if values.list_emails_on and values.mail is not None and values.mail.postal_address is None:
        notes.append(
            "PUBLISHER_POSTAL_ADDRESS is not set: list emails (the welcome email) go out without the sender's "
            "postal address, which the US CAN-SPAM Act asks of commercial email"
        )
    given = {"PUBLISHER_FORM_SECRET": values.form_secret_file, "PUBLISHER_LIST_SECRET": values.list_secret_file}
    for name, path in given.items():
        if not values.secrets_dir or path != str(Path(values.secrets_dir) / MADE_SECRET_FILES[name]):
            continue
        notes.append(
            f"{name} is not given: the site signs with the one it made in {path} (keep it with the data; "
            f"another container of this site needs the same one, as {name}{FILE_SUFFIX})"
        )
    return notes


T = TypeVar("T")


class PerProcess(Generic[T]):
    """One object per process (a rate limiter, an outbox sender): made on first use, or set; tests replace it."""

    def __init__(self, make: Callable[[], T] | None = None):
        self._make = make
        self._value: T | None = None

    def get(self) -> T:
        if self._value is None:
            if self._make is None:
                raise LookupError("nothing is set here and there is no factory to make it")
            self._value = self._make()
        return self._value

    def peek(self) -> T | None:
        return self._value

    def set(self, value: T | None) -> None:
        self._value = value


def worker_name() -> str:
    """``host:pid:tag``, the holder of a lease: mail/campaign.py frees a dead process's leases by it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:64]
