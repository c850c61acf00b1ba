"""tests/unit starts no process and opens no socket (IPv4, IPv6; Unix sockets stay allowed): hooks,
not a fixture, so module and session fixtures' setup is guarded too, and only for this folder's items."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import PROJECT_ROOT

SITE = "https://books.example.com"
T0 = 1_800_000_000.0  # a minute's start (divisible by 60)
MESSAGE = "tests/unit starts no process and opens no socket: move this test to tests/services"


class UnitTestNeedsAServer(RuntimeError):
    pass


def _refuse(what: str):
    def refused(*args, **kwargs):
        raise UnitTestNeedsAServer(f"{MESSAGE} ({what})")

    return refused


def _network_guarded(method_name: str):
    original = getattr(socket.socket, method_name)

    def guarded(self: socket.socket, *args, **kwargs):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise UnitTestNeedsAServer(f"{MESSAGE} (socket.{method_name} {args[0] if args else ''})")
        return original(self, *args, **kwargs)

    return guarded


@contextlib.contextmanager
def no_process_and_no_socket() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for method_name in ("connect", "connect_ex", "bind"):
            patch.setattr(socket.socket, method_name, _network_guarded(method_name))
        patch.setattr(subprocess.Popen, "__init__", _refuse("subprocess.Popen"))
        patch.setattr(asyncio, "create_subprocess_exec", _refuse("asyncio.create_subprocess_exec"))
        patch.setattr(asyncio, "create_subprocess_shell", _refuse("asyncio.create_subprocess_shell"))
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    with no_process_and_no_socket():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with no_process_and_no_socket():
        return (yield)


@pytest.fixture
def benchmark(monkeypatch):
    """A script of benchmarks/ loaded as a module (its dataclasses look their module up)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(f"{name}_benchmark", PROJECT_ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
        return module

    return load


class Clock:
    """A clock the test moves: seconds (``T0`` on), or a datetime."""

    def __init__(self, now: Any = T0):
        self.now = now

    def __call__(self) -> Any:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """The forms' clock (milliseconds), moved by the test."""
    fake = Clock()
    monkeypatch.setattr("publisher.web.submissions.now_ms", fake)
    return fake


@pytest.fixture
def site(monkeypatch) -> None:
    monkeypatch.setattr("publisher.web.seo.site_url", lambda: SITE)


def http_scope(
    path: str = "/", more_headers: dict[str, str] | None = None, address: str = "203.0.113.7", **extra
) -> dict:
    """An ASGI request as a server hands it on; ``extra`` sets or replaces any key (``type="websocket"``)."""
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"books.example.com")]
        + [(name.lower().encode(), value.encode("latin-1")) for name, value in (more_headers or {}).items()],
        "client": (address, 50000),
        **extra,
    }
