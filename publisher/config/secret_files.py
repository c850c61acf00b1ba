"""Configuration that must be readable before anything of the site is imported: the
errors that name a variable, secrets given as files, and the database password that
rxconfig.py puts into ``REFLEX_DB_URL`` before Reflex reads it.

Standard library only: Reflex's development supervisor imports rxconfig.py, and its
workers keep whatever that imported (an edited sentence in content/ would not show
after a hot reload: tests/unit/test_build_plugins.py).
"""

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
    """The URL as it may be printed (Redis, the database, SMTP, IMAP): its password replaced by ***.

    By position, not by parsing: the password is whatever follows the user's ``:`` up to the
    last ``@`` after ``//``. A password holding an unencoded ``/``, ``?``, ``#`` or ``@`` breaks
    a URL parser's idea of where the host begins (``urlsplit`` then finds no password at all),
    and it is exactly such a URL that stops start-up with an error quoting it. An ``@`` later
    in the URL (a folder, a query) hides more than the password, never less."""
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


# What a URL's user and password must percent-encode, or a parser cuts them elsewhere.
URL_DELIMITERS = "/?#[]"


def has_unencoded_delimiter(url: str) -> bool:
    """Whether the user and password (everything between ``//`` and the last ``@``) hold one of
    ``/ ? # [ ]``: unencoded there, a URL parser takes a piece of the password for the host, the
    port, the path or the query (or refuses the URL). An ``@`` after the host looks the same,
    so it must be encoded too (``%40``)."""
    start = url.find("//")
    at = url.rfind("@")
    return 0 <= start < at and any(delimiter in url[start + 2 : at] for delimiter in URL_DELIMITERS)


# Secrets an operator may give as a file instead (``NAME_FILE``: a path, e.g. a compose or
# Kubernetes secret mounted under /run/secrets): a value in the environment shows in
# ``docker inspect`` and in /proc/PID/environ of every process that inherits it.
FILE_SUFFIX = "_FILE"


def from_env_or_file(env: Mapping[str, str], name: str) -> str:
    """``name``'s value: from the environment, or read from the file ``NAME_FILE`` names
    (surrounding whitespace dropped, so a trailing newline does not count). Both set, or
    a file that cannot be read, stops start-up with an error naming the variable."""
    value = env.get(name, "").strip()
    path = env.get(name + FILE_SUFFIX, "").strip()
    if not path:
        return value
    if value:
        raise ConfigurationError(f"{name} and {name}{FILE_SUFFIX} are both set: keep one")
    return _read_secret(name + FILE_SUFFIX, path)


def _read_secret(variable: str, path: str) -> str:
    """The secret in the file ``variable`` names, without surrounding whitespace; an error naming
    the variable (never the content) when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{variable}: cannot read {path!r} ({type(exc).__name__})") from None


def secret_made_once(path: Path) -> str:
    """The secret kept in ``path``, made there first when it is missing: random (256 bits), readable
    by its owner alone (0600), written whole into a file of its own and then linked into place, so
    processes starting together (workers, a command run beside the server) all find the same one,
    never half of it. OSError when the folder cannot be written."""
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
DB_PASSWORD_FILE_VAR = "PUBLISHER_DB_PASSWORD_FILE"


def put_database_password(environ: dict[str, str] | os._Environ) -> None:
    """Fill ``REFLEX_DB_URL``'s password from ``PUBLISHER_DB_PASSWORD_FILE`` (rxconfig.py, before
    Reflex reads its configuration), so the password is in no container's environment: the
    file is the database server's own ``POSTGRES_PASSWORD_FILE`` secret."""
    path = environ.get(DB_PASSWORD_FILE_VAR, "").strip()
    if not path:
        return
    url = environ.get(DB_URL_VAR, "").strip()
    parts = urlsplit(url)
    password = _read_secret(DB_PASSWORD_FILE_VAR, path)
    if parts.password is not None and unquote(parts.password) == password:
        return  # filled already: rxconfig.py read again, or a process started by one that filled it
    if not parts.username or parts.password is not None or not parts.hostname:
        raise ConfigurationError(
            f"{DB_PASSWORD_FILE_VAR} is set, so {DB_URL_VAR} must name a user and a host but no password, "
            f"e.g. postgresql+psycopg://publisher@postgres:5432/publisher; got {redact_url(url)!r}"
        )
    user, _, host = parts.netloc.rpartition("@")
    environ[DB_URL_VAR] = parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}").geturl()
