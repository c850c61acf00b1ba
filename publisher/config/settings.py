"""Runtime configuration: one object, read from the environment once and checked at start-up (an error
names the variable, never shows a password). Reflex's own variables are read from Reflex's config
(``Settings.REFLEX_VARIABLES``), so the two never disagree."""

from __future__ import annotations

import dataclasses
import functools
import os
import secrets
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from reflex_base import config as reflex_config
from reflex_base import constants

from publisher.config import bounce_config, mail_config
from publisher.config.bounce_config import BOUNCE_MAILBOX_VAR, BounceSettings
from publisher.config.checks import absolute_http_url, bounded_number, positive_count, signing_secrets
from publisher.config.mail_config import (
    DEFAULT_SEND_RATE,
    MAIL_FROM_VAR,
    POSTAL_ADDRESS_VAR,
    SMTP_URL_VAR,
    MailSettings,
    SmtpServer,
    is_loopback,
)
from publisher.config.secret_files import (
    DB_PASSWORD_FILE_VAR,
    FILE_SUFFIX,
    ConfigurationError,
    from_env_or_file,
    has_unencoded_delimiter,
    redact_url,
    secret_made_once,
)
from publisher.rules import admin_access, antispam

# The rest of the site imports these from here.
__all__ = [
    "BOUNCE_MAILBOX_VAR",
    "DEFAULT_SEND_RATE",
    "BounceSettings",
    "MAIL_FROM_VAR",
    "POSTAL_ADDRESS_VAR",
    "SMTP_URL_VAR",
    "ConfigurationError",
    "MailSettings",
    "Settings",
    "SmtpServer",
    "TabLimits",
    "current",
    "from_env_or_file",
    "from_environ",
    "has_unencoded_delimiter",
    "is_loopback",
    "redact_url",
    "reload",
    "site_url",
]


def site_url() -> str:
    """The site's public address without a trailing slash: Reflex's ``deploy_url``, so the sitemap
    Reflex writes and our canonical links never disagree."""
    return absolute_http_url("REFLEX_DEPLOY_URL (deploy_url)", reflex_config.get_config().deploy_url or "")


HOST_VAR = "HOST"
PORT_VAR = "PORT"
LOGLEVEL_VAR = "LOGLEVEL"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# The development server's address (`make run DEV_HOST=`); Vite's config reads it too.
DEV_HOST_VAR = "PUBLISHER_DEV_HOST"
GATEWAY_URL_VAR = "PUBLISHER_GATEWAY_URL"
GATEWAY_API_KEY_VAR = "PUBLISHER_GATEWAY_API_KEY"
GATEWAY_TIMEOUT_VAR = "PUBLISHER_GATEWAY_TIMEOUT_S"
DEFAULT_GATEWAY_TIMEOUT_S = 10.0
RATE_LIMIT_CLIENT_VAR = "PUBLISHER_RATE_LIMIT_CLIENT"
RATE_LIMIT_ADDRESS_VAR = "PUBLISHER_RATE_LIMIT_ADDRESS"
MAX_TABS_PER_ADDRESS_VAR = "PUBLISHER_MAX_TABS_PER_ADDRESS"
NEW_TABS_PER_MINUTE_VAR = "PUBLISHER_NEW_TABS_PER_MINUTE"
MAX_TABS_VAR = "PUBLISHER_MAX_TABS"
MAX_TAB_LIFETIME_VAR = "PUBLISHER_MAX_TAB_LIFETIME_S"
# The contact form's minimum fill time: the spec's five seconds; a test server lowers it.
MIN_FILL_TIME_VAR = "PUBLISHER_MIN_FILL_TIME_MS"
# Minutes without an action before a dashboard session ends.
ADMIN_IDLE_VAR = "PUBLISHER_ADMIN_IDLE_MIN"
# The weekly summary emailed to the publisher on Mondays: on unless "off".
SUMMARY_VAR = "PUBLISHER_SUMMARY"
# Visits counted on the server (docs/privacy.md): on unless "off"; daily counts kept two years
# (a launch compared with the last).
VISITS_VAR = "PUBLISHER_VISITS"
VISITS_KEEP_DAYS_VAR = "PUBLISHER_VISITS_KEEP_DAYS"
DEFAULT_VISITS_KEEP_DAYS = 730
# Signs the contact form's question and the time it was shown (rules/form_tokens.py).
FORM_SECRET_VAR = "PUBLISHER_FORM_SECRET"
FORM_SECRET_MIN = 32
# Where the site makes, once, the signing secrets it is not given (the image sets /data, its volume).
# Unset, publisher-serve refuses to start without them; several containers share theirs as files.
SECRETS_DIR_VAR = "PUBLISHER_SECRETS_DIR"
# The secret each may be made into: the form's always, the list's where the site sends email.
MADE_SECRET_FILES = {FORM_SECRET_VAR: "form-secret", mail_config.LIST_SECRET_VAR: "list-secret"}
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


