"""``publisher-gateway`` as a Unix tool: from any directory, data on stdout and messages on stderr, quiet
when its reader stops early, documented exit codes; only what a process alone shows runs the installed one."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import sqlmodel

from publisher.content import books
from publisher.storage import tables
from publisher.storage.tables import VisitCount
from tests.support import VENV_BIN, publisher_gateway

# What Reflex says when it finds no alembic.ini in the working directory.
NOT_INITIALIZED = "Database is not initialized"


def in_process_elsewhere(tmp_path: Path, db_path_url: str, *args: str, env: dict[str, str] | None = None):
    """``publisher-gateway ARGS`` in this process (tests/gateway_command.py) in ``tmp_path``, no ALEMBIC_CONFIG."""
    return publisher_gateway(db_path_url, *args, check=False, cwd=tmp_path, env={"ALEMBIC_CONFIG": None, **(env or {})})


def started_elsewhere(tmp_path: Path, db_path_url: str, *args: str, **pipes) -> subprocess.Popen:
    environment = {key: value for key, value in os.environ.items() if key != "ALEMBIC_CONFIG"}
    return subprocess.Popen(
        [str(VENV_BIN / "publisher-gateway"), *args],
        cwd=tmp_path,
        env={**environment, "REFLEX_DB_URL": db_path_url},
        stderr=subprocess.PIPE,
        **pipes,
    )


MAIL = {
    "PUBLISHER_GATEWAY_URL": "",
    "PUBLISHER_SMTP_URL": "smtp://127.0.0.1:9",  # never reached: nobody is on the list yet
    "PUBLISHER_MAIL_FROM": "books@animals.example",
    "PUBLISHER_NOTIFY_TO": "books@animals.example",
    "PUBLISHER_POSTAL_ADDRESS": "1 Printing Lane, Booktown",
    "PUBLISHER_LIST_SECRET": "s" * 32,
}
EMBEDDED = {"PUBLISHER_GATEWAY_URL": "", "PUBLISHER_VISITS": "on"}


@pytest.fixture
def db_path_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'elsewhere' / 'publisher.db'}"


@pytest.fixture
def migrated(tmp_path: Path, db_path_url: str) -> str:
    """A database migrated the way that has always worked, from the project directory."""
    (tmp_path / "elsewhere").mkdir()
    publisher_gateway(db_path_url, "migrate")
    return db_path_url


def test_migrate_from_another_directory_creates_the_tables_and_says_so_on_stderr(tmp_path, db_path_url):
    (tmp_path / "elsewhere").mkdir()
    migrating = started_elsewhere(tmp_path, db_path_url, "migrate", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    out, err = (stream.decode() for stream in migrating.communicate(timeout=120))

    assert (migrating.returncode, out) == (0, ""), err
    assert "publisher-gateway: the database at " in err and "is up to date." in err and NOT_INITIALIZED not in err
    again = in_process_elsewhere(tmp_path, db_path_url, "migrate")  # the committed head: nothing left to do
    assert again.returncode == 0 and NOT_INITIALIZED not in again.stderr
    listed = in_process_elsewhere(tmp_path, db_path_url, "subscribers")
    assert listed.stdout.splitlines() == ["email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"]


def test_subscribers_into_a_reader_that_stops_after_one_line_ends_quietly(tmp_path, migrated):
    # About 120 KB, more than a pipe holds (64 KiB), so the command is still writing when its reader goes.
    rows = "".join(f"reader{n}@readers.example,Reader {n},confirmed\n" for n in range(1000))
    (tmp_path / "list.csv").write_text("email,name,status\n" + rows)
    publisher_gateway(migrated, "import", str(tmp_path / "list.csv"))
    command = started_elsewhere(tmp_path, migrated, "subscribers", stdout=subprocess.PIPE)

    header = command.stdout.readline()  # `publisher-gateway subscribers | head -1`
    command.stdout.close()
    stderr = command.stderr.read().decode()
    command.wait(timeout=60)

    assert header.startswith(b"email,name,")
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert (command.returncode, stderr) == (141, "")


def _reading_its_file(pid: int) -> bool:
    """Whether the process has opened its FILE argument (its stdin, a pipe); its descriptors come and go
    while it imports, so one gone is no error (issue 34: a FileNotFoundError failed the stage)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        stdin = os.readlink(fds / "0")
        listed = [fd for fd in fds.iterdir() if int(fd.name) > 2]
    except FileNotFoundError:  # the process is gone: the caller's poll() says so
        return False
    for fd in listed:
        try:
            if os.readlink(fd) == stdin:
                return True
        except FileNotFoundError:
            continue
    return False


