"""The container as docs/deploying.md tells a reader of this machine to run it, each command run as
written in a reader's environment with the doc's own names (refused when one is taken already)."""

from __future__ import annotations

import subprocess

import httpx
import pytest

from tests.containers import engine_problem, podman
from tests.doc_commands import block_under
from tests.support import DOCS, PROJECT_ROOT, documented_port, port_taken, readers_environment, wait_until

NAME, VOLUME, PORT = "publisher", "publisher-data", 8000
SITE_UID = "10001"
COMMAND_TIMEOUT_S = 1800


def run_as_written(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=PROJECT_ROOT,
        env=readers_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )


def answers(path: str) -> httpx.Response | None:
    try:
        return httpx.get(f"http://127.0.0.1:{PORT}{path}", timeout=2)
    except httpx.HTTPError:
        return None


def wait_serving() -> None:
    def serving() -> bool:
        status = podman("inspect", "--format", "{{.State.Status}}", NAME).stdout.strip()
        if status not in ("running", "created", "configured"):
            logs = podman("logs", NAME, check=False)
            raise RuntimeError(f"the container {NAME} is {status}; logs:\n{logs.stdout}{logs.stderr}")
        response = answers("/ping")
        return response is not None and response.status_code == 200

    wait_until(serving, 120, f"the container {NAME} on 127.0.0.1:{PORT}", interval=0.2)


def the_form_secret() -> tuple[str, str]:
    """The secret the container made in its volume: (its mode and owner, its content)."""
    made = podman("exec", NAME, "stat", "--format", "%a %u", "/data/form-secret").stdout.strip()
    return made, podman("exec", NAME, "cat", "/data/form-secret").stdout


@pytest.fixture
def the_docs_names():
    with documented_port(PORT):
        problem = engine_problem()
        if problem:
            pytest.fail(problem, pytrace=False)
        taken = (
            [f"a container named {NAME}"] if podman("container", "exists", NAME, check=False).returncode == 0 else []
        )
        if podman("volume", "exists", VOLUME, check=False).returncode == 0:
            taken.append(f"a volume named {VOLUME}")
        if port_taken(PORT):
            taken.append(f"port {PORT} of 127.0.0.1 (something listens there)")
        if taken:
            pytest.fail(
                f"The documented commands use names that are taken here: {', '.join(taken)}. Remove them (scripts/"
                f"podman rm -f {NAME}; scripts/podman volume rm {VOLUME}) or stop what listens, then run again.",
                pytrace=False,
            )
        yield
        logs = podman("logs", NAME, check=False)
        print(logs.stdout + logs.stderr)
        podman("rm", "--force", "--time", "0", NAME, check=False)
        podman("volume", "rm", "--force", VOLUME, check=False)


def test_the_documented_container_commands_run_as_written_and_keep_the_secret_they_made(the_docs_names):
    block = block_under(DOCS / "deploying.md", "On this development machine")
    run = next(command for command in block.commands if " run " in command)
    assert "-v publisher-data:/data" in run and "SECRET" not in " ".join(block.commands), block.commands

    for command in block.commands:
        if "healthcheck" in command:
            wait_serving()
            page = answers("/contact-us")
            assert page is not None and page.status_code == 200 and 'name="token"' in page.text
            made = the_form_secret()
        result = run_as_written(command)
        assert result.returncode == 0, f"`{command}` failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        if "healthcheck" in command:
            assert result.stdout.strip().splitlines()[-1] == "healthy"

    mode_and_owner, secret = made
    assert mode_and_owner == f"600 {SITE_UID}"
    assert len(secret.strip()) >= 32
    logged = podman("logs", NAME)
    said = logged.stdout + logged.stderr
    assert "PUBLISHER_FORM_SECRET is not given: the site signs with the one it made in /data/form-secret" in said
    assert "PUBLISHER_FORM_SECRET is not set" not in said

    podman("rm", "--force", "--time", "10", NAME)
    result = run_as_written(run)
    assert result.returncode == 0, result.stderr
    wait_serving()
    assert the_form_secret() == made
