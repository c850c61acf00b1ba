"""The development server as a maintainer starts it (`make run`), on free ports of 127.0.0.1, the forms on
the embedded gateway; a pytest invocation of its own: it compiles into `.web` and reloads on changes."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.imap import DovecotServer
from tests.smtp import SmtpServer
from tests.support import (
    MANY_TABS_ENV,
    PORT_TAKEN,
    PROJECT_ROOT,
    QUICK_FILL_ENV,
    log_excerpt,
    start_on_free_ports,
    tool_env,
    wait_until,
)

START_TIMEOUT_S = 180
MAKE_RUN = ["make", "--no-print-directory", "run"]  # with the server's ports and DEV_HOST=127.0.0.1


class DevServer:
    def __init__(self, workdir: Path, extra_env: dict[str, str] | None = None):
        self.extra_env = extra_env or {}
        self.frontend_port: int | None = None
        self.backend_port: int | None = None
        self.db_url = f"sqlite:///{workdir / 'dev.db'}"
        self.log_path = workdir / "dev-server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.frontend_port}"

    def start(self) -> None:
        start_on_free_ports(self._start_on, count=2)

    def _start_on(self, frontend_port: int, backend_port: int) -> None:
        self.frontend_port, self.backend_port = frontend_port, backend_port
        env = tool_env(REFLEX_DB_URL=self.db_url, **MANY_TABS_ENV, **QUICK_FILL_ENV)
        for inherited in ("PUBLISHER_GATEWAY_URL", "REFLEX_REDIS_URL", "REFLEX_ENV_MODE", "PUBLISHER_DEV_HOST"):
            env.pop(inherited, None)
        env.update(self.extra_env)
        self.process = subprocess.Popen(
            [*MAKE_RUN, f"DEV_PORT={frontend_port}", f"BACKEND_PORT={backend_port}", "DEV_HOST=127.0.0.1"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=self.log_path.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_until(self._serving, START_TIMEOUT_S, f"`make run` on ports {self.frontend_port}/{self.backend_port}")
        except BaseException:
            self.stop()
            raise

    def _serving(self) -> bool:
        # Reflex stops when a port it was told is taken; Vite or the backend may fail alone.
        if self.process.poll() is not None or PORT_TAKEN.search(self.log()):
            raise RuntimeError(f"`make run` did not start; log:\n{log_excerpt(self.log())}")
        try:
            return (
                httpx.get(f"http://127.0.0.1:{self.backend_port}/ping", timeout=2).status_code == 200
                and httpx.get(f"{self.base_url}/", timeout=30).status_code == 200
            )
        except httpx.HTTPError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """Ctrl-C in the maintainer's terminal: SIGINT to the whole process group (make, Reflex, Vite)."""
        if self.process is None:
            return
        group = self.process.pid
        if self.process.poll() is None:
            os.killpg(group, signal.SIGINT)

        def group_gone() -> bool:
            self.process.poll()  # reap our own child, or its zombie keeps the group alive
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return True
            return False

        try:
            wait_until(group_gone, 30, "the development server's processes to exit")
        except TimeoutError:
            os.killpg(group, signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


BOUNCE_HOOK_SECRET = "bounce-hook-secret-for-the-dev-server-0123"
BOUNCE_FOLDER = "Bounces make run"  # the folder of the tests' Dovecot it reads


@pytest.fixture(scope="module")
def dev_server(
    tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer, dovecot: DovecotServer
) -> Iterator[DevServer]:
    dovecot.append(b"From: jo@example.org\r\nSubject: Hi\r\n\r\nHello\r\n", folder=BOUNCE_FOLDER)  # makes the folder
    bounces = {
        "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example",
        "PUBLISHER_BOUNCE_MAILBOX": dovecot.url(BOUNCE_FOLDER),
        "PUBLISHER_BOUNCE_CA_FILE": str(dovecot.ca_file),
        "PUBLISHER_BOUNCE_POLL_S": "1",
        "PUBLISHER_BOUNCE_WEBHOOK_SECRET": BOUNCE_HOOK_SECRET,
    }
    server = DevServer(tmp_path_factory.mktemp("dev"), extra_env={**smtp.mail_env(), **bounces})
    server.start()
    try:
        yield server
    finally:
        server.stop()
