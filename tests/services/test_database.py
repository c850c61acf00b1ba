"""The database the embedded gateway stores into: the start-up check, the migration lock,
and outages while running. On a real PostgreSQL (Debian's package, one per session)."""

from __future__ import annotations

import os
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy
import sqlmodel
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from publisher import mailing_list
from publisher.storage import database, subscribers, tables
from publisher.storage.subscribers import SignUp
from tests.databases import ON_BOTH_DATABASES, migrate_to
from tests.postgres import GATEWAY_TABLES, PostgresServer
from tests.services.test_embedded_gateway import CONTACT, SUBSCRIPTION, embedded_for
from tests.support import FORM_SECRET_ENV, PROJECT_ROOT, VENV_BIN, held_port, publisher_gateway, wait_until
from tests.unit.test_production import fake_build


def test_a_database_that_does_not_answer_is_explained_naming_the_variable_without_the_password():
    with held_port() as closed:  # bound, not listening: refused, and no other process can take it
        url = f"postgresql+psycopg://publisher:s3cret-pw@127.0.0.1:{closed.getsockname()[1]}/site"
        with pytest.raises(database.DatabaseUnavailable) as refused:
            database.check(url)
        migrating = publisher_gateway(url, "migrate", check=False)  # the operator's command says the same
    assert (migrating.returncode, migrating.stderr) == (1, f"publisher-gateway: {refused.value}\n")
    said = str(refused.value)
    assert said.startswith(
        f"cannot reach the database at REFLEX_DB_URL (postgresql+psycopg://publisher:***@{url.split('@')[1]}): "
    )
    assert "Connection refused" in said and "Start the database or correct the URL." in said
    assert "s3cret-pw" not in said


def test_a_wrong_password_stops_start_up_without_printing_it(tmp_path, postgres: PostgresServer):
    fake_build(tmp_path)  # publisher-serve's start-up stops before serving
    env = {"PATH": "/usr/bin:/bin", "REFLEX_DB_URL": postgres.url().replace(postgres.password, "wrong-s3cret")}
    serve = [str(VENV_BIN / "publisher-serve")]
    result = subprocess.run(
        serve, cwd=tmp_path, env={**env, **FORM_SECRET_ENV}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.startswith("publisher-serve: cannot reach the database at REFLEX_DB_URL (")
    assert "(postgresql+psycopg://publisher:***@" in result.stderr
    assert 'password authentication failed for user "publisher"' in result.stderr
    assert "wrong-s3cret" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "REFLEX_DB_URL is not a database URL"),
        ("mysql+nodriver://u:pw@127.0.0.1/x", "REFLEX_DB_URL is not a database URL"),
    ],
)
def test_a_malformed_url_is_explained_and_a_working_database_passes_the_check(url, expected, postgres, tmp_path):
    with pytest.raises(database.DatabaseUnavailable, match=expected):
        database.check(url)
    database.check(postgres.url())
    database.check(f"sqlite:///{tmp_path / 'site.db'}")


def table_names(postgres: PostgresServer, name: str) -> list[str]:
    rows = postgres.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", name)
    return [row[0] for row in rows]


