"""What rxconfig.py needs before the site is imported: secrets given as files, the database password.
Standard library only: Reflex's development supervisor keeps what rxconfig.py imported (no hot reload)."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit


class ConfigurationError(RuntimeError):
    """A setting is missing or malformed; the message names the variable."""


def redact_url(url: str) -> str:
    """By position: an unencoded ``/?#@`` in a password misleads a parser (a later ``@`` hides more, never less)."""
    start = url.find("//")
    at = url.rfind("@")
    if start < 0:
        return url if at < 0 else f"***{url[at:]}"  # no authority to find the user in: all of it
    start += 2
    if at < start:
        return url
    user, colon, _ = url[start:at].partition(":")
    if not colon:
        return url
    return f"{url[:start]}{user}:***{url[at:]}"


def has_unencoded_delimiter(url: str) -> bool:
    """Whether the user and password hold one of ``/ ? # [ ]``, which a parser would take for the host or path."""
    start = url.find("//")
    at = url.rfind("@")
    return 0 <= start < at and any(delimiter in url[start + 2 : at] for delimiter in "/?#[]")


# Secrets may be given as a file (``NAME_FILE``, e.g. under /run/secrets): a value in the environment
# shows in ``docker inspect`` and in /proc/PID/environ of every process that inherits it.
FILE_SUFFIX = "_FILE"


def from_env_or_file(env: Mapping[str, str], name: str) -> str:
    """``name``'s value, from the environment or the file ``NAME_FILE`` names; both set is refused."""
    value = env.get(name, "").strip()
    path = env.get(name + FILE_SUFFIX, "").strip()
    if not path:
        return value
    if value:
        raise ConfigurationError(f"{name} and {name}{FILE_SUFFIX} are both set: keep one")
    return _read_secret(name + FILE_SUFFIX, path)


def _read_secret(variable: str, path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{variable}: cannot read {path!r} ({type(exc).__name__})") from None


def secret_made_once(path: Path) -> str:
    """The secret kept in ``path``, made first when missing (256 bits, 0600): written whole, then linked
    into place, so processes starting together find the same one, never half of it."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        made = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        try:
            with os.fdopen(os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
                file.write(secrets.token_urlsafe(32))
            with contextlib.suppress(FileExistsError):  # another process was first: its secret counts
                os.link(made, path)
        finally:
            made.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()


DB_URL_VAR = "REFLEX_DB_URL"


def put_database_password(environ: dict[str, str] | os._Environ) -> None:
    """``REFLEX_DB_URL``'s password from ``PUBLISHER_DB_PASSWORD_FILE``: in no container's environment."""
    path = environ.get("PUBLISHER_DB_PASSWORD_FILE", "").strip()
    if not path:
        return
    url = environ.get(DB_URL_VAR, "").strip()
    parts = urlsplit(url)
    password = _read_secret("PUBLISHER_DB_PASSWORD_FILE", path)
    if parts.password is not None and unquote(parts.password) == password:
        return  # filled already: rxconfig.py read again, or a process started by one that filled it
    if not parts.username or parts.password is not None or not parts.hostname:
        raise ConfigurationError(
            f"PUBLISHER_DB_PASSWORD_FILE is set, so {DB_URL_VAR} must name a user and a host but no password, "
            f"e.g. postgresql+psycopg://publisher@postgres:5432/publisher; got {redact_url(url)!r}"
        )
    user, _, host = parts.netloc.rpartition("@")
    environ[DB_URL_VAR] = parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}").geturl()
