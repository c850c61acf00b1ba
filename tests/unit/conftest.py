"""tests/unit starts no process and opens no socket: it runs in seconds.

While a unit test's fixtures are set up and while it runs, connecting or binding a
network socket (IPv4, IPv6) and starting a process raise at once, naming the stage a
test that needs a server belongs in. Unix-domain sockets stay allowed: the event loop
wakes itself through a ``socket.socketpair``.

Hooks (not a fixture): they wrap the setup of module- and session-scoped fixtures too,
and only for the items under this folder, so the other stages in one run are untouched.
A teardown is left unguarded: a session fixture of another stage may end after the last
unit test.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
from collections.abc import Iterator

import pytest

MESSAGE = "tests/unit starts no process and opens no socket: move this test to tests/services"


class UnitTestNeedsAServer(RuntimeError):
    """A unit test tried to reach (or be) a server, or to start a process."""


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
