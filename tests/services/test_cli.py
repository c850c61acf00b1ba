"""``publisher-gateway`` as a Unix tool: from any directory, data on stdout and messages on stderr, quiet
when its reader stops early, documented exit codes; only what a process alone shows runs the installed one."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy
import sqlmodel

from publisher import content
from publisher.storage import tables, visit_counts
from publisher.storage.tables import VisitCount
from tests.support import VENV_BIN, clear_of_midnight, publisher_gateway

# What Reflex says when it finds no alembic.ini in the working directory.
NOT_INITIALIZED = "Database is not initialized"


def elsewhere(tmp_path: Path, db_path_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``publisher-gateway ARGS`` run from ``tmp_path``, with no terminal on standard input."""
    command = started_elsewhere(tmp_path, db_path_url, *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    out, err = command.communicate(timeout=120)
    return subprocess.CompletedProcess(command.args, command.returncode, out.decode(), err.decode())


def in_process_elsewhere(tmp_path: Path, db_path_url: str, *args: str, env: dict[str, str] | None = None):
    """The same, run in this process (tests/gateway_command.py) in ``tmp_path``, without ALEMBIC_CONFIG."""
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


def subscriber_csv(path: Path, readers: int) -> Path:
    rows = "".join(f"reader{n}@readers.example,Reader {n},confirmed\n" for n in range(readers))
    path.write_text("email,name,status\n" + rows)
    return path


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
    migrated = elsewhere(tmp_path, db_path_url, "migrate")

    assert (migrated.returncode, migrated.stdout) == (0, ""), migrated.stderr
    assert "publisher-gateway: the database at " in migrated.stderr and "is up to date." in migrated.stderr
    assert NOT_INITIALIZED not in migrated.stderr
    again = in_process_elsewhere(tmp_path, db_path_url, "migrate")  # the committed head: nothing left to do
    assert again.returncode == 0 and NOT_INITIALIZED not in again.stderr
    listed = in_process_elsewhere(tmp_path, db_path_url, "subscribers")
    assert listed.stdout.splitlines() == ["email,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at"]


def test_announce_import_subscribers_and_forget_from_another_directory_keep_data_and_messages_apart(tmp_path, migrated):
    mail = {
        "PUBLISHER_GATEWAY_URL": "",
        "PUBLISHER_SMTP_URL": "smtp://127.0.0.1:9",  # never reached: nobody is on the list yet
        "PUBLISHER_MAIL_FROM": "books@animals.example",
        "PUBLISHER_NOTIFY_TO": "books@animals.example",
        "PUBLISHER_POSTAL_ADDRESS": "1 Printing Lane, Booktown",
        "PUBLISHER_LIST_SECRET": "s" * 32,
    }
    announced = in_process_elsewhere(tmp_path, migrated, "announce", content.BOOKS[0].slug, "--yes", env=mail)
    assert (announced.returncode, announced.stdout) == (1, ""), announced.stderr
    assert "Recipients: 0 confirmed readers" in announced.stderr and NOT_INITIALIZED not in announced.stderr
    assert "nothing to send, and nothing was recorded" in announced.stderr

    subscriber_csv(tmp_path / "list.csv", 2)

    imported = in_process_elsewhere(tmp_path, migrated, "import", "list.csv")  # a path relative to where it runs
    assert (imported.returncode, imported.stdout) == (0, "")
    assert imported.stderr == (
        "Imported list.csv: 2 added, 0 updated, 0 unchanged, 0 kept unsubscribed, 0 kept bounced. No email was sent.\n"
    )

    exported = in_process_elsewhere(tmp_path, migrated, "subscribers")
    assert (exported.returncode, exported.stderr) == (0, "")
    emails = [line.split(",")[0] for line in exported.stdout.splitlines()]
    assert emails == ["email", "reader0@readers.example", "reader1@readers.example"]

    forgotten = in_process_elsewhere(tmp_path, migrated, "forget", "reader0@readers.example")
    assert (forgotten.returncode, forgotten.stdout) == (0, "")
    assert forgotten.stderr.startswith("reader0@readers.example: ")
    listing = in_process_elsewhere(tmp_path, migrated, "messages")
    assert (listing.returncode, listing.stdout, listing.stderr) == (0, "No messages.\n", "")


def test_subscribers_into_a_reader_that_stops_after_one_line_ends_quietly(tmp_path, migrated):
    # About 120 KB, more than a pipe holds (64 KiB), so the command is still writing when its reader goes.
    publisher_gateway(migrated, "import", str(subscriber_csv(tmp_path / "list.csv", 1000)))
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

    refused = elsewhere(tmp_path, migrated, "import", "bad.csv")  # the installed command's status 1
    assert (refused.returncode, refused.stdout) == (1, "")
    assert "publisher-gateway: nothing imported from bad.csv." in refused.stderr
    usage = in_process_elsewhere(tmp_path, migrated, "subscribers", "--status", "maybe")
    assert (usage.returncode, usage.stdout) == (2, "") and "usage: publisher-gateway" in usage.stderr
    unreadable = in_process_elsewhere(tmp_path, migrated, "import", "missing.csv")
    assert (unreadable.returncode, unreadable.stdout) == (1, "") and "cannot read missing.csv" in unreadable.stderr
    unreachable = in_process_elsewhere(tmp_path, "postgresql+psycopg://reader:secret@127.0.0.1:9/none", "subscribers")
    assert (unreachable.returncode, unreachable.stdout) == (1, "") and "secret" not in unreachable.stderr
    unknown = in_process_elsewhere(
        tmp_path, migrated, "announce", "no-such-book", "--yes", env={"PUBLISHER_GATEWAY_URL": ""}
    )
    assert (unknown.returncode, unknown.stdout) == (2, "")
    for result in (usage, refused, unreadable, unreachable, unknown):
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
    engine = sqlalchemy.create_engine(migrated)
    with sqlmodel.Session(engine) as session:
        session.add_all(rows)
        session.commit()
    engine.dispose()
    for command in ("messages", "bounces", "outbox", "visits"):
        shown = publisher_gateway(migrated, command, env=EMBEDDED, check=False)
        assert shown.returncode == 0, shown.stderr
        assert not any(character in shown.stdout for character in "\x1b\x07\u202e"), command
        assert "\\x1b]0;owned\\x07\\x1b[2J\\u202e" in shown.stdout, command
    assert "one\ntwo" in publisher_gateway(migrated, "messages").stdout  # paragraphs stay


EMBEDDED = {"PUBLISHER_GATEWAY_URL": "", "PUBLISHER_VISITS": "on"}


def counted_week(db_url: str) -> None:
    """Counts as the site's workers flush them: today 3 visitors of Home and a book page, bots and two
    presses; yesterday 1 visitor; 8 days ago 1 more."""
    slug = content.BOOKS[0].slug
    today = tables.utc_now().date()
    yesterday, long_ago = today - timedelta(days=1), today - timedelta(days=8)
    counts = [  # day, kind, key, views, the visitors seen
        (today, "site", "", 12, range(3)),
        (today, "page", "/", 9, range(3)),
        (today, "page", f"/books/{slug}", 3, [0]),
        (today, "bot", "", 5, []),
        (today, "buy", f"{slug} www.amazon.com", 2, [0]),
        (yesterday, "site", "", 4, [9]),
        (long_ago, "site", "", 7, [8]),
    ]
    views = {(day, kind, key): n for day, kind, key, n, _ in counts}
    seen = {(day, kind, key, n.to_bytes(16, "big")) for day, kind, key, _, visitors in counts for n in visitors}
    visit_counts.flush(visit_counts.Batch(views=views, seen=seen), db_url=db_url)


def test_visits_prints_the_days_the_tops_bots_and_buy_presses_per_book(db_url):
    clear_of_midnight()  # the day it counts is the day it reads back
    counted_week(db_url)
    today = tables.utc_now().date()

    shown = publisher_gateway(db_url, "visits", "--days", "7", env=EMBEDDED, check=False)

    assert (shown.returncode, shown.stderr) == (0, ""), shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == (
        f"Visits from {today - timedelta(days=6)} to {today} (UTC days; today is still counting): "
        "4 visitors (each counted once a day), 16 page views."  # 8 days ago is outside the 7
    )
    assert f"  {today.isoformat()}         3        12" in lines
    assert sum(line.startswith(f"  {today.year}-") for line in lines) == 7  # every day, quiet ones too
    assert "         9         3  /" in lines
    assert "Bots (counted apart, never as visitors): 5 requests." in lines
    assert f"         2         1  {content.BOOKS[0].title} at www.amazon.com" in lines
    assert f"  {content.BOOKS[0].title}: 1 visitors (3 views); 2 presses" in lines  # /books/{slug}

    wider = publisher_gateway(db_url, "visits", "--days", "9", env=EMBEDDED, check=False)
    assert "5 visitors (each counted once a day), 23 page views." in wider.stdout
