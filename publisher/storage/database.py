"""The embedded gateway's database: which one, whether it answers, its migration (the engine: tables.py)."""

from __future__ import annotations

import logging

import sqlalchemy
from reflex import model as rx_model
from reflex_base import config as reflex_config

from publisher.config.secret_files import DB_URL_VAR, redact_url
from publisher.storage import tables

logger = logging.getLogger(__name__)

# The advisory lock's key: any 64-bit number the application reserves ("publ" + "migr").
MIGRATION_LOCK_KEY = 0x7075626C_6D696772
CONNECT_TIMEOUT_S = 5


class DatabaseUnavailable(RuntimeError):
    """The message names REFLEX_DB_URL (password hidden) and the fix."""


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


def check(url: str | None = None) -> None:
    """Connect once before any worker starts; raise DatabaseUnavailable saying what is wrong."""
    url = url or configured_url()
    # PostgreSQL: a host that does not answer must not hold start-up for the TCP timeout.
    connect_args = {"connect_timeout": CONNECT_TIMEOUT_S} if url.startswith("postgresql") else {}
    try:
        engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool, connect_args=connect_args)
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
    tables.private_sqlite_file(engine.url)
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
    """On PostgreSQL one process at a time (an advisory lock): a second container waits, then has nothing to do."""
    config = tables.alembic_config()
    if not config.is_file():
        raise DatabaseUnavailable(
            f"No Alembic configuration at {config.absolute()}: set ALEMBIC_CONFIG to the project's alembic.ini "
            "(the image's is /app/alembic.ini)"
        )
    url = configured_url()
    migrating = tables.engine(url)
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
