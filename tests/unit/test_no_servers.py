"""tests/unit's own rule (tests/unit/conftest.py): no process, no network socket; the event
loop's own socket pair and Unix-domain sockets still work."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest

# What tests/unit/conftest.py raises (a RuntimeError: no OSError handler in the code under test hides it).
MESSAGE = "tests/unit starts no process and opens no socket: move this test to tests/services"


def test_connecting_listening_or_starting_a_process_fails_at_once_naming_the_stage_to_move_to():
    with pytest.raises(RuntimeError, match="move this test to tests/services"):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    with socket.socket(socket.AF_INET6) as sock, pytest.raises(RuntimeError, match=MESSAGE):
        sock.connect_ex(("::1", 9))
    with socket.socket() as sock, pytest.raises(RuntimeError, match=MESSAGE) as refused:
        sock.bind(("127.0.0.1", 0))
    assert str(refused.value).startswith(MESSAGE)
    with pytest.raises(RuntimeError, match="tests/unit starts no process"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_the_event_loop_and_unix_sockets_still_work(tmp_path):
    async def echo() -> bytes:
        await asyncio.sleep(0)
        return b"ok"

    assert asyncio.run(echo()) == b"ok"
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b"ping")
        assert right.recv(4) == b"ping"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "unix.sock"))
