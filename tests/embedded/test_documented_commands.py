"""`make serve` as docs/deploying.md tells a reader to type it: one process, one port, the
embedded gateway, http://127.0.0.1:8000.

The block is read from the doc and run through the shell from the project's root, as
written, in a reader's environment: none of the site's variables but their public address
(the one this suite's build is for, so `make build` finds that build up to date) and a database
of their own. No form secret given: `make serve` makes the checkout's own (`.form-secret`).
Port 8000 is the doc's: the test refuses to start when something listens there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.doc_commands import PROJECT_ROOT, block_under
from tests.support import TEST_SITE_URL, log_excerpt, wait_until

DOCS = PROJECT_ROOT / "docs"
PORT = 8000
# A build of the whole site on a loaded machine, then the server's start.
BUILD_AND_START_S = 900


def port_taken(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_make_serve_runs_as_written_and_serves_both_form_pages_on_port_8000(tmp_path: Path):
    (command,) = block_under(DOCS / "deploying.md", "One process, one port").commands
    if port_taken(PORT):
        pytest.fail(f"`{command}` serves on 127.0.0.1:{PORT}, where something listens already: stop it", pytrace=False)
    theirs = {key: value for key, value in os.environ.items() if not key.startswith(("PUBLISHER_", "REFLEX_"))}
    environment = {**theirs, "REFLEX_DEPLOY_URL": TEST_SITE_URL, "REFLEX_DB_URL": f"sqlite:///{tmp_path / 'site.db'}"}
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
    with pytest.raises(httpx.ConnectError):  # what answered was that server, gone with it
        httpx.get(f"http://127.0.0.1:{PORT}/ping", timeout=2)
    said = log_path.read_text()
    # `make build` ran, and found the suite's build (for this address, of these files) up to date.
    assert "scripts/build.py" in said and "The build in .web/build/client is up to date" in said
    assert "PUBLISHER_FORM_SECRET is not set" not in said
    assert (PROJECT_ROOT / ".form-secret").stat().st_mode & 0o777 == 0o600
