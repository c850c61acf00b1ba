"""publisher-serve's start-up checks, without starting it (as a process: tests/services/test_production.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from publisher.config import settings
from publisher.server import production
from publisher.server.production import ServeError, check_redis


def fake_build(root: Path, manifest: bool = True) -> None:
    """A page, and which pages start the app."""
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


@pytest.mark.parametrize(
    ("environ", "address"), [({}, ("127.0.0.1", 8000)), ({"HOST": "0.0.0.0", "PORT": "9000"}, ("0.0.0.0", 9000))]
)
def test_it_binds_locally_on_8000_unless_host_and_port_say_otherwise(environ, address):
    values = settings.from_environ(environ)
    assert (values.host, values.port) == address


def test_no_redis_configured_is_fine():
    """Start-up goes on without looking for a Redis (tests/unit refuses any connection: a look would raise)."""
    assert check_redis(None) is None
    assert check_redis("") is None
    with pytest.raises(RuntimeError, match="tests/unit starts no process and opens no socket"):
        check_redis("redis://127.0.0.1:6379/0")


def test_a_redis_password_that_breaks_the_url_is_never_quoted():
    with pytest.raises(ServeError) as refused:
        check_redis("redis://:Open/Sesame@127.0.0.1:6379/0")
    assert str(refused.value) == (
        "REFLEX_REDIS_URL (redis://:***@127.0.0.1:6379/0): percent-encode / ? # [ ] and @ in the user and password "
        "(%2F %3F %23 %5B %5D %40)."
    )


def test_granian_still_reads_the_allocator_setting_publisher_serve_gives_its_workers():
    import granian

    [binary] = Path(granian.__file__).parent.glob("_granian*.so")
    assert production.JEMALLOC_CONF_VAR.encode() in binary.read_bytes()
    assert "background_thread:true" in production.JEMALLOC_CONF