@dataclass(frozen=True)
class TabLimits:
    """The event channel's limits (limits/tabs.py)."""

    per_address: int
    new_per_minute: int
    per_worker: int
    # Seconds (tests give fractions); from the environment a whole number of at least 1.
    max_lifetime_s: float = DEFAULT_MAX_TAB_LIFETIME_S


def _var(name: str, default: Any, **kwargs: Any) -> Any:
    """A field read from the variable ``name``, exactly as spelt."""
    return Field(default, validation_alias=name, **kwargs)


# The mapping ``from_environ`` reads instead of the process's environment.
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("publisher_settings_environ", default=None)


class _Variables(PydanticBaseSettingsSource):
    """Each field's variable under its exact name, as the string it is: no prefix, no .env
    file, no JSON decoding (``8/600`` is a rate limit, not a number divided)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        super().__init__(settings_cls)
        self.environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.environ.get(str(field.validation_alias)), str(field.validation_alias), False

    def __call__(self) -> dict[str, Any]:
        names = (str(field.validation_alias) for field in self.settings_cls.model_fields.values())
        return {name: self.environ[name] for name in names if name in self.environ}


# A variable's text as given, surrounding whitespace dropped.
Text = Annotated[str, BeforeValidator(str.strip)]


class Settings(BaseSettings):
    """Every variable the site reads, parsed and checked; frozen."""

    # validate_default=False: a default is the value itself, not a string to parse.
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True, validate_default=False)

    # Read by Reflex into its config (over rxconfig.py's values); the site reads them there:
    # variable -> the attribute of ``reflex_base.config.get_config()``.
    REFLEX_VARIABLES: ClassVar[Mapping[str, str]] = {
        "REFLEX_DEPLOY_URL": "deploy_url",
        "REFLEX_DB_URL": "db_url",  # rxconfig.py fills in PUBLISHER_DB_PASSWORD_FILE
        "REFLEX_REDIS_URL": "redis_url",
        "REFLEX_TRUSTED_PROXY_HOPS": "trusted_proxy_hops",
        "REFLEX_REDIS_TOKEN_EXPIRATION": "redis_token_expiration",
    }

    # publisher-serve.
    host: str = _var(HOST_VAR, DEFAULT_HOST)
    port: int = _var(PORT_VAR, DEFAULT_PORT)
    loglevel: constants.LogLevel = _var(LOGLEVEL_VAR, constants.LogLevel.INFO)
    # The development server's address besides loopback.
    dev_host: Text = _var(DEV_HOST_VAR, "")
    # The gateway the forms post to.
    gateway_url: str | None = _var(GATEWAY_URL_VAR, None)
    gateway_api_key: str | None = _var(GATEWAY_API_KEY_VAR, None, repr=False)
    gateway_api_key_file: Text = _var(GATEWAY_API_KEY_VAR + FILE_SUFFIX, "")
    gateway_timeout_s: float = _var(GATEWAY_TIMEOUT_VAR, DEFAULT_GATEWAY_TIMEOUT_S)
    # Overrides of the submit limits, (attempts, seconds); None: the form's own.
    rate_limit_client: tuple[int, int] | None = _var(RATE_LIMIT_CLIENT_VAR, None)
    rate_limit_address: tuple[int, int] | None = _var(RATE_LIMIT_ADDRESS_VAR, None)
    # The event channel's limits (the ``tabs`` property).
    max_tabs_per_address: int = _var(MAX_TABS_PER_ADDRESS_VAR, DEFAULT_MAX_TABS_PER_ADDRESS)
    new_tabs_per_minute: int = _var(NEW_TABS_PER_MINUTE_VAR, DEFAULT_NEW_TABS_PER_MINUTE)
    max_tabs: int = _var(MAX_TABS_VAR, DEFAULT_MAX_TABS)
    max_tab_lifetime_s: int = _var(MAX_TAB_LIFETIME_VAR, DEFAULT_MAX_TAB_LIFETIME_S)
    admin_idle_min: int = _var(ADMIN_IDLE_VAR, admin_access.DEFAULT_IDLE_MINUTES)
    min_fill_time_ms: int = _var(MIN_FILL_TIME_VAR, antispam.MIN_FILL_TIME_MS)
    summary_on: bool = _var(SUMMARY_VAR, True)
    visits: bool = _var(VISITS_VAR, True)
    visits_keep_days: int = _var(VISITS_KEEP_DAYS_VAR, DEFAULT_VISITS_KEEP_DAYS)
    # Space-separated: the first signs, every one is accepted (a secret can be replaced).
    form_secrets: tuple[str, ...] = _var(FORM_SECRET_VAR, (), repr=False)
    form_secret_file: Text = _var(FORM_SECRET_VAR + FILE_SUFFIX, "")
    secrets_dir: Text = _var(SECRETS_DIR_VAR, "")
    # Mail from the embedded gateway, as given: checked together into the ``mail`` property.
    smtp_url: Text = _var(mail_config.SMTP_URL_VAR, "", repr=False)
    smtp_url_file: Text = _var(mail_config.SMTP_URL_VAR + FILE_SUFFIX, "")
    notify_to: Text = _var(mail_config.NOTIFY_TO_VAR, "")
    mail_from: Text = _var(mail_config.MAIL_FROM_VAR, "")
    notify_subscribers: Text = _var(mail_config.NOTIFY_SUBSCRIBERS_VAR, "")
    smtp_ca_file: Text = _var(mail_config.SMTP_CA_FILE_VAR, "")
    list_secret: Text = _var(mail_config.LIST_SECRET_VAR, "", repr=False)
    list_secret_file: Text = _var(mail_config.LIST_SECRET_VAR + FILE_SUFFIX, "")
    postal_address: Text = _var(mail_config.POSTAL_ADDRESS_VAR, "")
    send_rate: Text = _var(mail_config.SEND_RATE_VAR, "")
    dkim_selector: Text = _var(mail_config.DKIM_SELECTOR_VAR, "")
    dkim_key_file: Text = _var(mail_config.DKIM_KEY_FILE_VAR, "")
    confirmations_per_hour: Text = _var(mail_config.CONFIRMATIONS_PER_HOUR_VAR, "")
    # What comes back from the list's emails, checked together into ``bounces``.
    bounce_address: Text = _var(bounce_config.BOUNCE_ADDRESS_VAR, "")
    bounce_mailbox: Text = _var(bounce_config.BOUNCE_MAILBOX_VAR, "", repr=False)
    bounce_mailbox_file: Text = _var(bounce_config.BOUNCE_MAILBOX_VAR + FILE_SUFFIX, "")
    bounce_ca_file: Text = _var(bounce_config.BOUNCE_CA_FILE_VAR, "")
    bounce_poll_s: Text = _var(bounce_config.BOUNCE_POLL_VAR, "")
    bounce_done_folder: Text = _var(bounce_config.BOUNCE_DONE_FOLDER_VAR, "")
    bounce_max_bytes: Text = _var(bounce_config.BOUNCE_MAX_BYTES_VAR, "")
    bounce_webhook_secret: Text = _var(bounce_config.BOUNCE_WEBHOOK_SECRET_VAR, "", repr=False)
    bounce_webhook_secret_file: Text = _var(bounce_config.BOUNCE_WEBHOOK_SECRET_VAR + FILE_SUFFIX, "")
    pause_bounce_rate: Text = _var(bounce_config.PAUSE_BOUNCE_RATE_VAR, "")
    pause_complaint_rate: Text = _var(bounce_config.PAUSE_COMPLAINT_RATE_VAR, "")
    # Read by rxconfig.py before anything else, into REFLEX_DB_URL; listed here with the rest.
    db_password_file: Text = _var(DB_PASSWORD_FILE_VAR, "")

    _mail: MailSettings | None = PrivateAttr(None)
    _bounces: BounceSettings = PrivateAttr(default_factory=BounceSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment only (``from_environ``: a test's mapping), read by ``_Variables``."""
        environ = _ENVIRON.get()
        return (_Variables(settings_cls, os.environ if environ is None else environ),)

    @classmethod
    def variables(cls) -> Iterator[str]:
        """The name of every variable the object reads, ``_FILE`` variants included."""
        return (str(field.validation_alias) for field in cls.model_fields.values())

    @classmethod
    def _name(cls, info: ValidationInfo) -> str:
        return str(cls.model_fields[str(info.field_name)].validation_alias)

    @model_validator(mode="before")
    @classmethod
    def _secrets_from_files(cls, data: Any) -> Any:
        """``NAME_FILE`` instead of ``NAME`` for a secret: a mounted file, in no container's environment."""
        values = dict(data)
        _point_at_made_secrets(values)
        for name in (GATEWAY_API_KEY_VAR, FORM_SECRET_VAR, *mail_config.SECRET_VARS, *bounce_config.SECRET_VARS):
            if name in values or name + FILE_SUFFIX in values:
                values[name] = from_env_or_file(values, name)
        return values

    @field_validator("form_secrets", mode="before")
    @classmethod
    def _form_secrets(cls, value: str) -> tuple[str, ...]:
        return signing_secrets(FORM_SECRET_VAR, value, FORM_SECRET_MIN)

    @field_validator("host", mode="before")
    @classmethod
    def _host(cls, value: str) -> str:
        return value.strip() or DEFAULT_HOST

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, value: str) -> int:
        raw = value.strip() or str(DEFAULT_PORT)
        if not raw.isdigit() or not 0 < int(raw) < 65536:
            raise ConfigurationError(f"{PORT_VAR} must be a TCP port number (1-65535), got {raw!r}")
        return int(raw)

    @field_validator("loglevel", mode="before")
    @classmethod
    def _loglevel(cls, value: str) -> constants.LogLevel:
        try:
            return constants.LogLevel(value.strip() or constants.LogLevel.INFO)
        except ValueError:
            names = ", ".join(level.value for level in constants.LogLevel)
            raise ConfigurationError(f"{LOGLEVEL_VAR} must be one of {names}, got {value!r}") from None

    @field_validator("gateway_url", mode="before")
    @classmethod
    def _gateway_url(cls, value: str) -> str | None:
        value = value.strip()
        if not value:
            return None
        url = absolute_http_url(GATEWAY_URL_VAR, value)
        if urlsplit(url).path not in ("", "/"):
            raise ConfigurationError(
                f"{GATEWAY_URL_VAR} must be only a scheme and host such as "
                f"https://abc123.execute-api.us-east-1.amazonaws.com, got {value!r}"
            )
        return url

    @field_validator("summary_on", "visits", mode="before")
    @classmethod
    def _on_or_off(cls, value: str, info: ValidationInfo) -> bool:
        word = value.strip().lower()
        if word in ("", "on"):
            return True
        if word == "off":
            return False
        raise ConfigurationError(f"{cls._name(info)} must be on or off, got {value!r}")

    @field_validator("gateway_api_key", mode="before")
    @classmethod
    def _optional(cls, value: str) -> str | None:
        return value.strip() or None

    @field_validator("gateway_timeout_s", mode="before")
    @classmethod
    def _gateway_timeout_s(cls, value: str) -> float:
        refusal = f"{GATEWAY_TIMEOUT_VAR} must be a number of seconds between 0 and 60, got {value.strip()!r}"
        return bounded_number(value, DEFAULT_GATEWAY_TIMEOUT_S, lambda seconds: 0 < seconds <= 60, refusal)

    @field_validator("rate_limit_client", "rate_limit_address", mode="before")
    @classmethod
    def _attempts_per_window(cls, value: str, info: ValidationInfo) -> tuple[int, int] | None:
        value = value.strip()
        if not value:
            return None
        attempts, _, window = value.partition("/")
        if not (attempts.strip().isdigit() and window.strip().isdigit() and int(attempts) > 0 and int(window) > 0):
            raise ConfigurationError(f"{cls._name(info)} must look like ATTEMPTS/SECONDS, e.g. 8/600, got {value!r}")
        return int(attempts), int(window)

    @field_validator(
        "max_tabs_per_address",
        "new_tabs_per_minute",
        "max_tabs",
        "max_tab_lifetime_s",
        "admin_idle_min",
        "min_fill_time_ms",
        "visits_keep_days",
        mode="before",
    )
    @classmethod
    def _count(cls, value: str, info: ValidationInfo) -> int:
        return positive_count(cls._name(info), value, cls.model_fields[str(info.field_name)].default)

    @model_validator(mode="after")
    def _mail_checked(self) -> Settings:
        """The mail variables depend on each other (an SMTP URL requires a sender...): checked together."""
        fields = type(self).model_fields
        self._mail = mail_config.read(
            {str(fields[name].validation_alias): getattr(self, name) for name in _MAIL_FIELDS}
        )
        self._bounces = bounce_config.read(
            {str(fields[name].validation_alias): getattr(self, name) for name in _BOUNCE_FIELDS},
            None if self._mail is None else self._mail.mail_from,
        )
        if self._mail is not None and self._bounces.address is not None:
            self._mail = dataclasses.replace(self._mail, bounce_address=self._bounces.address)
        return self

    @property
    def mail(self) -> MailSettings | None:
        """How the embedded gateway sends email, or None (store only) without an SMTP URL."""
        return self._mail

    @property
    def bounces(self) -> BounceSettings:
        """Where bounces and complaints arrive (a mailbox, a webhook) and when a campaign pauses on them."""
        return self._bounces

    @property
    def tabs(self) -> TabLimits:
        return TabLimits(self.max_tabs_per_address, self.new_tabs_per_minute, self.max_tabs, self.max_tab_lifetime_s)

    @property
    def admin_idle(self) -> timedelta:
        """How long a dashboard session lasts without its admin doing anything."""
        return admin_access.idle_limit(self.admin_idle_min)

    @property
    def dashboard_on(self) -> bool:
        """Whether this site has a dashboard: only where it keeps the list itself (embedded
        gateway). With the cloud gateway it stores nothing to show."""
        return self.gateway_url is None

    @property
    def visits_on(self) -> bool:
        """Whether this site counts visits: where it keeps its own database (the dashboard shows
        them) and ``PUBLISHER_VISITS`` is not off. Off, no request is looked at."""
        return self.visits and self.dashboard_on

    @property
    def made_secret_files(self) -> dict[str, str]:
        """The signing secrets read from the files the site made in ``PUBLISHER_SECRETS_DIR``: name -> path."""
        if not self.secrets_dir:
            return {}
        given = {FORM_SECRET_VAR: self.form_secret_file, mail_config.LIST_SECRET_VAR: self.list_secret_file}
        return {
            name: path for name, path in given.items() if path == str(Path(self.secrets_dir) / MADE_SECRET_FILES[name])
        }

    @property
    def list_emails_on(self) -> bool:
        """Whether this site runs the list itself: the embedded gateway, with SMTP to confirm addresses."""
        return self.gateway_url is None and self.mail is not None


