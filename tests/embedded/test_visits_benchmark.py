"""benchmarks/visits.py's serving part at a tiny size, on the suite's build: both servers start,
counting on and off are each measured, and the counting server counts every view it served
(its exit status says so), the other none."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.doc_commands import PROJECT_ROOT

RUN_S = 600  # two servers started on a loaded machine


def test_the_serving_part_measures_on_and_off_and_counts_every_view_it_served(built_site, tmp_path):
    done = subprocess.run(
        [sys.executable, "benchmarks/visits.py", "--part", "serve", "--requests", "40", "--concurrency", "8"],
        cwd=PROJECT_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_S,
        check=False,
    )
    output = done.stdout
    assert done.returncode == 0, f"{output[-3000:]}{done.stderr[-3000:]}"
    for mode in ("off", "on"):
        assert re.search(rf"^counting {mode}: +\d+ requests/s .* p95 +[\d.]+ ms, errors 0$", output, re.M), output
    assert "counted with counting on: 80 views of 80 served, 8 visitors; with counting off: 0 views" in output
