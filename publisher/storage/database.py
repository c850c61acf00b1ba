"""The embedded gateway's database: which one, whether it answers, its migration. The engine is Reflex's
(one pool per worker, pinged before use: a database back after an outage is used again); a SQLite file
is in write-ahead-log mode, so readers never wait for a writer and a commit costs one sync."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path

import sqlalchemy
from reflex import model as rx_model
from reflex_base import config as reflex_config
from reflex_base.environment import environment

from publisher.config.secret_files import DB_URL_VAR, redact_url

logger = logging.getLogger(__name__)

# The advisory lock's key: any 64-bit number the application reserves ("publ" + "migr").
MIGRATION_LOCK_KEY = 0x7075626C_6D696772
CONNECT_TIMEOUT_S = 5
PRIVATE_FILE_MODE = 0o600


class DatabaseUnavailable(RuntimeError):
    """The database cannot be used; the message names REFLEX_DB_URL (password hidden) and the fix."""


# alembic.ini beside the package (a checkout, an editable install); its script_location is
# %(here)s/alembic. The image installs the package into its venv and sets ALEMBIC_CONFIG=/app/alembic.ini.
PROJECT_ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"


def alembic_config() -> Path:
    """The project's alembic.ini wherever the process runs from (Reflex looks in the working directory);
    an operator's ALEMBIC_CONFIG wins."""
    if not environment.ALEMBIC_CONFIG.is_set() and PROJECT_ALEMBIC_INI.is_file():
        environment.ALEMBIC_CONFIG.set(PROJECT_ALEMBIC_INI)
    return environment.ALEMBIC_CONFIG.get()


def engine(url: str | None = None) -> sqlalchemy.engine.Engine:
    """Reflex's engine (and pool) for ``url``; for a SQLite file, in write-ahead-log mode."""
    alembic_config()  # before Reflex looks for it (and warns "Database is not initialized")
    found = rx_model.get_engine(url)
    if found.dialect.name == "sqlite" and not sqlalchemy.event.contains(found, "connect", _write_ahead_log):
        private_sqlite_file(found.url)  # once per engine: before its first connection
        sqlalchemy.event.listen(found, "connect", _write_ahead_log)
    return found


def private_sqlite_file(url: sqlalchemy.engine.URL) -> None:
    """The SQLite file of ``url`` and its logs readable by the site's user alone: made ``0600`` before
    SQLite opens it, since SQLite gives a new -wal and -shm the database's mode."""
    path = url.database
    if url.get_backend_name() != "sqlite" or not path or path == ":memory:" or path.startswith("file:"):
        return
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT, PRIVATE_FILE_MODE))
    except OSError:
        return
    for name in (path, f"{path}-wal", f"{path}-shm"):
        with contextlib.suppress(OSError):  # not there, or another user's: left as it is
            os.chmod(name, PRIVATE_FILE_MODE)


def _write_ahead_log(dbapi_connection, _record) -> None:
    try:
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:  # busy: another connection switches it, or already has
        logger.debug("SQLite journal mode left as it is: %s", exc)


def configured_url() -> str:
    url = reflex_config.get_config().db_url
    if not url:
        raise DatabaseUnavailable(f"{DB_URL_VAR} is empty: set it to a SQLAlchemy URL such as sqlite:///publisher.db")
    return url


def _reason(exc: BaseException, url: str) -> str:
    """The driver's own first line (e.g. "Connection refused"), never carrying the password."""
    original = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    text = lines[0] if lines else type(original).__name__
    password = sqlalchemy.engine.make_url(url).password
    return text.replace(password, "***") if password else text


def _connect_args(url: str) -> dict:
    # PostgreSQL: a host that does not answer must not hold start-up for the TCP timeout.
    return {"connect_timeout": CONNECT_TIMEOUT_S} if url.startswith("postgresql") else {}


def check(url: str | None = None) -> None:
    """Connect once before any worker starts; raise DatabaseUnavailable saying what is wrong."""
    url = url or configured_url()
    try:
        engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool, connect_args=_connect_args(url))
    except sqlalchemy.exc.ArgumentError:
        raise DatabaseUnavailable(
            f"{DB_URL_VAR} is not a database URL: use sqlite:///path/publisher.db or "
            "postgresql+psycopg://user:password@host:5432/name"
        ) from None
    except ModuleNotFoundError as exc:
        raise DatabaseUnavailable(
            f"{DB_URL_VAR} ({redact_url(url)}) needs the database driver {exc.name!r}, which is not installed: "
            "for PostgreSQL install the postgres extra (pip install 'publisher[postgres]'; the image has it)"
        ) from None
    private_sqlite_file(engine.url)
    try:
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("SELECT 1"))
    except sqlalchemy.exc.SQLAlchemyError as exc:
        raise DatabaseUnavailable(
            f"cannot reach the database at {DB_URL_VAR} ({redact_url(url)}): {_reason(exc, url)}. "
            "Start the database or correct the URL."
        ) from None
    finally:
        engine.dispose()


def migrate() -> None:
    """Bring the schema to the committed head. On PostgreSQL one process at a time (an advisory lock):
    a second container starting together waits, then finds nothing to do."""
    config = alembic_config()
    if not config.is_file():
        raise DatabaseUnavailable(
            f"No Alembic configuration at {config.absolute()}: set ALEMBIC_CONFIG to the project's alembic.ini "
            "(the image's is /app/alembic.ini)"
        )
    url = configured_url()
    migrating = engine(url)
    try:
        _migrate_once(migrating)
    except sqlalchemy.exc.SQLAlchemyError as exc:
        raise DatabaseUnavailable(
            f"could not migrate the database at {DB_URL_VAR} ({redact_url(url)}): {_reason(exc, url)}"
        ) from None
    finally:
        # publisher-serve migrates before Granian forks its workers: none may inherit a pooled connection.
        migrating.dispose()


def _migrate_once(engine: sqlalchemy.engine.Engine) -> None:
    if engine.dialect.name != "postgresql":
        rx_model.migrate()
        return
    with engine.connect() as lock:
        key = {"key": MIGRATION_LOCK_KEY}
        if not lock.execute(sqlalchemy.text("SELECT pg_try_advisory_lock(:key)"), key).scalar_one():
            logger.warning("Another process is migrating the database; waiting for it to finish")
            lock.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), key)
        try:
            rx_model.migrate()
        finally:
            lock.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), key)
            lock.commit()
