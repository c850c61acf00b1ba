"""The operator's commands of the docs as a reader types them, read from the docs themselves.

Each ``sh`` block below is taken from its doc (tests/doc_commands.py) and its commands run one
after the other through the shell, exactly as written, in one reader's session: a folder of
their own with the project's venv as ``.venv``, the venv's commands on PATH, a SQLite database
(``REFLEX_DB_URL``) and the mail settings of a real SMTP server on 127.0.0.1; none of the
tests' own variables. tests/unit/test_documented_commands.py holds every command of the docs
to a test like this one, or to the doc's mark of an example.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.doc_commands import PROJECT_ROOT, block_under, run_by_make_test, without_comment
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import VENV_BIN, wait_until

DOCS = PROJECT_ROOT / "docs"
BOOK = "guinea-pig-or-hamster"
# Readers on the list the operator imports (old-list.csv), and the release's pace: a few seconds
# of sending, so the pause in the doc's block finds it sending.
READERS = 40
SEND_RATE = "2"
# The failure the `--lf` line of "Running one test fast" finds recorded: one quick unit test.
LAST_FAILED = "tests/unit/test_documented_commands.py::test_the_makefile_is_read_as_make_reads_it"


@pytest.fixture
def smtp_server():
    server = SmtpServer().start()
    yield server
    server.stop()


class Reader:
    """One reader's shell: their folder, their environment; runs a documented command as written."""

    def __init__(self, folder: Path, environment: dict[str, str]):
        self.folder = folder
        self.environment = environment

    def run(self, command: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
        """``command`` through bash; with ``answer``, standard input is a terminal that types it."""
        if answer is None:
            return subprocess.run(
                ["bash", "-c", command],
                cwd=self.folder,
                env=self.environment,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=180,
            )
        terminal, typed_into = pty.openpty()
        try:
            os.write(terminal, answer.encode() + b"\n")
            return subprocess.run(
                ["bash", "-c", command],
                cwd=self.folder,
                env=self.environment,
                stdin=typed_into,
                capture_output=True,
                text=True,
                timeout=180,
            )
        finally:
            os.close(terminal)
            os.close(typed_into)

    def start(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.folder,
            env=self.environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def readers_environment() -> dict[str, str]:
    """A reader's shell with the venv's commands on PATH, none of the site's (or the tests') variables."""
    theirs = {key: value for key, value in os.environ.items() if not key.startswith(("PUBLISHER_", "REFLEX_"))}
    return {**theirs, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def reader(tmp_path: Path, smtp_server: SmtpServer) -> Reader:
    folder = tmp_path / "operator"
    folder.mkdir()
    (folder / ".venv").symlink_to(VENV_BIN.parent)
    environment = {
        **readers_environment(),
        "REFLEX_DB_URL": f"sqlite:///{tmp_path / 'publisher.db'}",
        **smtp_server.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, PUBLISHER_SEND_RATE=SEND_RATE),
    }
    return Reader(folder, environment)


def succeeds(reader: Reader, command: str) -> subprocess.CompletedProcess[str]:
    result = reader.run(command)
    assert result.returncode == 0, f"`{command}` exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def test_the_operators_commands_in_deploying_mailing_list_and_dashboard_run_as_written(
    reader: Reader, smtp_server: SmtpServer
):
    # docs/deploying.md: the embedded gateway's commands, from the project's folder (.venv/bin/...).
    for command in block_under(DOCS / "deploying.md", "embedded local gateway").commands:
        succeeds(reader, command)
    assert (reader.folder / "subscribers.csv").read_text().startswith("email,name,book_updates,subscribed_at,status")
    assert (reader.folder / "visits.csv").read_text().startswith("section,day,key,views,visitors\nsite,")

    # docs/mailing-list.md: the list's commands; old-list.csv is the reader's list from elsewhere.
    rows = "".join(f"reader{n}@readers.example,Reader {n}\n" for n in range(READERS))
    (reader.folder / "old-list.csv").write_text("email,name\nreader@example.com,Forgotten Reader\n" + rows)
    for command in block_under(DOCS / "mailing-list.md", "operator's commands").commands:
        succeeds(reader, command)
    confirmed = succeeds(reader, "publisher-gateway subscribers --status confirmed").stdout
    assert confirmed.count("@readers.example") == READERS and "reader@example.com" not in confirmed

    # docs/mailing-list.md: a release announced: a test copy, the question (answered no), then sent, paused.
    announcing = block_under(DOCS / "mailing-list.md", "Announcing a release").commands
    test_copy, asked, sent, campaigns, pause = announcing
    succeeds(reader, test_copy)
    assert [received.rcpt_tos for received in smtp_server.received] == [["me@example.com"]]
    answered_no = reader.run(asked, answer="n")
    assert answered_no.returncode == 1, answered_no.stderr
    assert f"Send it to {READERS} readers? [y/N]" in answered_no.stdout + answered_no.stderr
    assert len(smtp_server.received) == 1
    sending = reader.start(sent)
    try:
        wait_until(lambda: len(smtp_server.received) > 1, 60, "the first release email")
        listing = succeeds(reader, campaigns).stdout
        assert BOOK in listing
        succeeds(reader, pause)
        _, said = sending.communicate(timeout=60)
    finally:
        if sending.poll() is None:
            sending.kill()
    assert sending.returncode == 1 and "paused" in said, said
    assert 1 < len(smtp_server.received) < READERS + 1  # paused while it sent

    # docs/mailing-list.md: what came back.
    for command in block_under(DOCS / "mailing-list.md", "Campaigns that protect the sender").commands:
        succeeds(reader, command)

    # docs/dashboard.md: an admin let in, listed, shut out.
    invited = succeeds(reader, block_under(DOCS / "dashboard.md", "Let someone in").commands[0])
    assert "/admin/enrol#" in invited.stdout
    listed, revoked = block_under(DOCS / "dashboard.md", "List and revoke").commands
    assert succeeds(reader, listed).stdout.splitlines()[1].startswith("Ada,")
    succeeds(reader, revoked)


def test_the_ways_to_run_one_unit_test_fast_run_as_written(tmp_path: Path):
    """Each command of the block as written, but `make test-unit`, which `make test` runs as its
    unit stage (scripts/test-stages.sh); the `--lf` line finds one failure recorded."""
    # A developer's shell in the project's folder (the commands name its files), none of the site's variables.
    developer = Reader(PROJECT_ROOT, readers_environment())
    commands = block_under(DOCS / "testing.md", "Running one test fast").commands
    assert any(run_by_make_test(command) for command in commands), commands  # the one left to `make test`
    last_failed = [command for command in commands if "--lf" in without_comment(command).split()]
    assert len(last_failed) == 1, commands
    for command in commands:
        if run_by_make_test(command) or command in last_failed:
            continue
        result = developer.run(command)
        assert result.returncode == 0, f"`{command}` exited {result.returncode}:\n{result.stdout[-3000:]}"
        assert " passed" in result.stdout
    assert ran_after_one_recorded_failure(developer, last_failed[0], tmp_path) == [LAST_FAILED]


def ran_after_one_recorded_failure(developer: Reader, command: str, tmp_path: Path) -> list[str]:
    """The tests ``command`` (pytest with ``--lf``) ran, by node id, given a pytest cache of its own
    in which LAST_FAILED is the one failure (chosen through PYTEST_ADDOPTS: the command's text as
    written). On the project's own cache it would run whatever failed there last, or the stage."""
    cache = tmp_path / "pytest-cache"
    (cache / "v" / "cache").mkdir(parents=True)
    (cache / "v" / "cache" / "lastfailed").write_text(json.dumps({LAST_FAILED: True}))
    report = tmp_path / "last-failed.xml"
    options = f"-o cache_dir={cache} --junitxml={report}"
    result = Reader(developer.folder, {**developer.environment, "PYTEST_ADDOPTS": options}).run(command)
    assert result.returncode == 0, f"`{command}` exited {result.returncode}:\n{result.stdout[-3000:]}"
    assert "rerun previous 1 failure" in result.stdout, result.stdout[-3000:]
    cases = ElementTree.parse(report).iter("testcase")  # classname tests.unit.test_x, name test_y
    return [f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}" for case in cases]
