"""The dashboard's data on a big list: how long one refresh of /admin reads (every part of it).

On a fresh SQLite or PostgreSQL database it stores --readers readers (a quarter of them
pending, a tenth unsubscribed, the rest confirmed), --messages contact messages with their
outbox emails and a session, then times, --rounds times, what the dashboard's state does on
every refresh (web/states/admin_state.py): the session's check and ``_figures()`` (the counts, the
latest sign-ups, messages, releases, bounces, the mailbox's left messages, the outbox's
health, the audit log), and a search by address. Prints p50/p95/max in milliseconds.

    .venv/bin/python benchmarks/dashboard.py [--readers 100000] [--rounds 30] [--postgres]

Figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy

from tests.support import publisher_gateway


def fill(db_url: str, readers: int, messages: int) -> str:
    """The list, the messages and one admin's session; the session's hash."""
    from publisher.rules import admin_access
    from publisher.storage import admins
    from publisher.storage.tables import CONTACT, PENDING, ContactMessage, Delivery, Subscriber, utc_now

    now = utc_now()
    statuses = ["pending"] * 25 + ["unsubscribed"] * 10 + ["confirmed"] * 65
    rows = [
        {
            "email": f"reader{n}@example.com",
            "email_key": f"reader{n}@example.com",
            "mailbox_key": f"reader{n}@example.com",
            "name": f"Reader {n}",
            "book_updates": "yes",
            "subscribed_at": now - timedelta(minutes=readers - n),
            "status": statuses[n % 100],
            "source": "form",
            "link_key": f"k{n:030d}",
        }
        for n in range(readers)
    ]
    engine = sqlalchemy.create_engine(db_url)
    with engine.begin() as connection:
        for start in range(0, len(rows), 5000):
            connection.execute(sqlalchemy.insert(Subscriber), rows[start : start + 5000])
        for n in range(messages):
            message_id = connection.execute(
                sqlalchemy.insert(ContactMessage).values(
                    sender_name="Jo Reader",
                    sender_email=f"jo{n}@example.com",
                    subject="Contact Form Submission from Jo Reader",
                    message="When is the next book out?",
                    received_at=now,
                )
            ).inserted_primary_key[0]
            connection.execute(
                sqlalchemy.insert(Delivery).values(
                    kind=CONTACT,
                    source_id=message_id,
                    message_id=f"<m{n}@bench>",
                    status=PENDING,
                    attempts=0,
                    created_at=now,
                    next_attempt_at=now,
                    give_up_at=now + timedelta(days=1),
                )
            )
    engine.dispose()
    token = admin_access.new_token()
    admins.invite("Bench", admin_access.token_hash(token), admin_access.new_user_handle(), db_url=db_url)
    session = admin_access.token_hash(admin_access.new_token())
    admins.enrol(admin_access.token_hash(token), "bench-credential", b"key", 0, session, db_url=db_url)
    return session


def timed(function, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return times


def show(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(f"  {name:<34} p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   max {ordered[-1]:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory() as workdir:
        if args.postgres:
            from tests.postgres import PostgresServer

            server = PostgresServer()
            db_url = server.url(server.migrated_database())
        else:
            db_url = f"sqlite:///{workdir}/dashboard.db"
            publisher_gateway(db_url, "migrate")
        os.environ["REFLEX_DB_URL"] = db_url
        os.environ.pop("PUBLISHER_GATEWAY_URL", None)
        try:
            started = time.perf_counter()
            session = fill(db_url, args.readers, args.messages)
            kind = "PostgreSQL" if args.postgres else "SQLite"
            filled_s = time.perf_counter() - started
            print(f"{args.readers:,} readers, {args.messages:,} messages, {kind} (filled in {filled_s:.1f} s)")

            from publisher.storage import admins, dashboard
            from publisher.web.states import admin_state

            readers = admin_state._figures()["readers"]
            print("  the counts it shows:", ", ".join(f"{row['label']} {row['count']}" for row in readers))
            show("session check", timed(lambda: admins.session_admin(session, timedelta(minutes=30)), args.rounds))
            show("one refresh: every part (_figures)", timed(admin_state._figures, args.rounds))
            show("search by address", timed(lambda: dashboard.find_readers("reader9999"), args.rounds))
        finally:
            if server is not None:
                server.close()


if __name__ == "__main__":
    main()
