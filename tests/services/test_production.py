"""publisher-serve's start-up checks as the process that runs them: its exit status and what it writes
(what each check says: tests/unit/test_production.py, tests/unit/test_settings.py)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from publisher.server.production import ServeError, check_redis
from tests.unit.test_production import fake_build
from tests.unit.test_settings import MAIL

SERVE = str(Path(sys.executable).parent / "publisher-serve")


def test_without_a_form_secret_the_production_server_stops_naming_it(tmp_path):
    fake_build(tmp_path)
    result = subprocess.run(
        [SERVE], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.startswith("publisher-serve: PUBLISHER_FORM_SECRET is not set: the production server needs")


def test_unreachable_redis_stops_start_up_naming_the_variable_without_the_password():
    with pytest.raises(ServeError) as error:
        check_redis("redis://:s3cret@127.0.0.1:1/0")
    message = str(error.value)
    assert "cannot reach Redis at REFLEX_REDIS_URL (redis://:***@127.0.0.1:1/0)" in message
    assert "s3cret" not in message


def test_a_stop_signal_during_start_up_exits_at_once(tmp_path):
    """As PID 1 in a container a signal without a handler is ignored: the runtime would wait its timeout."""
    fake_build(tmp_path)
    with socket.socket() as silent_redis:  # accepts the connection, never answers the ping
        silent_redis.bind(("127.0.0.1", 0))
        silent_redis.listen()
        silent_redis.settimeout(60)
        env = {"PATH": "/usr/bin:/bin", "REFLEX_REDIS_URL": f"redis://127.0.0.1:{silent_redis.getsockname()[1]}/0"}
        server = subprocess.Popen([SERVE], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
        try:
            connection, _ = silent_redis.accept()  # start-up has reached its Redis check
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=5) == 128 + signal.SIGTERM
            connection.close()
        finally:
            server.kill()
            server.wait()


def test_a_password_that_breaks_its_url_stops_start_up_without_a_piece_of_it(tmp_path):
    fake_build(tmp_path)
    smtp_url = "smtps://site:Ali@Baba/Open?Sesame#Now@smtp.example.com:465"
    env = {**MAIL, "PATH": "/usr/bin:/bin", "PUBLISHER_SMTP_URL": smtp_url, "PUBLISHER_LIST_SECRET": "s" * 40}
    result = subprocess.run([SERVE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == (
        "publisher-serve: PUBLISHER_SMTP_URL: percent-encode / ? # [ ] and @ in the user and password "
        "(%2F %3F %23 %5B %5D %40); got 'smtps://site:***@smtp.example.com:465'\n"
    )
    assert not [piece for piece in ("Ali", "Baba", "Open", "Sesame", "Now") if piece in result.stderr + result.stdout]
