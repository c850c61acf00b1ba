"""The dashboard's data on a big list: how long one refresh of /admin reads (every part of it).

On a fresh SQLite or PostgreSQL database it stores --readers readers (a quarter of them
pending, a tenth unsubscribed, the rest confirmed), --messages contact messages with their
outbox emails and a session, then times, --rounds times, what the dashboard's state does on
every refresh (web/states/admin_state.py): the session's check and ``_figures()`` (the counts, the
latest sign-ups, messages, releases, bounces, the mailbox's left messages, the outbox's
health, the audit log), and a search by address. Prints p50/p95/max in milliseconds.

With --visits DAYS it also stores DAYS days (730: two years, PUBLISHER_VISITS_KEEP_DAYS's
default) of visit counts as the flush leaves them, aggregate rows at --visitors a day (100,000),
over the site, its pages, 30 sources, 20 campaigns, the bots and every book's stores, and times
one refresh with the Visits section (``_visits()`` alone, then all of ``_figures()``) against
one refresh of the dashboard without it (PUBLISHER_VISITS=off): the Visits section's reads are
aggregates over a fixed range of days, so the two years of rows should not show. Then every one
of those days is filled up to the caps (visit_rules.LABELS_PER_DAY sources and as many campaigns,
and "(other)") and the refresh timed again.

    .venv/bin/python benchmarks/dashboard.py [--readers 100000] [--rounds 30] [--postgres]
    .venv/bin/python benchmarks/dashboard.py --visits 730 [--visitors 100000] [--postgres]

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
    admins.invite("Bench", admin_access.token_hash(token), admin_access.new_token(), db_url=db_url)
    session = admin_access.token_hash(admin_access.new_token())
    admins.enrol(admin_access.token_hash(token), "bench-credential", b"key", 0, session, db_url=db_url)
    return session


SOURCES = 30
CAMPAIGNS = 20
PAGE_ROUTES = ("/", "/about", "/subscribe", "/contact-us", "/subscribe/thanks", "/contact-us/thanks")


def fill_visits(db_url: str, days: range, visitors: int) -> int:
    """The counts of the ``days`` before today (0: today), ``visitors`` visitors a day, as aggregate
    rows (what the flush leaves: no seen row outlives its day's salt); how many rows."""
    from publisher.content import books
    from publisher.storage import visit_counts
    from publisher.storage.tables import VisitCount, utc_now

    today = utc_now().date()
    pages = [*PAGE_ROUTES, *(book.page_path for book in books.BOOKS)]
    stores = [f"{book.slug} {store}" for book in books.BOOKS for store in ("www.amazon.com", "bookshop.org")]
    rows = []
    for offset in days:
        day = today - timedelta(days=offset)
        counts = {("site", ""): (3 * visitors, visitors), ("bot", ""): (visitors // 2, 0)}
        counts.update({("page", route): (visitors // 2, visitors // 3) for route in pages})
        counts.update(
            {("source", f"source{n}.example"): (visitors // (n + 2), visitors // (n + 3)) for n in range(SOURCES)}
        )
        counts.update({("campaign", f"news / email / c{n}"): (100 + n, 90 + n) for n in range(CAMPAIGNS)})
        counts.update({("buy", key): (visitors // 100, visitors // 120) for key in stores})
        rows.extend(
            {"kind": kind, "day": day, "key": key, "views": views, "visitors": people}
            for (kind, key), (views, people) in counts.items()
        )
    engine = sqlalchemy.create_engine(db_url)
    with engine.begin() as connection:
        for start in range(0, len(rows), 5000):
            connection.execute(sqlalchemy.insert(VisitCount), rows[start : start + 5000])
    engine.dispose()
    assert visit_counts.daily("site", today, today, db_url=db_url)[0].visitors == visitors
    return len(rows)


def fill_to_caps(db_url: str, days: range) -> int:
    """Each of the ``days`` filled up to the labels a day takes, each kind's "(other)" too; how many rows."""
    from publisher.rules import visit_rules
    from publisher.storage.tables import VisitCount, utc_now

    today = utc_now().date()
    rows = [
        {"kind": kind, "day": today - timedelta(days=offset), "key": key, "views": 3, "visitors": 2}
        for offset in days
        for kind, first in (("source", SOURCES), ("campaign", CAMPAIGNS))
        for key in [f"{kind}-{n}.capped.example" for n in range(first, visit_rules.LABELS_PER_DAY)] + ["(other)"]
    ]
    engine = sqlalchemy.create_engine(db_url)
    with engine.begin() as connection:
        for start in range(0, len(rows), 5000):
            connection.execute(sqlalchemy.insert(VisitCount), rows[start : start + 5000])
    engine.dispose()
    return len(rows)


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
    parser.add_argument("--visits", type=int, default=0, metavar="DAYS", help="days of visit counts (730: two years)")
    parser.add_argument("--visitors", type=int, default=100_000, help="visitors a day in those counts")
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
            print("  the counts it shows:", ", ".join(f"{row['label']} {row['value']}" for row in readers))
            show("session check", timed(lambda: admins.session_admin(session, timedelta(minutes=30)), args.rounds))
            show("one refresh: every part (_figures)", timed(admin_state._figures, args.rounds))
            show("search by address", timed(lambda: dashboard.find_readers("reader9999"), args.rounds))
            if args.visits:
                compare_visits(db_url, args)
        finally:
            if server is not None:
                server.close()


def compare_visits(db_url: str, args: argparse.Namespace) -> None:
    """One refresh without the Visits section (counting off); then with it over today's counts
    only, and over --visits days of them: the same reads, so about the same time."""
    from publisher.web.states import admin_state

    os.environ["PUBLISHER_VISITS"] = "off"
    show("one refresh, counting off", timed(admin_state._figures, args.rounds))
    os.environ["PUBLISHER_VISITS"] = "on"
    for days in (range(1), range(1, args.visits)):
        started = time.perf_counter()
        rows = fill_visits(db_url, days, args.visitors)
        filled_s = time.perf_counter() - started
        print(f"{days.stop:,} days of visits at {args.visitors:,} a day (+{rows:,} rows in {filled_s:.1f} s)")
        show("the Visits section (_visits)", timed(admin_state._visits, args.rounds))
        show("one refresh with Visits", timed(admin_state._figures, args.rounds))
    rows = fill_to_caps(db_url, range(args.visits))
    print(f"{args.visits:,} days at the caps, every day's sources and campaigns (+{rows:,} rows)")
    show("the Visits section (_visits)", timed(admin_state._visits, args.rounds))
    show("one refresh with Visits", timed(admin_state._figures, args.rounds))
    figures = {row["label"]: row["value"] for row in admin_state._visits()["visits_figures"]}
    print("  the Visits figures it shows:", ", ".join(f"{label} {value}" for label, value in figures.items()))


if __name__ == "__main__":
    main()
