"""``publisher-gateway`` as a Unix tool: run from any directory (a cron job, a shell in $HOME), data on
standard output and messages on standard error, quiet when its reader stops early, documented exit codes.

What only the program itself shows (an exit status, pipes, Ctrl-C, a start with no alembic.ini
where it runs) is checked on the installed command, run from a directory that is not
the project's (``cwd=tmp_path``), on a SQLite database of its own. The rest runs the command in the
test process (tests/support.publisher_gateway), from that directory where it matters.
"""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy

from publisher import content
from publisher.storage import tables, visit_counts
from publisher.storage.tables import VisitCount
from tests.support import VENV_BIN, clear_of_midnight, publisher_gateway

# What Reflex says when it finds no alembic.ini in the working directory.
NOT_INITIALIZED = "Database is not initialized"


def elsewhere(tmp_path: Path, db_path_url: str, *args: str, env: dict[str, str] | None = None, **options):
    """``publisher-gateway ARGS`` run from ``tmp_path``, with no terminal on standard input."""
    environment = {key: value for key, value in os.environ.items() if key != "ALEMBIC_CONFIG"}
    return subprocess.run(
        [str(VENV_BIN / "publisher-gateway"), *args],
        cwd=tmp_path,
        env={**environment, **(env or {}), "REFLEX_DB_URL": db_path_url},
        stdin=options.pop("stdin", subprocess.DEVNULL),
        capture_output=True,
        text=True,
        timeout=120,
        **options,
    )


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


# --- From any directory -------------------------------------------------------------------


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


def test_import_subscribers_and_forget_from_another_directory_keep_data_and_messages_apart(tmp_path, migrated):
    subscriber_csv(tmp_path / "list.csv", 2)

    imported = in_process_elsewhere(tmp_path, migrated, "import", "list.csv")  # a path relative to where it runs
    assert (imported.returncode, imported.stdout) == (0, "")
    assert imported.stderr == (
        "Imported list.csv: 2 added, 0 updated, 0 unchanged, 0 kept unsubscribed, 0 kept bounced. No email was sent.\n"
    )

    exported = in_process_elsewhere(tmp_path, migrated, "subscribers")
    assert (exported.returncode, exported.stderr) == (0, "")
    assert [line.split(",")[0] for line in exported.stdout.splitlines()] == [
        "email",
        "reader0@readers.example",
        "reader1@readers.example",
    ]

    forgotten = in_process_elsewhere(tmp_path, migrated, "forget", "reader0@readers.example")
    assert (forgotten.returncode, forgotten.stdout) == (0, "")
    assert forgotten.stderr.startswith("reader0@readers.example: ")
    listing = in_process_elsewhere(tmp_path, migrated, "messages")
    assert (listing.returncode, listing.stdout, listing.stderr) == (0, "No messages.\n", "")


def test_announce_from_another_directory_asks_on_stderr_and_writes_nothing_to_stdout(tmp_path, migrated):
    mail = {
        "PUBLISHER_GATEWAY_URL": "",
        "PUBLISHER_SMTP_URL": "smtp://127.0.0.1:9",  # never reached: nobody is on the list
        "PUBLISHER_MAIL_FROM": "books@animals.example",
        "PUBLISHER_NOTIFY_TO": "books@animals.example",
        "PUBLISHER_POSTAL_ADDRESS": "1 Printing Lane, Booktown",
        "PUBLISHER_LIST_SECRET": "s" * 32,
    }
    announced = in_process_elsewhere(tmp_path, migrated, "announce", content.BOOKS[0].slug, "--yes", env=mail)

    assert (announced.returncode, announced.stdout) == (1, ""), announced.stderr
    assert "Recipients: 0 confirmed readers" in announced.stderr
    assert "nothing to send, and nothing was recorded" in announced.stderr
    assert NOT_INITIALIZED not in announced.stderr


