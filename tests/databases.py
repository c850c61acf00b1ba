"""A fresh database per test (``db_url``, ``empty_db_url``), copied from a template migrated once a session:
SQLite, and PostgreSQL too for a test marked ``ON_BOTH_DATABASES`` (statements each runs its own way)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.config import Config
from reflex import model as rx_model

from alembic import command
from tests.postgres import PostgresServer
from tests.support import PROJECT_ROOT, publisher_gateway


def migrate_to(db_url: str, revision: str, downgrade: bool = False) -> None:
    """Alembic's own command, without alembic.ini (its logging set-up would silence this session's loggers)."""
    config = Config()
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.set_main_option("sqlalchemy.url", db_url)
    (command.downgrade if downgrade else command.upgrade)(config, revision)


def migrated_database(path: Path) -> str:
    url = f"sqlite:///{path}"
    publisher_gateway(url, "migrate")
    return url


@pytest.fixture(scope="session")
def template_db(tmp_path_factory) -> Iterator[Path]:
    """A migrated SQLite file each test copies; at the end, no test wrote to it (a mode bit would not stop root)."""
    path = tmp_path_factory.mktemp("template") / "gateway.db"
    migrated_database(path)
    made = path.read_bytes()
    yield path
    assert path.read_bytes() == made, f"a test changed the template database {path}: tests change their copy"


@pytest.fixture(scope="session")
def postgres_template(postgres: PostgresServer) -> str:
    """A migrated PostgreSQL database each test copies (CREATE DATABASE ... TEMPLATE); it takes no connections."""
    name = postgres.migrated_database()
    postgres.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
    return name


# On a test whose statements differ between the databases: it runs once on each.
ON_BOTH_DATABASES = pytest.mark.parametrize("database_kind", ["sqlite", "postgresql"])


@pytest.fixture(params=["sqlite"])
def database_kind(request) -> str:
    """SQLite, the default; ``ON_BOTH_DATABASES`` parametrizes a test with PostgreSQL too."""
    return request.param


@pytest.fixture
def db_url(database_kind, request, tmp_path) -> Iterator[str]:
    if database_kind == "sqlite":
        path = tmp_path / "gateway.db"
        path.write_bytes(request.getfixturevalue("template_db").read_bytes())
        url = f"sqlite:///{path}"
    else:
        server = request.getfixturevalue("postgres")
        url = server.url(server.create_database(template=request.getfixturevalue("postgres_template")))
    yield url
    rx_model.get_engine(url).dispose()  # each test's pool closes with it


@pytest.fixture
def empty_db_url(database_kind, request, tmp_path) -> Iterator[str]:
    if database_kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        server = request.getfixturevalue("postgres")
        url = server.url(server.create_database())
    yield url
    rx_model.get_engine(url).dispose()
