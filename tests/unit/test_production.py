"""publisher-serve's start-up checks (the container's start command), without starting it:
the ones that run publisher-serve as a process are in tests/services/test_production.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from publisher.server import production
from publisher.server.production import DEFAULT_HOST, DEFAULT_PORT, ServeError, listen_address


def fake_build(root: Path, manifest: bool = True) -> None:
    """What `make build` leaves for the server to check: a page, and which pages start the app."""
    build = root / ".web" / "build" / "client"
    build.mkdir(parents=True)
    (build / "index.html").write_text("<!doctype html>")
    if manifest:
        (root / ".web" / "backend").mkdir(parents=True)
        (root / ".web" / "backend" / "page_kinds.json").write_text('{"/": []}')


def test_unknown_arguments_are_refused_with_the_usage(capsys):
    assert production.main(["--port", "80"]) == 2
    assert capsys.readouterr().err == "usage: publisher-serve [--prepare]\n"


def test_prepare_without_a_build_says_how_to_build(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert production.main(["--prepare"]) == 2
    assert "run `make build` first" in capsys.readouterr().err


def test_a_build_without_the_page_kinds_is_refused_with_how_to_rebuild(tmp_path, monkeypatch):
    fake_build(tmp_path, manifest=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ServeError) as refused:
        production.require_build()
    assert "has no .web/backend/page_kinds.json (which pages start the app)" in str(refused.value)
    assert "run `make build` again" in str(refused.value)


def test_defaults_bind_locally_on_8000():
    assert listen_address({}) == (DEFAULT_HOST, DEFAULT_PORT) == ("127.0.0.1", 8000)


def test_host_and_port_come_from_the_environment():
    assert listen_address({"HOST": "0.0.0.0", "PORT": "9000"}) == ("0.0.0.0", 9000)


@pytest.mark.parametrize("port", ["http", "0", "70000", "-1", "80.5"])
def test_a_bad_port_is_refused_with_a_clear_message(port):
    with pytest.raises(ServeError, match="PORT must be a TCP port number"):
        listen_address({"PORT": port})


def test_no_redis_configured_is_fine():
    """Unset or empty: start-up goes on without looking for a Redis (tests/unit refuses any
    connection, so a look would raise here, as it does for a configured one)."""
    from publisher.server.production import check_redis

    assert check_redis(None) is None
    assert check_redis("") is None
    with pytest.raises(RuntimeError, match="tests/unit starts no process and opens no socket"):
        check_redis("redis://127.0.0.1:6379/0")


def test_a_redis_password_that_breaks_the_url_is_never_quoted():
    # redis-py's own error quoted what it took for the port: "Open", the password's first piece.
    from publisher.server.production import check_redis

    with pytest.raises(ServeError) as refused:
        check_redis("redis://:Open/Sesame@127.0.0.1:6379/0")
    assert str(refused.value) == (
        "REFLEX_REDIS_URL (redis://:***@127.0.0.1:6379/0): percent-encode / ? # [ ] and @ in the user and password "
        "(%2F %3F %23 %5B %5D %40)."
    )


def test_granian_still_reads_the_allocator_setting_publisher_serve_gives_its_workers():
    """publisher-serve sets jemalloc's background purge for Granian's workers (memory back after a
    flood of tabs); if Granian stops building with this jemalloc, the setting would do nothing."""
    import granian

    from publisher.server import production

    [binary] = Path(granian.__file__).parent.glob("_granian*.so")
    assert production.JEMALLOC_CONF_VAR.encode() in binary.read_bytes()
    assert "background_thread:true" in production.JEMALLOC_CONF