# --- Pipes and signals ----------------------------------------------------------------------


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
    """Whether the process has opened its FILE argument (here its standard input, a pipe).

    Its descriptors come and go while it starts (Python opens and closes files as it imports):
    one listed but closed before it is read is not the one sought, and no error (issue 34:
    a FileNotFoundError here failed the services stage on a loaded machine).
    """
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
    """In the child: Ctrl-C's default disposition, as a shell at a terminal gives its commands.
    A test suite started in the background (``make test &``, nohup, some CI runners) passes
    SIGINT on as ignored, and Python then never raises KeyboardInterrupt: the command would
    read its input forever and the test would hang."""
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


# --- Exit codes -----------------------------------------------------------------------------


def test_help_from_another_directory_documents_the_streams_and_every_exit_status(tmp_path, db_path_url):
    helped = in_process_elsewhere(tmp_path, db_path_url, "--help")

    assert (helped.returncode, helped.stderr) == (0, "")
    assert "exit status:" in helped.stdout
    for status in ("0", "1", "2", "130", "141"):
        assert any(line.split()[:1] == [status] for line in helped.stdout.splitlines()), status
    assert "standard output" in helped.stdout and "standard error" in helped.stdout
    for command in (
        "migrate",
        "import",
        "subscribers",
        "forget",
        "messages",
        "outbox",
        "announce",
        "campaigns",
        "visits",
    ):
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


# --- Stored text reaches a terminal as text -------------------------------------------------

ESCAPE = "\x1b]0;owned\x07\x1b[2J\u202e"


def test_stored_text_with_terminal_escapes_is_printed_escaped_by_every_listing(migrated):
    """Issue 34: `bounces` printed a stored From: as it was, and the operator's terminal ran the
    escape sequence in it. Rows written by an older version, or by hand, hold anything."""
    engine = sqlalchemy.create_engine(migrated)
    now = tables.utc_now()
    with engine.begin() as connection:
        connection.execute(
            sqlalchemy.insert(tables.ContactMessage).values(
                sender_name=f"Eve{ESCAPE}",
                sender_email="eve@example.org",
                subject=f"Hi{ESCAPE}",
                message=f"line one\nline two{ESCAPE}",
                received_at=now,
            )
        )
        connection.execute(
            sqlalchemy.insert(tables.Bounce).values(
                at=now,
                subscriber_id=1,
                email="reader@example.org",
                kind="hard",
                reason=f"550{ESCAPE}",
                source="webhook",
            )
        )
        connection.execute(
            sqlalchemy.insert(tables.MailboxMessage).values(
                folder="INBOX",
                uidvalidity=1,
                uid=1,
                outcome="unclassified",
                subject=f"S{ESCAPE}",
                sender=f"x{ESCAPE}@example.org",
                note="",
                seen_at=now,
                last_seen_at=now,
            )
        )
        connection.execute(
            sqlalchemy.insert(tables.Delivery).values(
                kind=tables.CONTACT,
                source_id=1,
                message_id="<m@example.org>",
                status=tables.FAILED,
                attempts=3,
                created_at=now,
                next_attempt_at=now,
                give_up_at=now,
                last_error=f"554{ESCAPE}",
            )
        )
        connection.execute(  # a source or a campaign is what a Referer or a landing URL said
            sqlalchemy.insert(VisitCount).values(
                kind="source", day=now.date(), key=f"evil.example{ESCAPE}", views=1, visitors=1
            )
        )
    engine.dispose()
    for command in ("messages", "bounces", "outbox", "visits"):
        shown = publisher_gateway(migrated, command, env=EMBEDDED, check=False)
        assert shown.returncode == 0, shown.stderr
        assert not any(character in shown.stdout for character in "\x1b\x07\u202e"), command
        assert "\\x1b]0;owned\\x07\\x1b[2J\\u202e" in shown.stdout, command
    assert "line one\nline two" in publisher_gateway(migrated, "messages").stdout  # paragraphs stay


