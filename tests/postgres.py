"""Debian's PostgreSQL for a test session: a throwaway cluster on a free 127.0.0.1 port, taking passwords
(scram-sha-256) as a deployment does; under root, owned by ``postgres`` (initdb refuses root)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlmodel

from publisher.storage import tables  # noqa: F401 - its models make the metadata
from tests.support import log_excerpt, publisher_gateway, start_on_free_ports

INSTALL_COMMAND = "apt-get update && apt-get install -y postgresql"
USER = "publisher"
INITDB_OPTIONS = ("--username", USER, "--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C.UTF-8")


# The embedded gateway's tables after `publisher-gateway migrate`: the models' and Alembic's own.
GATEWAY_TABLES = sorted([*sqlmodel.SQLModel.metadata.tables, "alembic_version"])


class PostgresServer:
    """One PostgreSQL cluster; ``url(name)`` for a database in it, ``stop()``/``start()`` for outages."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
        if not found:
            raise RuntimeError(f"PostgreSQL's server programs are missing. Install them as root:\n  {INSTALL_COMMAND}")
        self.bindir = Path(found[-1]).parent  # the newest installed (Debian keeps them out of PATH)
        self.port = 0  # chosen at the first start
        self.password = f"pw-{uuid.uuid4().hex[:12]}"
        self.owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        # Not under pytest's tmp_path: as root that is private to root, and the cluster is not.
        self.root = Path(tempfile.mkdtemp(prefix="publisher-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        password_file = self.root / "password"
        password_file.write_text(self.password)
        if self.owner:
            for path in (self.root, password_file):
                os.chown(path, self.owner.pw_uid, self.owner.pw_gid)
        self._run("initdb", "--pgdata", str(self.data), "--pwfile", str(password_file), *INITDB_OPTIONS)
        password_file.unlink()
        start_on_free_ports(self._start_on)

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        owner = {"user": self.owner.pw_uid, "group": self.owner.pw_gid, "extra_groups": []} if self.owner else {}
        result = subprocess.run(
            [str(self.bindir / program), *args], capture_output=True, text=True, timeout=120, cwd=self.root, **owner
        )
        if result.returncode != 0:
            raise RuntimeError(f"{program} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def start(self) -> None:
        """Start again, on the same port, after stop(); returns when it accepts connections."""
        self._start_on(self.port)

    def _start_on(self, port: int) -> None:
        self.port = port
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {self.root} "
            "-c max_connections=300 -c fsync=off -c full_page_writes=off"
        )
        logged_before = self.log.stat().st_size if self.log.exists() else 0
        try:
            self._run(
                "pg_ctl",
                "--pgdata",
                str(self.data),
                "--log",
                str(self.log),
                "--wait",
                "--timeout",
                "60",
                "--options",
                options,
                "start",
            )
        except RuntimeError as failure:  # the reason is in the server's log, not in pg_ctl's words
            log = self.log.read_bytes()[logged_before:].decode(errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"{failure}\nserver log:\n{log_excerpt(log)}") from None

    def stop(self) -> None:
        """A fast shutdown: open connections are ended, committed data is kept."""
        self._run("pg_ctl", "--pgdata", str(self.data), "--mode", "fast", "--wait", "stop")

    def url(self, database: str = "postgres", driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> list[tuple]:
        """One statement in autocommit mode (CREATE DATABASE needs it); the rows it returns."""
        import psycopg

        with psycopg.connect(self.url(database, driver="postgresql"), autocommit=True) as connection:
            cursor = connection.execute(sql)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, template: str | None = None) -> str:
        name = f"test_{uuid.uuid4().hex[:12]}"
        self.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name

    def migrated_database(self) -> str:
        name = self.create_database()
        publisher_gateway(self.url(name), "migrate")
        return name

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):  # already stopped
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer()
    yield server
    server.close()
