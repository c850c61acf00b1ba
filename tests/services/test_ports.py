"""The suite's own ports (tests/support.py): a port taken between seen free and listened on fails no
test; a port a test holds is refused to clients and kept from everyone else."""

from __future__ import annotations

import socket

import pytest

from tests import support
from tests.smtp import SmtpServer
from tests.support import RedisServer, held_port


class SeenFree:
    def __init__(self, port: int):
        self.port = port

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def close(self) -> None:
        pass


def test_a_program_whose_port_is_taken_before_it_listens_is_started_on_another(tmp_path, monkeypatch):
    with socket.create_server(("127.0.0.1", 0)) as intruder:  # another process's server, as it were
        taken = intruder.getsockname()[1]
        choices = iter([SeenFree(taken)])
        monkeypatch.setattr(support, "held_port", lambda port=0: next(choices, None) or held_port(port))
        redis = RedisServer(tmp_path)
        try:
            assert redis.port != taken and redis.answers()
            assert "Address already in use" in redis.log_path.read_text()  # the first try met the intruder
        finally:
            redis.stop()


@pytest.mark.parametrize(
    ("error", "tries"), [("bad configuration", 1), ("bind(127.0.0.1:{port}) failed: Address already in use", 3)]
)
def test_a_program_is_started_again_on_other_ports_only_when_its_port_was_taken_and_a_few_times(error, tries):
    ports = []

    def start(port: int) -> None:
        ports.append(port)
        raise RuntimeError(error.format(port=port))

    with pytest.raises(RuntimeError, match="bad configuration|Address already in use"):
        support.start_on_free_ports(start, tries=3)
    assert len(ports) == len(set(ports)) == tries


def test_a_held_port_refuses_connections_and_no_one_else_can_take_it():
    with held_port() as held:
        port = held.getsockname()[1]
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5)
        with socket.socket() as other, pytest.raises(OSError, match="Address already in use"):
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # even one asking to share
            other.bind(("127.0.0.1", port))


def test_a_stopped_smtp_server_refuses_connections_and_keeps_its_port_for_its_restart():
    smtp = SmtpServer()
    with pytest.raises(ConnectionRefusedError):  # not started yet: down
        socket.create_connection(("127.0.0.1", smtp.port), timeout=5)
    smtp.start()
    with socket.create_connection(("127.0.0.1", smtp.port), timeout=5) as client:
        assert client.recv(1024).startswith(b"220 ")
    smtp.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", smtp.port), timeout=5)
    with socket.socket() as other, pytest.raises(OSError, match="Address already in use"):
        other.bind(("127.0.0.1", smtp.port))  # nobody else takes it while it is down
    smtp.start()  # the same port again, as the site's settings name it
    with socket.create_connection(("127.0.0.1", smtp.port), timeout=5) as client:
        assert client.recv(1024).startswith(b"220 ")
    smtp.stop()