# --- Visits ---------------------------------------------------------------------------------

EMBEDDED = {"PUBLISHER_GATEWAY_URL": "", "PUBLISHER_VISITS": "on"}


def _visitor(n: int) -> bytes:
    return n.to_bytes(16, "big")


def counted_week(db_url: str) -> str:
    """Counts as the site's workers flush them: today 3 visitors of Home and a book page, a source,
    a campaign, bots and two presses; yesterday 1 visitor; 8 days ago 1 more. The book's slug."""
    slug = content.BOOKS[0].slug
    today = tables.utc_now().date()
    yesterday, long_ago = today - timedelta(days=1), today - timedelta(days=8)
    views = {
        (today, "site", ""): 12,
        (today, "page", "/"): 9,
        (today, "page", f"/books/{slug}"): 3,
        (today, "source", "Instagram"): 2,
        (today, "campaign", "newsletter / email / launch"): 1,
        (today, "bot", ""): 5,
        (today, "buy", f"{slug} www.amazon.com"): 2,
        (yesterday, "site", ""): 4,
        (long_ago, "site", ""): 7,
    }
    seen = {(today, "site", "", _visitor(n)) for n in range(3)}
    seen |= {(today, "page", "/", _visitor(n)) for n in range(3)}
    seen |= {(today, "page", f"/books/{slug}", _visitor(0)), (today, "source", "Instagram", _visitor(1))}
    seen |= {(today, "campaign", "newsletter / email / launch", _visitor(1))}
    seen |= {(today, "buy", f"{slug} www.amazon.com", _visitor(0))}
    seen |= {(yesterday, "site", "", _visitor(9)), (long_ago, "site", "", _visitor(8))}
    visit_counts.flush(visit_counts.Batch(views=views, seen=seen), db_url=db_url)
    return slug


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
    assert "         2         1  Instagram" in lines
    assert "         1         1  newsletter / email / launch" in lines
    assert "Bots (counted apart, never as visitors): 5 requests." in lines
    assert f"         2         1  {content.BOOKS[0].title} at www.amazon.com" in lines
    assert f"  {content.BOOKS[0].title}: 1 visitors (3 views) -> 2 presses (200.0 %)" in lines  # /books/{slug}

    wider = publisher_gateway(db_url, "visits", "--days", "9", env=EMBEDDED, check=False)
    assert "5 visitors (each counted once a day), 23 page views." in wider.stdout


def test_visits_csv_and_the_days_refused_and_counting_off(db_url):
    clear_of_midnight()  # the day it counts is the day it reads back
    slug = counted_week(db_url)
    today = tables.utc_now().date().isoformat()

    as_csv = publisher_gateway(db_url, "visits", "--days", "2", "--csv", env=EMBEDDED, check=False)
    assert (as_csv.returncode, as_csv.stderr) == (0, ""), as_csv.stderr
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["section", "day", "key", "views", "visitors"]
    assert ["site", today, "", "12", "3"] in rows
    assert ["bot", today, "", "5", "0"] in rows
    assert ["source", "", "Instagram", "2", "1"] in rows
    assert ["buy", "", f"{slug} www.amazon.com", "2", "1"] in rows
    assert ["book_page", "", slug, "3", "1"] in rows
    assert sum(row[0] == "site" for row in rows) == 2

    for days in ("0", "731", "week"):
        refused = publisher_gateway(db_url, "visits", "--days", days, env=EMBEDDED, check=False)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert f"argument --days: {days!r} is not a number of days from 1 to 730" in refused.stderr

    off = publisher_gateway(db_url, "visits", "--csv", env={**EMBEDDED, "PUBLISHER_VISITS": "off"}, check=False)
    assert (off.returncode, off.stdout) == (0, "")
    assert off.stderr == "publisher-gateway: counting is off (PUBLISHER_VISITS=off), so there are no visits to show.\n"
