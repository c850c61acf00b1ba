"""A fresh, migrated database per test: SQLite, and PostgreSQL (tests/postgres.py) where the SQL differs.

Fixtures (registered in tests/conftest.py): ``db_url`` and ``empty_db_url`` give a test a
database of its ``database_kind``, SQLite unless the test is marked ``ON_BOTH_DATABASES``:
the tests of the statements each database runs its own way (FOR UPDATE SKIP LOCKED claims,
advisory locks, ON CONFLICT inserts and upserts, date functions, LIKE, the migrations) and of
PostgreSQL's own failures. The rest of the storage is the same SQL on both, so it runs on one.
Both kinds copy a template migrated once a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from reflex import model as rx_model

from tests.postgres import PostgresServer
from tests.support import publisher_gateway


def migrated_database(path: Path) -> str:
    """A fresh SQLite database with the schema from the committed Alembic migrations."""
    url = f"sqlite:///{path}"
    publisher_gateway(url, "migrate")
    return url


@pytest.fixture(scope="session")
def template_db(tmp_path_factory) -> Iterator[Path]:
    """A migrated SQLite file that each test copies, made once a session; its end checks that no
    test wrote to it instead of to its copy (a mode bit would not stop root)."""
    path = tmp_path_factory.mktemp("template") / "gateway.db"
    migrated_database(path)
    made = path.read_bytes()
    yield path
    assert path.read_bytes() == made, f"a test changed the template database {path}: tests change their copy"


@pytest.fixture(scope="session")
def postgres_template(postgres: PostgresServer) -> str:
    """A migrated PostgreSQL database that each test copies (CREATE DATABASE ... TEMPLATE), made once
    a session; it takes no connections, so no test can change it (and none keeps a copy waiting)."""
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
    """A fresh, migrated database of the test's kind, copied from the session's template."""
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
    """A database of the test's kind that was never migrated."""
    if database_kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        server = request.getfixturevalue("postgres")
        url = server.url(server.create_database())
    yield url
    rx_model.get_engine(url).dispose()