def test_containers_starting_together_migrate_once_and_all_start_and_a_current_database_stays(postgres: PostgresServer):
    name = postgres.create_database()
    env = {**os.environ, "REFLEX_DB_URL": postgres.url(name)}
    command = [str(VENV_BIN / "publisher-gateway"), "migrate"]
    processes = [
        subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outcomes = [(p.wait(timeout=120), p.stderr.read()) for p in processes]
    assert [code for code, _ in outcomes] == [0] * 2, outcomes
    assert table_names(postgres, name) == GATEWAY_TABLES
    before = postgres.execute("SELECT version_num FROM alembic_version", name)
    assert len(before) == 1
    result = publisher_gateway(postgres.url(name), "migrate")  # a third container: nothing to do
    assert "is up to date" in result.stderr
    assert "publisher:***@" in result.stderr and postgres.password not in result.stderr
    assert postgres.execute("SELECT version_num FROM alembic_version", name) == before
    # The lock went with the process: the next container to start does not wait.
    assert postgres.execute("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'") == [(0,)]


def test_a_migration_waits_while_another_process_holds_the_lock(postgres: PostgresServer):
    import psycopg

    name = postgres.create_database()
    with (
        psycopg.connect(postgres.url(name, driver="postgresql"), autocommit=True) as holder,
        ThreadPoolExecutor(1) as beside,
    ):
        holder.execute("SELECT pg_advisory_lock(%s)", (database.MIGRATION_LOCK_KEY,))
        waiting = beside.submit(publisher_gateway, postgres.url(name), "migrate")

        def blocked_on_the_lock() -> bool:
            rows = holder.execute(
                "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
            return rows[0] == 1

        wait_until(blocked_on_the_lock, 60, "the second migration to wait on the advisory lock", interval=0.05)
        assert not waiting.done()
        assert table_names(postgres, name) == []  # it did not start migrating
        holder.execute("SELECT pg_advisory_unlock(%s)", (database.MIGRATION_LOCK_KEY,))
        migrated = waiting.result(timeout=60)
    assert "Another process is migrating the database; waiting for it to finish" in migrated.stderr
    assert table_names(postgres, name) == GATEWAY_TABLES


@pytest.mark.asyncio
async def test_postgres_lost_while_running_fails_the_call_stores_nothing_and_recovers_when_it_returns(
    postgres: PostgresServer,
):
    url = postgres.url(postgres.migrated_database())
    local = embedded_for(url)
    await local.subscribe(SUBSCRIPTION)  # the pool now holds a connection
    postgres.stop()
    try:
        with pytest.raises(mailing_list.ListUnavailable):
            await local.subscribe({**SUBSCRIPTION, "email": "bo@example.com"})
        with pytest.raises(mailing_list.ListUnavailable):
            await local.send_email(CONTACT)
    finally:
        postgres.start()
    await local.subscribe({**SUBSCRIPTION, "email": "bo@example.com"})
    await local.send_email(CONTACT)
    assert [s.email for s in subscribers.list_subscribers(db_url=url)] == ["jo@example.com", "bo@example.com"]
    assert len(tables.list_messages(url)) == 1


@ON_BOTH_DATABASES
def test_the_migrations_build_exactly_the_tables_the_code_declares(db_url):
    # The migrations are written by hand: a column, index or constraint the models declare and
    # no migration creates (or the other way round) shows here, on both databases.
    with sqlalchemy.create_engine(db_url).connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), sqlmodel.SQLModel.metadata)
    assert differences == []


LATER_TABLES = {"visit_salt", "visit_seen", "visit_count", "waiting"}  # issue 42's visit counts, issue 50's waitlist
LATER_INDEXES = {"ix_subscription_event_at", "ix_contact_message_received_at"}
BEFORE_VISITS = "c9f1e6b3d482"  # the revision before issue 42's visit counts


@ON_BOTH_DATABASES
def test_the_visit_counts_and_the_waitlist_migrate_down_and_up_again(db_url):
    def schema() -> tuple[set[str], set[str]]:
        inspector = sqlalchemy.inspect(sqlalchemy.create_engine(db_url, poolclass=sqlalchemy.pool.NullPool))
        indexes = {
            index["name"]
            for table in ("subscription_event", "contact_message")
            for index in inspector.get_indexes(table)
            if index["name"]
        }
        return set(inspector.get_table_names()), indexes

    tables_now, indexes_now = schema()
    assert tables_now >= LATER_TABLES and indexes_now >= LATER_INDEXES
    migrate_to(db_url, BEFORE_VISITS, downgrade=True)
    assert schema() == (tables_now - LATER_TABLES, indexes_now - LATER_INDEXES)
    publisher_gateway(db_url, "migrate")  # the operator's command, up to the head again
    assert schema() == (tables_now, indexes_now)


def private_files(folder: Path) -> dict[str, int]:
    return {path.name: stat.S_IMODE(path.stat().st_mode) for path in sorted(folder.iterdir())}


def test_a_sqlite_database_and_its_write_ahead_log_are_the_sites_user_s_alone_also_ones_left_readable(
    tmp_path, usual_umask
):
    """Made by ``migrate`` or by the server's start-up check, written to, or left 0644 by an older version: 0600."""
    migrated, checked = tmp_path / "migrated", tmp_path / "checked"
    migrated.mkdir(), checked.mkdir()
    publisher_gateway(f"sqlite:///{migrated / 'publisher.db'}", "migrate")
    assert private_files(migrated) == {"publisher.db": 0o600}  # the command closed it: no log left
    database.check(f"sqlite:///{checked / 'publisher.db'}")  # publisher-serve's first step
    assert private_files(checked) == {"publisher.db": 0o600}

    url = f"sqlite:///{migrated / 'publisher.db'}"
    subscribers.subscribe(SignUp(email="private@example.com", name="Pat"), None, url)  # the pool stays open
    names = ["publisher.db", "publisher.db-shm", "publisher.db-wal"]
    assert private_files(migrated) == dict.fromkeys(names, 0o600)
    for name in names:
        (migrated / name).chmod(0o644)  # as an older version left them
    database.check(url)
    assert private_files(migrated) == dict.fromkeys(names, 0o600)
