"""Smoke tests of the benchmarks that take seconds on a tiny input, run as a reader starts them."""

from __future__ import annotations

import re

from tests.doc_commands import run_benchmark
from tests.postgres import PostgresServer

RUN_S = 300
TIMED = r"p50 +[\d.]+ ms +p95 +[\d.]+ ms +max +[\d.]+ ms"


def benchmark(*arguments: str) -> str:
    return run_benchmark(*arguments, timeout=RUN_S)


def test_visits_flushes_a_tiny_day_to_sqlite_and_postgresql(postgres: PostgresServer):
    database = postgres.url(postgres.migrated_database())
    output = benchmark(
        "benchmarks/visits.py", "--part", "flush", "--views", "3000", "--visitors", "400", "--postgres-url", database
    )
    assert "3,000 page views by 400 visitors" in output
    for kind in ("SQLite", "PostgreSQL"):
        assert re.search(
            rf"^{kind} +[\d.]+ s: [\d,]+ seen rows, [\d,]+ counts; read back 3,000 views, 400 visitors$", output, re.M
        ), output


def test_the_outbox_delivers_every_message_and_queues_them_while_smtp_is_down():
    output = benchmark("benchmarks/outbox.py", "--messages", "3")
    assert "3 messages, SQLite, one worker" in output
    for measured in ("gateway answer, SMTP up", "stored -> accepted by the SMTP server", "gateway answer, SMTP down"):
        assert re.search(rf"^{re.escape(measured)} +{TIMED}$", output, re.M), output
    assert "received 3 of 3, 3 distinct Message-IDs; 3 queued while SMTP was down" in output


def test_the_dashboard_times_its_refresh_and_shows_the_readers_and_visits_it_was_given():
    output = benchmark(
        "benchmarks/dashboard.py", "--readers", "200", "--messages", "10", "--rounds", "3", "--visits", "2"
    )
    assert "200 readers, 10 messages, SQLite" in output
    assert "the counts it shows: Confirmed 130, Pending 50, Unsubscribed 20, Bounced 0" in output
    for measured in (
        "session check",
        "one refresh: every part (_figures)",
        "search by address",
        "one refresh, counting off",
        "the Visits section (_visits)",
        "one refresh with Visits",
    ):
        assert re.search(rf"^  {re.escape(measured)} +{TIMED}$", output, re.M), output
    assert "Visitors today 100,000, Page views today 300,000, Visitors yesterday 100,000" in output
    assert "2 days at the caps, every day's sources and campaigns (+704 rows)" in output  # (170 + 1 + 180 + 1) a day