def _point_at_made_secrets(values: dict[str, Any]) -> None:
    """With ``PUBLISHER_SECRETS_DIR``, point each signing secret not given at the file made for it
    there (the list's only with an SMTP URL)."""
    folder = str(values.get(SECRETS_DIR_VAR, "")).strip()
    if not folder:
        return
    needed = [FORM_SECRET_VAR]
    if from_env_or_file(values, mail_config.SMTP_URL_VAR):
        needed.append(mail_config.LIST_SECRET_VAR)
    for name in needed:
        if str(values.get(name, "")).strip() or str(values.get(name + FILE_SUFFIX, "")).strip():
            continue  # given: never replaced by one of our own
        path = Path(folder) / MADE_SECRET_FILES[name]
        try:
            secret_made_once(path)
        except OSError as exc:
            raise ConfigurationError(
                f"{name} is not set, and none can be made in {folder} ({SECRETS_DIR_VAR}): cannot write "
                f"{str(path)!r} ({type(exc).__name__}). Make {folder} writable by the site's user (a volume), "
                f"or give {name} or {name}{FILE_SUFFIX}"
            ) from None
        values[name + FILE_SUFFIX] = str(path)


# The fields of the mail variables, which ``mail_config.read`` checks together.
_MAIL_FIELDS = tuple(
    name for name, field in Settings.model_fields.items() if field.validation_alias in mail_config.MAIL_VARS
)
_BOUNCE_FIELDS = tuple(
    name for name, field in Settings.model_fields.items() if field.validation_alias in bounce_config.BOUNCE_VARS
)
# Every variable, in a fixed order: current()'s cache is keyed on their values.
VARIABLES = tuple(Settings.variables())


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The settings ``environ`` gives (a test's mapping), the process's environment not looked at."""
    token = _ENVIRON.set(environ)
    try:
        return Settings()
    finally:
        _ENVIRON.reset(token)


def current() -> Settings:
    """This process's settings: read once, and again only when one of its variables changed
    (which only a test does, with monkeypatch.setenv)."""
    return _read(tuple(os.environ.get(name) for name in VARIABLES))


@functools.lru_cache(maxsize=8)
def _read(values: tuple[str | None, ...]) -> Settings:
    return from_environ({name: value for name, value in zip(VARIABLES, values, strict=True) if value is not None})


def reload() -> None:
    """Forget the settings read, so the next ``current()`` reads the environment again."""
    _read.cache_clear()


def _settings(environ: Mapping[str, str] | None) -> Settings:
    return current() if environ is None else from_environ(environ)


def gateway_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The cloud API gateway's base URL (scheme and host), or None when unset."""
    return _settings(environ).gateway_url


def gateway_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """Sent as x-api-key when set, so the cloud gateway can accept only this site."""
    return _settings(environ).gateway_api_key


def rate_limits(environ: Mapping[str, str] | None = None) -> dict[str, tuple[int, int] | None]:
    """Overrides of the per-client and per-address submission limits, as (attempts, seconds)."""
    values = _settings(environ)
    return {"client": values.rate_limit_client, "address": values.rate_limit_address}


def tab_limits(environ: Mapping[str, str] | None = None) -> TabLimits:
    """Open tabs per address, new ones a minute per address, open tabs per worker, a tab's longest connection."""
    return _settings(environ).tabs


def gateway_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """Total time allowed for one gateway call (connect, send, answer), in seconds."""
    return _settings(environ).gateway_timeout_s


def mail_settings(environ: Mapping[str, str] | None = None) -> MailSettings | None:
    """How the embedded gateway sends email, or None (store only) without an SMTP URL."""
    return _settings(environ).mail


def bounce_settings(environ: Mapping[str, str] | None = None) -> BounceSettings:
    """Where bounces and complaints arrive, and when a campaign pauses on them."""
    return _settings(environ).bounces


# Development only (publisher-serve requires a configured secret): kept in a file of the checkout,
# so a hot reload's new backend still accepts the questions of the pages served before.
DEVELOPMENT_FORM_SECRET_FILE = Path(".states") / "form-secret"


def form_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets that sign the contact form's tokens: the first signs, all are accepted.
    Unset: the checkout's development secret."""
    return _settings(environ).form_secrets or (_development_form_secret(),)


@functools.cache
def _development_form_secret() -> str:
    """Made whole in a file of its own, then linked into place: a process starting at the same
    moment finds either no file or the whole secret, never half of it."""
    try:
        return secret_made_once(DEVELOPMENT_FORM_SECRET_FILE)
    except OSError:
        return _FORM_SECRET_OF_THIS_PROCESS  # a read-only checkout: this process's own


_FORM_SECRET_OF_THIS_PROCESS = secrets.token_urlsafe(32)


def require_form_secret(environ: Mapping[str, str] | None = None) -> None:
    """The production server's check: every worker and container must sign with one shared secret."""
    if not _settings(environ).form_secrets:
        raise ConfigurationError(
            f"{FORM_SECRET_VAR} is not set: the production server needs a random secret of at least "
            f"{FORM_SECRET_MIN} characters, shared by every worker and container, that signs the contact "
            f"form's question (e.g. the output of `openssl rand -hex 32`); or set {SECRETS_DIR_VAR} to a "
            "folder of this host's alone where the site makes one and keeps it, as the container image does"
        )


def list_emails_on(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this site runs the list itself: the embedded gateway, with SMTP to confirm addresses."""
    return _settings(environ).list_emails_on


def check_at_start() -> None:
    """Read every setting once, so a malformed one stops start-up with an error naming it."""
    current()


def notes_at_start() -> list[str]:
    """What an operator should hear at start-up although the site can run: settings it may want."""
    values = current()
    notes = []
    if values.list_emails_on and values.mail is not None and values.mail.postal_address is None:
        notes.append(
            f"{POSTAL_ADDRESS_VAR} is not set: list emails (the welcome email) go out without the sender's "
            "postal address, which the US CAN-SPAM Act asks of commercial email"
        )
    for name, path in values.made_secret_files.items():
        notes.append(
            f"{name} is not given: the site signs with the one it made in {path} (keep it with the data; "
            f"another container of this site needs the same one, as {name}{FILE_SUFFIX})"
        )
    return notes
