"""Helpers shared by the test suites: free ports, waiting on conditions, the prod server."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
import redis

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = PROJECT_ROOT / ".web" / "build" / "client"
ASSETS_DIR = PROJECT_ROOT / "assets"
DOCS = PROJECT_ROOT / "docs"
TEST_SITE_URL = "https://books.example.com"

T = TypeVar("T")


def held_port(port: int = 0) -> socket.socket:
    """A free port of 127.0.0.1 (or ``port`` again, past TIME_WAIT), bound but refused until a server listens."""
    sock = socket.socket()
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


PORT_TAKEN = re.compile(r"already in use", re.IGNORECASE)


def port_taken(port: int) -> bool:
    try:
        held_port(port).close()
    except OSError:
        return True
    return False


@contextmanager
def documented_port(port: int) -> Iterator[None]:
    """This machine's lock on a documented fixed port: parallel lanes and clones use it one after the other."""
    with open(f"/tmp/publisher-tests-port-{port}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def start_on_free_ports(start: Callable[..., T], count: int = 1, tries: int = 5) -> T:
    """``start(*ports)`` on ``count`` free ports; again on others when its error says one was taken meanwhile."""
    for attempt in range(1, tries + 1):
        held = [held_port() for _ in range(count)]  # all at once: ``count`` different ports
        ports = [sock.getsockname()[1] for sock in held]
        for sock in held:
            sock.close()
        try:
            return start(*ports)
        except Exception as failure:
            if attempt == tries or not PORT_TAKEN.search(str(failure)):
                raise
    raise AssertionError("unreachable")


def log_excerpt(log: str) -> str:
    """The end of a log, after any line saying its port was taken (start_on_free_ports reads it)."""
    taken = [line for line in log.splitlines() if PORT_TAKEN.search(line)]
    return "\n".join([*taken, "...", log[-4000:]]) if taken else log[-4000:]


def wait_until(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.25) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise TimeoutError(f"Timed out after {timeout:.0f}s waiting for {what}")


def asgi_exchange(app, scope: dict, incoming: list[dict], then: dict | None = None) -> tuple[list[dict], int]:
    """``app`` on one in-process connection: the messages it sent, and how many of ``incoming`` it read."""
    sent: list[dict] = []
    waiting = list(incoming)

    async def receive() -> dict:
        return waiting.pop(0) if waiting else then or {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent, len(incoming) - len(waiting)


def clear_of_midnight() -> None:
    """Wait out the last 3 minutes of a UTC day: a test of today's visit counts reads back its own day."""
    now = time.time()
    left = 86400 - now % 86400
    if left < 180:
        time.sleep(left + 1)


VENV_BIN = Path(sys.executable).parent


# Every tab of a suite comes from 127.0.0.1: its servers raise the per-address tab limits.
MANY_TABS_ENV = {"PUBLISHER_MAX_TABS_PER_ADDRESS": "1000", "PUBLISHER_NEW_TABS_PER_MINUTE": "10000"}
# The contact form's minimum fill time on the tests' servers: 3 s, not the spec's 5 (unit/test_antispam pins it).
QUICK_FILL_TIME_MS = 3000
QUICK_FILL_ENV = {"PUBLISHER_MIN_FILL_TIME_MS": str(QUICK_FILL_TIME_MS)}
FORM_SECRET = "form-secret-of-the-tests-0123456789abcdef"
FORM_SECRET_ENV = {"PUBLISHER_FORM_SECRET": FORM_SECRET}


def event_channel_upgrade(port: int, headers: Mapping[str, str] | None = None) -> tuple[int, socket.socket]:
    """A tab's websocket upgrade of the event channel: its status (101 or 429) and the open connection."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    conn.sendall(
        (
            f"GET /_event/?EIO=4&transport=websocket&token=raw-upgrade HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
        ).encode()
    )
    return int(conn.recv(1024).split(b" ", 2)[1]), conn


def readers_environment() -> dict[str, str]:
    """A reader's shell: none of the site's own variables (no secret, no database, no URL)."""
    return {key: value for key, value in os.environ.items() if not key.startswith(("PUBLISHER_", "REFLEX_"))}


def tool_env(**extra: str) -> dict[str, str]:
    """The environment the Makefile gives Reflex: Node from the venv, npm, no telemetry."""
    return {
        **os.environ,
        "PATH": str(VENV_BIN) + os.pathsep + os.environ.get("PATH", ""),
        "REFLEX_USE_NPM": "1",
        "REFLEX_CHECK_LATEST_VERSION": "false",
        "REFLEX_TELEMETRY_ENABLED": "false",
        **extra,
    }


def publisher_gateway(
    db_url: str, *args: str, check: bool = True, env: Mapping[str, str | None] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`publisher-gateway ARGS` on ``db_url``, in this process (tests/gateway_command.py), as ``subprocess.run``."""
    from tests import gateway_command

    command = [str(VENV_BIN / "publisher-gateway"), *args]
    environ = {**(env or {}), "REFLEX_DB_URL": db_url}
    status, out, err = gateway_command.run(command, list(args), environ, PROJECT_ROOT, cwd)
    result = subprocess.CompletedProcess(command, status, out, err)
    if check:
        result.check_returncode()
    return result


def announce_process(db_url: str, env: dict[str, str], slug: str, log: Path) -> subprocess.Popen:
    """`publisher-gateway announce SLUG --yes` left running (to kill it, or to run two), its output in ``log``."""
    return subprocess.Popen(
        [str(VENV_BIN / "publisher-gateway"), "announce", slug, "--yes"],
        cwd=PROJECT_ROOT,
        env={**os.environ, **env, "REFLEX_DB_URL": db_url},
        stdin=subprocess.DEVNULL,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def project_path(root: Path) -> dict[str, str]:
    """For a project elsewhere than this checkout: its own ``publisher`` package first on the path."""
    return {} if root == PROJECT_ROOT else {"PYTHONPATH": str(root)}


COPIED = ("publisher", "assets", "alembic", "reflex.lock", "rxconfig.py", "alembic.ini")
# What a copy's build writes anew: left out of its .web.
_NOT_COPIED = {PROJECT_ROOT / ".web": {"build", "backend"}, PROJECT_ROOT / ".web" / "public" / "images": {"variants"}}


def copy_project(root: Path) -> None:
    """This checkout's code, assets and migrations copied to ``root``; its ``.web`` (Node's packages) kept."""
    for name in COPIED:
        source, target = PROJECT_ROOT / name, root / name
        if source.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    if not (root / ".web").exists():
        shutil.copytree(
            PROJECT_ROOT / ".web",
            root / ".web",
            symlinks=True,
            ignore=lambda directory, names: [n for n in names if n in _NOT_COPIED.get(Path(directory), ())],
        )


def build_site(log_path: Path, site_url: str | None = TEST_SITE_URL, root: Path = PROJECT_ROOT) -> None:
    deploy_url = {"REFLEX_DEPLOY_URL": site_url} if site_url else {}
    with log_path.open("wb") as log:
        subprocess.run(
            [sys.executable, str(PROJECT_ROOT / "scripts" / "build.py")],
            cwd=root,
            env=tool_env(**deploy_url, **project_path(root)),
            stdout=log,
            stderr=subprocess.STDOUT,
            check=True,
            timeout=900,
        )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`make build` once per test session; servers only serve it (import into a conftest)."""
    build_site(tmp_path_factory.mktemp("build") / "build.log")


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """A host's usual umask (022: new files readable by everyone), as an operator's shell has it; restored after."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def container_command() -> list[str]:
    """The start command of the Dockerfile's final image (its CMD, JSON form)."""
    dockerfile = (PROJECT_ROOT / "Dockerfile").read_text()
    commands = re.findall(r"^CMD\s+(\[.*\])\s*$", dockerfile, re.M)
    if not commands:
        raise RuntimeError("Dockerfile has no CMD in JSON form")
    return json.loads(commands[-1])


@dataclass(eq=False)
class ProductionServer:
    """The container's start command on 127.0.0.1, serving the existing build (no rebuild)."""

    log_path: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    root: Path = PROJECT_ROOT
    port: int | None = None
    own_address: bool = False
    process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://localhost:{self.port}"

    def start(self, timeout: float = 120) -> None:
        if self.port is None:
            start_on_free_ports(lambda port: self._start_on(port, timeout))
        else:  # started again, on the port its pages know
            self._start_on(self.port, timeout)

    def _start_on(self, port: int, timeout: float) -> None:
        self.port = port
        command = container_command()
        command[0] = str(VENV_BIN / command[0])
        own = {"REFLEX_DEPLOY_URL": f"http://localhost:{port}"} if self.own_address else {}
        env = tool_env(
            HOST="127.0.0.1",
            PORT=str(port),
            **project_path(self.root),
            **{**MANY_TABS_ENV, **QUICK_FILL_ENV, **FORM_SECRET_ENV, **self.extra_env, **own},
        )
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"Server exited early; log:\n{log_excerpt(self.log_path.read_text())}")
            try:
                return httpx.get(f"{self.base_url}/ping", timeout=2).status_code == 200 and (
                    httpx.get(self.base_url + "/", timeout=5).status_code == 200
                )
            except httpx.HTTPError:
                return False

        try:
            wait_until(ready, timeout, f"the production server on port {port}", interval=0.1)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGTERM to the main process, as container runtimes send it; it stops its workers."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


class RedisServer:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.log_path = workdir / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int = start_on_free_ports(self._start_on)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._start_on(self.port)

    def _start_on(self, port: int) -> int:
        self.port = port
        logged_before = self.log_path.stat().st_size if self.log_path.exists() else 0
        command = f"redis-server --bind 127.0.0.1 --port {port} --appendonly no --save".split()
        self.process = subprocess.Popen(
            [*command, "", "--dir", str(self.workdir)],  # no snapshot: --save ""
            stdout=self.log_path.open("ab"),
            stderr=subprocess.STDOUT,
        )

        def ready() -> bool:
            if self.process.poll() is not None:
                log = self.log_path.read_bytes()[logged_before:].decode(errors="replace")
                raise RuntimeError(f"redis-server exited with {self.process.returncode}; log:\n{log_excerpt(log)}")
            return self.answers()

        wait_until(ready, 15, f"redis-server on port {port}")
        return port

    def answers(self) -> bool:
        """True when Redis answers a PING (whatever else took the port may never answer)."""
        try:
            with redis.Redis.from_url(self.url, socket_timeout=5) as client:
                return client.ping()
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextmanager
def running_server(
    workdir: Path, extra_env: dict[str, str], root: Path = PROJECT_ROOT, own_address: bool = False
) -> Iterator[ProductionServer]:
    prod = ProductionServer(workdir / "reflex.log", extra_env=extra_env, root=root, own_address=own_address)
    prod.start()
    try:
        yield prod
    finally:
        prod.stop()


class _BusyServer(ThreadingHTTPServer):
    request_queue_size = 1024  # a burst of hundreds of connections must queue, not be refused
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class RecordingGateway:
    """A tiny gateway answering as a test chooses (status, delay, dropped connection), on ``sock`` if given."""

    def __init__(self, sock: socket.socket | None = None):
        self.requests: list[dict] = []
        self.release = threading.Event()
        self.reset()
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                gateway.requests.append(
                    {"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body}
                )
                if gateway.delay_s:
                    gateway.release.wait(gateway.delay_s)
                if gateway.drop_connection:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                payload = json.dumps({"ok": gateway.status < 400}).encode()
                self.send_response(gateway.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        if sock is None:
            self.server = _BusyServer(("127.0.0.1", 0), Handler)
        else:
            self.server = _BusyServer(sock.getsockname(), Handler, bind_and_activate=False)
            self.server.socket.close()
            self.server.socket = sock
            self.server.server_address = sock.getsockname()
            self.server.server_activate()  # listens on the socket the test held
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(request["body"]) for request in self.requests]

    def reset(self) -> None:
        self.requests.clear()
        self.status = 200
        self.delay_s = 0.0
        self.drop_connection = False
        self.release.clear()

    @contextmanager
    def for_one_test(self) -> Iterator[RecordingGateway]:
        self.reset()
        yield self
        self.release.set()
        self.reset()

    def __exit__(self, *exc):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def test_gateway() -> Iterator[RecordingGateway]:
    with RecordingGateway() as recording:
        yield recording


@pytest.fixture
def gateway(test_gateway: RecordingGateway) -> Iterator[RecordingGateway]:
    """The test gateway, answering 200 with nothing recorded yet; a held answer is let go after the test."""
    with test_gateway.for_one_test() as fresh:
        yield fresh
