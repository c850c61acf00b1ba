"""Release flip: what a forthcoming book's flip costs a page request, side by side in one run.

Issue 50; the figures are in docs/performance.md.

Two production servers, one worker each (--workers), the embedded gateway on SQLite, counting visits off:
(a) this checkout's build (`make build` first), no forthcoming book; (b) the copy tests/release_book.py makes
(this checkout with a test book, its moment years ahead, appended to its content; built under ~/.cache when
its inputs changed), where every request to `/` and to the test book's page goes through the flip's comparison
and is served the file built for before the moment. The pages: `/` of each, a book's page of each ((a): an out
book's; (b): the test book's), and (b)'s out book's page, not flipped, as a control: what else differs
between the two servers. Each answers once first: 200, and (b)'s flipped pages say the book is coming, no
other page does. Then --rounds rounds of --requests GETs of each page at --concurrency keep-alive connections
(benchmarks/visits.py's), the pages in turn, their order reversed every other round, so a busy moment of the
machine falls on both servers. Prints requests/s (median of rounds), p50 and p95 of each; fails if a request
failed or a build was rebuilt under its server (another run's).

    .venv/bin/python benchmarks/release_flip.py [--requests 6000] [--concurrency 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from datetime import date
from pathlib import Path

import httpx
from visits import CONCURRENCY, REQUESTS, Round, one_round, percentile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from publisher.rules import release_rules  # noqa: E402
from tests.release_book import release_project, test_book  # noqa: E402
from tests.support import log_excerpt, running_server  # noqa: E402

ROUNDS = 5
OUT_BOOK = "/books/coloring-book"  # one of the site's real books, out


def checked(server, label: str, path: str, coming: str | None) -> bool:
    """One GET of the page: a 200 that says ``coming``, or (None) has no "Coming" line at all."""
    page = httpx.get(server.base_url + path, timeout=30)
    as_needed = page.status_code == 200 and ((coming or "Coming ") in page.text) == bool(coming)
    words = f"says {coming!r}" if coming else "no 'Coming' line"
    print(f"{label}: {page.status_code}, {len(page.content):,} bytes, {'' if as_needed else 'NOT '}{words}")
    return as_needed


def build_stamp(root: Path) -> str:
    """scripts/build.py's stamp: another run rebuilding a build while it is served changes it."""
    stamp = root / ".web" / "build-stamp"
    return stamp.read_text() if stamp.is_file() else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=REQUESTS, help="per round and page (%(default)s)")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY, help="connections at once (%(default)s)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="each serving every page once (%(default)s)")
    parser.add_argument("--workers", type=int, default=1, help="GRANIAN_WORKERS of each server")
    args = parser.parse_args(argv)
    if min(args.requests, args.concurrency, args.rounds, args.workers) < 1:
        parser.error("--requests, --concurrency, --rounds and --workers are at least 1")
    if not (ROOT / ".web" / "build" / "client" / "index.html").exists():
        print("No build: run `make build` first.", file=sys.stderr)
        return 2
    book = test_book()
    coming = release_rules.coming_words(book)
    # (b)'s out book's page is routed as (a)'s, not flipped: what differs between the servers apart from the flip.
    measured = (("a", "/"), ("b", "/"), ("a", OUT_BOOK), ("b", book.page_path), ("b", OUT_BOOK))
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory() as folder, ExitStack() as servers:
        tmp = Path(folder)
        try:
            roots = {"a": ROOT, "b": release_project(tmp / "build.log")}
        except subprocess.CalledProcessError:
            print(f"The release copy's build failed:\n{log_excerpt((tmp / 'build.log').read_text())}", file=sys.stderr)
            return 1
        stamps = {name: build_stamp(root) for name, root in roots.items()}
        started = {}
        for name, root in roots.items():
            (tmp / name).mkdir()
            env = {
                "PUBLISHER_GATEWAY_URL": "",
                "PUBLISHER_VISITS": "off",
                "REFLEX_DB_URL": f"sqlite:///{tmp / name / 'site.db'}",
                "GRANIAN_WORKERS": str(args.workers),
                "LOGLEVEL": "warning",
            }
            started[name] = servers.enter_context(running_server(tmp / name, env, root=root))
        print(
            f"\nRelease flip, serving, {date.today()}, {platform.node()} ({os.cpu_count()} cores), "
            f"{args.workers} worker(s) each, SQLite, counting visits off"
        )
        flipped = {("b", "/"), ("b", book.page_path)}
        says = {page: coming if page in flipped else None for page in measured}
        answers = [checked(started[name], f"({name}) {path}", path, says[name, path]) for name, path in measured]
        if not all(answers):
            print("A page is not as the comparison needs it: nothing measured.", file=sys.stderr)
            return 1
        for number in range(args.rounds):
            for name, path in measured[:: 1 if number % 2 == 0 else -1]:  # (a) first, then (b) first
                run = one_round(f"({name}) {path}", started[name].port, path, args.requests, args.concurrency)
                rounds.append(asyncio.run(run))
        rebuilt = [name for name, root in roots.items() if build_stamp(root) != stamps[name]]
    if rebuilt:
        print(f"({') and ('.join(rebuilt)}) rebuilt during the run (another run's build?): run again.", file=sys.stderr)
        return 1
    print(
        f"{args.rounds} round(s) of {args.requests} requests at {args.concurrency} connections for each page, "
        "in turn, the order reversed every other round: (a) no forthcoming book, (b) a forthcoming book"
    )
    for label in (f"({name}) {path}" for name, path in measured):
        mine = [r for r in rounds if r.mode == label]
        latencies = [latency for r in mine for latency in r.latencies] or [float("nan")]
        print(
            f"{label:<30} {statistics.median(r.rps for r in mine):7.0f} requests/s (median of rounds), "
            f"p50 {percentile(latencies, 50) * 1000:6.1f} ms, p95 {percentile(latencies, 95) * 1000:6.1f} ms, "
            f"errors {sum(r.errors for r in mine)}"
        )
    return 1 if any(r.errors for r in rounds) else 0


if __name__ == "__main__":
    raise SystemExit(main())
