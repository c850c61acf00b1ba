"""`make serve` as docs/deploying.md tells a reader to type it, in a reader's environment (but the
suite's site address, so its build is up to date): one process, the embedded gateway, port 8000."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.doc_commands import block_under
from tests.support import (
    DOCS,
    PROJECT_ROOT,
    TEST_SITE_URL,
    documented_port,
    log_excerpt,
    port_taken,
    readers_environment,
    wait_until,
)

PORT = 8000
BUILD_AND_START_S = 900


@pytest.fixture
def the_documented_port():
    with documented_port(PORT):
        yield


def test_make_serve_runs_as_written_and_serves_both_form_pages_on_port_8000(tmp_path: Path, the_documented_port):
    (command,) = block_under(DOCS / "deploying.md", "One process, one port").commands
    if port_taken(PORT):
        pytest.fail(f"`{command}` serves on 127.0.0.1:{PORT}, where something listens already: stop it", pytrace=False)
    environment = {
        **readers_environment(),
        "REFLEX_DEPLOY_URL": TEST_SITE_URL,
        "REFLEX_DB_URL": f"sqlite:///{tmp_path / 'site.db'}",
    }
    log_path = tmp_path / "make-serve.log"
    serving = subprocess.Popen(
        ["bash", "-c", command],
        cwd=PROJECT_ROOT,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def answers() -> bool:
        if serving.poll() is not None:
            raise RuntimeError(f"`{command}` exited {serving.returncode}:\n{log_excerpt(log_path.read_text())}")
        try:
            return httpx.get(f"http://127.0.0.1:{PORT}/ping", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, BUILD_AND_START_S, f"`{command}` on 127.0.0.1:{PORT}", interval=0.5)
        for path in ("/subscribe", "/contact-us"):
            page = httpx.get(f"http://127.0.0.1:{PORT}{path}", timeout=10)
            assert page.status_code == 200, path
        assert 'name="token"' in httpx.get(f"http://127.0.0.1:{PORT}/contact-us", timeout=10).text
    finally:
        if serving.poll() is None:
            os.killpg(serving.pid, signal.SIGTERM)
            serving.wait(timeout=60)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{PORT}/ping", timeout=2)
    said = log_path.read_text()
    assert "scripts/build.py" in said and "The build in .web/build/client is up to date" in said
    assert "PUBLISHER_FORM_SECRET is not set" not in said
    assert (PROJECT_ROOT / ".form-secret").stat().st_mode & 0o777 == 0o600