def _as_from_a_terminal() -> None:
    """Ctrl-C's default disposition, as a terminal's shell gives it: a suite started in the background
    passes SIGINT on as ignored, and the command would read its input forever."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupted_it_exits_130_without_a_traceback(tmp_path, db_path_url):
    command = started_elsewhere(
        tmp_path, db_path_url, "import", "/dev/stdin", stdin=subprocess.PIPE, preexec_fn=_as_from_a_terminal
    )
    deadline = time.monotonic() + 60
    while not _reading_its_file(command.pid):  # blocked reading a file nobody finishes writing
        assert time.monotonic() < deadline and command.poll() is None, command.stderr.read()
        time.sleep(0.05)

    command.send_signal(signal.SIGINT)  # Ctrl-C
    try:
        command.wait(timeout=60)  # its standard input stays open: only the signal can end it
    except subprocess.TimeoutExpired:
        command.kill()
        raise AssertionError("the command went on reading after Ctrl-C") from None
    finally:
        command.stdin.close()
    stderr = command.stderr.read().decode()

    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert command.returncode == 130


def test_help_from_another_directory_documents_the_streams_and_every_exit_status(tmp_path, db_path_url):
    helped = in_process_elsewhere(tmp_path, db_path_url, "--help")

    assert (helped.returncode, helped.stderr) == (0, "")
    assert "exit status:" in helped.stdout
    for status in ("0", "1", "2", "130", "141"):
        assert any(line.split()[:1] == [status] for line in helped.stdout.splitlines()), status
    assert "standard output" in helped.stdout and "standard error" in helped.stdout
    commands = ["migrate", "import", "subscribers", "forget", "messages", "outbox", "announce", "campaigns", "visits"]
    for command in commands:
        sub = publisher_gateway(db_path_url, command, "--help")  # each subcommand's, in-process: the same parser
        assert (sub.returncode, sub.stderr) == (0, ""), command
        assert sub.stdout.startswith(f"usage: publisher-gateway {command}"), command


def test_exit_status_1_when_the_command_fails_and_2_when_it_cannot_run_as_asked(tmp_path, migrated):
    (tmp_path / "bad.csv").write_text("email,name,status\nnot-an-address,Nobody,confirmed\n")

    refused = in_process_elsewhere(tmp_path, migrated, "import", "bad.csv")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert "publisher-gateway: nothing imported from bad.csv." in refused.stderr
    usage = in_process_elsewhere(tmp_path, migrated, "subscribers", "--status", "maybe")
    assert (usage.returncode, usage.stdout) == (2, "") and "usage: publisher-gateway" in usage.stderr
    unreadable = in_process_elsewhere(tmp_path, migrated, "import", "missing.csv")
    assert (unreadable.returncode, unreadable.stdout) == (1, "") and "cannot read missing.csv" in unreadable.stderr
    unreachable = in_process_elsewhere(tmp_path, "postgresql+psycopg://reader:secret@127.0.0.1:9/none", "subscribers")
    assert (unreachable.returncode, unreachable.stdout) == (1, "") and "secret" not in unreachable.stderr
    unknown = in_process_elsewhere(tmp_path, migrated, "announce", "no-such-book", "--yes", env=EMBEDDED)
    assert (unknown.returncode, unknown.stdout) == (2, "")
    nobody = in_process_elsewhere(tmp_path, migrated, "announce", books.BOOKS[0].slug, "--yes", env=MAIL)
    assert (nobody.returncode, nobody.stdout) == (1, "") and "Recipients: 0 confirmed readers" in nobody.stderr
    assert "Nobody has confirmed a subscription yet: nothing to send, and nothing was recorded." in nobody.stderr
    for result in (usage, refused, unreadable, unreachable, unknown, nobody):
        assert NOT_INITIALIZED not in result.stderr and "Traceback" not in result.stderr


ESCAPE = "\x1b]0;owned\x07\x1b[2J\u202e"


def test_stored_text_with_terminal_escapes_is_printed_escaped_by_every_listing(migrated):
    """Issue 34: `bounces` printed a stored From: as it was, and the terminal ran its escape sequence."""
    rows = [
        tables.ContactMessage(
            sender_name=f"Eve{ESCAPE}", sender_email="e@example.org", subject=f"Hi{ESCAPE}", message=f"one\ntwo{ESCAPE}"
        ),
        tables.Bounce(
            subscriber_id=1, email="reader@example.org", kind="hard", reason=f"550{ESCAPE}", source="webhook"
        ),
        tables.MailboxMessage(
            folder="INBOX",
            uidvalidity=1,
            uid=1,
            outcome="unclassified",
            subject=f"S{ESCAPE}",
            sender=f"x{ESCAPE}@b.org",
        ),
        tables.Delivery(
            kind=tables.CONTACT,
            source_id=1,
            message_id="<m@example.org>",
            status=tables.FAILED,
            give_up_at=tables.utc_now(),
            last_error=f"554{ESCAPE}",
        ),
        # a source or a campaign is what a Referer or a landing URL said
        VisitCount(kind="source", day=tables.utc_now().date(), key=f"evil.example{ESCAPE}", views=1, visitors=1),
    ]
    with sqlmodel.Session(tables.engine(migrated)) as session:
        session.add_all(rows)
        session.commit()
    for command in ("messages", "bounces", "outbox", "visits"):
        shown = publisher_gateway(migrated, command, env=EMBEDDED, check=False)
        assert shown.returncode == 0, shown.stderr
        assert not any(character in shown.stdout for character in "\x1b\x07\u202e"), command
        assert "\\x1b]0;owned\\x07\\x1b[2J\\u202e" in shown.stdout, command
    assert "one\ntwo" in publisher_gateway(migrated, "messages").stdout  # paragraphs stay
