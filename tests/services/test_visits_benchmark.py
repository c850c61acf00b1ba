"""benchmarks/visits.py's flush part at a tiny size: one worker's batch written to SQLite and to
PostgreSQL in one flush each, read back whole (the benchmark fails when a view is missing), and its
visitors marked in Redis's day sets."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.doc_commands import PROJECT_ROOT


def test_one_flush_of_a_day_is_written_and_read_back_on_sqlite_and_postgresql():
    done = subprocess.run(
        [sys.executable, "benchmarks/visits.py", "--part", "flush", "--views", "3000", "--visitors", "400"],
        cwd=PROJECT_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout
    assert done.returncode == 0, f"{output[-3000:]}{done.stderr[-3000:]}"
    assert "3,000 page views by 400 visitors" in output
    assert re.search(r"^Redis +[\d.]+ s: [\d,]+ members in [\d,]+ keys, [\d.]+ MB for the day; ", output, re.M), output
    for database in ("SQLite", "PostgreSQL"):
        assert re.search(
            rf"^{database} +[\d.]+ s: [\d,]+ seen rows, [\d,]+ counts; read back 3,000 views, 400 visitors$",
            output,
            re.M,
        ), output
