"""A fresh, migrated database per test, on SQLite and on PostgreSQL (tests/postgres.py).

Fixtures (registered in tests/conftest.py): ``db_url`` and ``empty_db_url`` run each test
that asks for them once per ``database_kind``; a module that checks something the same on
both databases narrows ``database_kind`` to one by defining its own.
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


@pytest.fixture(scope="module")
def template_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "gateway.db"
    migrated_database(path)
    return path


@pytest.fixture(scope="module")
def postgres_template(postgres: PostgresServer) -> str:
    """A migrated PostgreSQL database that each test copies (CREATE DATABASE ... TEMPLATE)."""
    return postgres.migrated_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_kind(request) -> str:
    return request.param


@pytest.fixture
def db_url(database_kind, request, tmp_path) -> Iterator[str]:
    """A fresh, migrated database of each kind: the storage behaves the same on both."""
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
    """A database of each kind that was never migrated."""
    if database_kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        server = request.getfixturevalue("postgres")
        url = server.url(server.create_database())
    yield url
    rx_model.get_engine(url).dispose()
