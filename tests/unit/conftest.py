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

import pytest

from tests.support import PROJECT_ROOT

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
