"""The operator's commands of the docs run as written in a reader's folder and environment (SQLite,
a real SMTP server); most by the program's ``main`` in this process (tests/gateway_command.py)."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_commands import block_under, run_by_make_test
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import DOCS, PROJECT_ROOT, VENV_BIN, publisher_gateway, readers_environment, wait_until

BOOK = "guinea-pig-or-hamster"
# The release's pace: a few seconds of sending, so the doc's pause finds it sending.
READERS = 40
SEND_RATE = "2"
# Commands whose output is only a message of what they did: on standard error, none on standard output.
SAY_WHAT_THEY_DID = ("migrate", "import", "forget", "pause")
LAST_FAILED = "tests/unit/test_documented_commands.py::test_the_check_sees_what_it_checks"


class Reader:
    def __init__(self, folder: Path, environment: dict[str, str]):
        self.folder = folder
        self.environment = environment

    def run(self, command: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
        """``command`` through bash; with ``answer``, standard input is a terminal that types it."""
        terminal, typed_into = pty.openpty()
        try:
            os.write(terminal, (answer or "").encode() + b"\n")
            return subprocess.run(
                ["bash", "-c", command],
                cwd=self.folder,
                env=self.environment,
                stdin=typed_into if answer is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=180,
            )
        finally:
            os.close(terminal)
            os.close(typed_into)

    def run_in_process(self, command: str) -> subprocess.CompletedProcess[str]:
        """``[.venv/bin/]publisher-gateway ARGS [> FILE]`` run by its ``main`` in this process."""
        words = shlex.split(command, comments=True)
        target = None
        if words[-2:-1] == [">"]:
            words, target = words[:-2], words[-1]
        assert Path(words[0]).name == "publisher-gateway" and not {">", "<", "|", ";", "&&"} & set(words), command
        unset = {name: None for name in os.environ if name not in self.environment}
        environment = {**unset, **self.environment}
        done = publisher_gateway(
            environment["REFLEX_DB_URL"], *words[1:], check=False, env=environment, cwd=self.folder
        )
        if target is not None:
            (self.folder / target).write_text(done.stdout)
            done.stdout = ""
        return done

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


@pytest.fixture
def reader(tmp_path: Path, smtp_server: SmtpServer) -> Reader:
    folder = tmp_path / "operator"
    folder.mkdir()
    (folder / ".venv").symlink_to(VENV_BIN.parent)
    environment = {
        **readers_environment(),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "REFLEX_DB_URL": f"sqlite:///{tmp_path / 'publisher.db'}",
        **smtp_server.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, PUBLISHER_SEND_RATE=SEND_RATE),
    }
    return Reader(folder, environment)


def succeeds(reader: Reader, command: str, installed: bool = False) -> subprocess.CompletedProcess[str]:
    result = reader.run(command) if installed else reader.run_in_process(command)
    assert result.returncode == 0, f"`{command}` exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    if shlex.split(command, comments=True)[1] in SAY_WHAT_THEY_DID:
        assert (result.stdout, result.stderr.endswith("\n")) == ("", True), command
    return result


def test_the_operators_commands_in_deploying_mailing_list_and_dashboard_run_as_written(
    reader: Reader, smtp_server: SmtpServer
):
    first, *rest = block_under(DOCS / "deploying.md", "embedded local gateway").commands
    succeeds(reader, first, installed=True)
    said = [succeeds(reader, command) for command in rest]
    assert said[1].stderr.startswith("Imported subscribers.csv: 0 added, 0 updated, 0 unchanged,"), said[1].stderr
    assert said[3].stdout == "No messages.\n"  # data on standard output
    assert (reader.folder / "subscribers.csv").read_text().startswith("email,name,book_updates,subscribed_at,status")
    assert (reader.folder / "visits.csv").read_text().startswith("section,day,key,views,visitors\nsite,")

    rows = "".join(f"reader{n}@readers.example,Reader {n}\n" for n in range(READERS))
    (reader.folder / "old-list.csv").write_text("email,name\nreader@example.com,Forgotten Reader\n" + rows)
    first, *rest = block_under(DOCS / "mailing-list.md", "operator's commands").commands
    succeeds(reader, first, installed=True)
    assert (reader.folder / "list.csv").read_text().startswith("email,name,book_updates,subscribed_at,status")
    for command in rest:
        succeeds(reader, command)
    confirmed = succeeds(reader, "publisher-gateway subscribers --status confirmed").stdout
    assert confirmed.count("@readers.example") == READERS and "reader@example.com" not in confirmed

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

    for command in block_under(DOCS / "mailing-list.md", "Campaigns that protect the sender").commands:
        succeeds(reader, command)

    invited = succeeds(reader, block_under(DOCS / "dashboard.md", "Let someone in").commands[0])
    assert "/admin/enrol#" in invited.stdout
    listed, revoked = block_under(DOCS / "dashboard.md", "List and revoke").commands
    assert succeeds(reader, listed).stdout.splitlines()[1].startswith("Ada,")
    succeeds(reader, revoked)


def test_the_ways_to_run_one_unit_test_fast_run_as_written(tmp_path: Path, monkeypatch):
    commands = block_under(DOCS / "testing.md", "Running one test fast").commands
    assert any(run_by_make_test(command) for command in commands), commands  # the one left to `make test`
    module, one_test, by_name, last_failed = (command for command in commands if not run_by_make_test(command))

    named = pytest_words(module)[0]
    assert {test.split("::")[0] for test in passed_in_process(module, tmp_path / "module", monkeypatch)} == {named}
    assert passed_in_process(one_test, tmp_path / "one", monkeypatch) == pytest_words(one_test)[:1]
    words = pytest_words(by_name)
    name = words[words.index("-k") + 1]
    picked = passed_in_process(by_name, tmp_path / "by-name", monkeypatch)
    assert picked and all(name in test.split("::")[1] for test in picked), picked

    assert "--lf" in pytest_words(last_failed), last_failed
    cache = tmp_path / "last-failed"
    (cache / "v" / "cache").mkdir(parents=True)
    (cache / "v" / "cache" / "lastfailed").write_text(json.dumps({LAST_FAILED: True}))
    assert passed_in_process(last_failed, cache, monkeypatch) == [LAST_FAILED]


def pytest_words(command: str) -> list[str]:
    """The ARGS of a documented ``.venv/bin/python -m pytest ARGS``, whose interpreter is this one."""
    words = shlex.split(command, comments=True)
    assert words[:3] == [".venv/bin/python", "-m", "pytest"], command
    assert os.path.samefile(PROJECT_ROOT / words[0], sys.executable), command
    return words[3:]


class Passed(list[str]):
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.append(report.nodeid)


def passed_in_process(command: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tests a documented pytest command passes, run as pytest.main(ARGS) in this process, with
    the cache ``cache`` and none of the site's variables; every one must pass."""
    passed = Passed()
    with monkeypatch.context() as patch:
        patch.chdir(PROJECT_ROOT)
        for name in [name for name in os.environ if name.startswith(("PUBLISHER_", "REFLEX_"))]:
            patch.delenv(name)
        patch.setenv("PYTEST_ADDOPTS", f"-o cache_dir={cache}")
        status = pytest.main(pytest_words(command), plugins=[passed])
    assert status == pytest.ExitCode.OK, f"`{command}` exited {status}"
    return passed
