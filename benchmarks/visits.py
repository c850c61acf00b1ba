"""Visits: what counting costs, side by side in one run (issue 42; figures in docs/performance.md).

1. **Serving.** Two production servers on the existing build (`make build` first), the
   embedded gateway on SQLite each, one with ``PUBLISHER_VISITS=on`` and one with ``off``,
   both running. --requests GETs of a static page (--path, /about by default) at
   --concurrency keep-alive connections, each connection from a loopback address of its own
   with a desktop browser's user agent (so each is a visitor and every view counts; a test
   client's user agent is a bot). The rounds alternate off, on, off, on (--rounds each), so
   a busy moment of the machine falls on both. With --new-agents every request carries a user
   agent never seen before (the bot check's cache never helps; each is another visitor). Prints
   requests per second and the p50/p95 of a request for each, then waits until the counting
   server has flushed every view it served (it reads the counts back) and prints what it counted.
2. **One flush of a launch day.** A worker's batch holding --views page views (100,000 by
   default) from --visitors visitors over a day (their pages, minutes, landings' sources and
   campaigns, a few buy presses), written by ``visit_counts.flush`` in its one transaction
   to a fresh SQLite and a fresh PostgreSQL database (Debian's package, as in the tests, started
   for the run; --postgres-url: a fresh migrated database of a running one, as a smoke test's).
   Prints the seconds of the flush and the rows it wrote.
3. **User agents.** What counting a page view costs on the request path (``Recorder.page_view``,
   the bot check in it, in this process), --checks views of each kind side by side: browsers'
   user agents it remembers, never-seen short ones, adversarial long ones (docs/security.md's:
   a giant parenthesis, 512 random letters) and the worst a never-seen one can cost (512
   characters, the most still read: those two, runs of words the list removes first, pieces of
   its own patterns). Prints views/s, p50, p95 and the slowest of each, and the long ones' rate
   against the short ones'.

    .venv/bin/python benchmarks/visits.py [--requests 6000] [--concurrency 300] [--rounds 2]
        [--new-agents] [--views 100000] [--visitors 30000] [--checks 3000]
        [--part serve|flush|agents|all] [--no-postgres] [--postgres-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import statistics
import string
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import h11

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import PostgresServer  # noqa: E402
from tests.support import running_server, wait_until  # noqa: E402

# Browsers' user agents as they send them: none is a crawler (tests/unit/test_visits_benchmark.py).
DESKTOP_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
)
AGENTS_THREE = "three browsers' user agents"
AGENTS_NEW = "a user agent never seen before on every request"
LAUNCH_DAY_VIEWS = 100_000
LAUNCH_DAY_VISITORS = 30_000
CONCURRENCY = 300
REQUESTS = 6000  # per round and mode
ROUNDS = 2  # of each mode
ROUTES = ("/", "/about", "/subscribe", "/contact-us", "/books/guinea-pig-or-hamster")
SOURCES = ("(direct)", "Instagram", "Google", "Facebook", "Pinterest", "school-newsletter.example", "Bing")
CAMPAIGNS = ("newsletter / email / launch", "instagram / social / launch", "ref: school")
STORES = ("www.amazon.com",)
CHECKS = 3000  # page views of each kind of user agent


def loopback_address(index: int) -> str:
    """Connection ``index``'s own address in 127.0.0.0/8: another visitor for the site."""
    return f"127.{1 + index // 62500 % 250}.{index // 250 % 250}.{index % 250 + 2}"


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


# --- 1. Serving ---------------------------------------------------------------------------------


@dataclass
class Round:
    mode: str  # "on" or "off"
    seconds: float
    latencies: list[float]
    errors: int

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0


async def _get(reader, writer, connection: h11.Connection, host: str, path: str, agent: str) -> int:
    """One GET on an open keep-alive connection; its status (the body is read and dropped)."""
    request = h11.Request(method="GET", target=path, headers=[("Host", host), ("User-Agent", agent)])
    writer.write(connection.send(request) + connection.send(h11.EndOfMessage()))
    await writer.drain()
    status = 0
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.EndOfMessage):
            connection.start_next_cycle()
            return status
        elif isinstance(event, h11.ConnectionClosed):
            raise ConnectionError(f"closed during GET {path}")


def agent_of(index: int, build: str | None) -> str:
    """Connection ``index``'s user agent; with a ``build``, one the bot check has never seen (that
    browser build), as a flood rotating its user agent on every request sends."""
    agent = DESKTOP_AGENTS[index % len(DESKTOP_AGENTS)]
    return agent if build is None else f"{agent} Build/{build}"


async def _connection(
    index: int, port: int, path: str, requests: int, latencies: list[float], new_agents: str | None = None
) -> int:
    """One visitor's keep-alive connection making ``requests`` GETs; the errors. ``new_agents``:
    a round's name, for a user agent never seen before on each request."""
    host = f"localhost:{port}"
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(loopback_address(index), 0))
    except OSError:
        return requests
    errors = 0
    connection = h11.Connection(h11.CLIENT)
    try:
        for request in range(requests):
            agent = agent_of(index, None if new_agents is None else f"{new_agents}.{index}.{request}")
            started = time.perf_counter()
            if await _get(reader, writer, connection, host, path, agent) == 200:
                latencies.append(time.perf_counter() - started)
            else:
                errors += 1
    except (OSError, ConnectionError, h11.ProtocolError):
        errors += requests - len(latencies)
    finally:
        writer.close()
    return errors


async def one_round(
    mode: str, port: int, path: str, requests: int, concurrency: int, new_agents: str | None = None
) -> Round:
    """``requests`` GETs spread over ``concurrency`` connections, all at once."""
    latencies: list[float] = []
    shares = [requests // concurrency + (1 if n < requests % concurrency else 0) for n in range(concurrency)]
    started = time.perf_counter()
    errors = await asyncio.gather(
        *(_connection(n, port, path, share, latencies, new_agents) for n, share in enumerate(shares) if share)
    )
    return Round(mode, time.perf_counter() - started, latencies, sum(errors))


def counted_views(db_url: str, day: date) -> tuple[int, int]:
    """The counting server's flushed views and visitors of ``day``, as the dashboard reads them."""
    from publisher.storage import visit_counts

    [today] = visit_counts.daily("site", day, day, db_url=db_url)
    return today.views, today.visitors


def serve(args: argparse.Namespace, tmp: Path) -> int:
    """Part 1: counting on and off, side by side."""
    if not (ROOT / ".web" / "build" / "client" / "index.html").exists():
        print("No build: run `make build` first.", file=sys.stderr)
        return 2
    rounds: list[Round] = []
    with ExitStack() as servers:
        started = {}
        for mode in ("off", "on"):
            (tmp / mode).mkdir()
            env = {
                "PUBLISHER_GATEWAY_URL": "",
                "PUBLISHER_VISITS": mode,
                "REFLEX_DB_URL": f"sqlite:///{tmp / mode / 'visits.db'}",
                "GRANIAN_WORKERS": str(args.workers),
                "LOGLEVEL": "warning",
            }
            started[mode] = (servers.enter_context(running_server(tmp / mode, env)), env["REFLEX_DB_URL"])
        day = datetime.now(UTC).date()
        for number in range(args.rounds):
            for mode in ("off", "on"):
                server, _ = started[mode]
                agents = f"{mode}{number}" if args.new_agents else None
                rounds.append(
                    asyncio.run(one_round(mode, server.port, args.path, args.requests, args.concurrency, agents))
                )
        on_server, on_db = started["on"]
        served_on = sum(len(r.latencies) for r in rounds if r.mode == "on")  # readiness GETs are a bot's
        if datetime.now(UTC).date() == day:  # a round across midnight splits its count over two days
            wait_until(lambda: counted_views(on_db, day)[0] >= served_on, 60, "the counting server's flush")
        counted_on, visitors_on = counted_views(on_db, day)
        counted_off = counted_views(started["off"][1], day)[0]
    report_serving(args, rounds, (counted_on, visitors_on, served_on, counted_off))
    errors = sum(r.errors for r in rounds)
    return 1 if errors or counted_on != served_on or counted_off else 0


def report_serving(args: argparse.Namespace, rounds: list[Round], counts: tuple[int, int, int, int]) -> None:
    counted_on, visitors_on, served_on, counted_off = counts
    print(
        f"\nVisits, serving, {date.today()}, {platform.node()} ({os.cpu_count()} cores), "
        f"{args.workers} worker(s) each, SQLite"
    )
    print(
        f"GET {args.path}: {args.rounds} round(s) of {args.requests} requests at {args.concurrency} connections "
        f"for each, alternating off and on; {AGENTS_NEW if args.new_agents else AGENTS_THREE}"
    )
    for mode in ("off", "on"):
        mine = [r for r in rounds if r.mode == mode]
        latencies = [latency for r in mine for latency in r.latencies]
        rps = statistics.median(r.rps for r in mine)
        print(
            f"counting {mode + ':':<4} {rps:7.0f} requests/s (median of rounds), "
            f"p50 {percentile(latencies, 50) * 1000:6.1f} ms, p95 {percentile(latencies, 95) * 1000:6.1f} ms, "
            f"errors {sum(r.errors for r in mine)}"
        )
    print(
        f"counted with counting on: {counted_on} views of {served_on} served, {visitors_on} visitors; "
        f"with counting off: {counted_off} views"
    )


# --- 2. One flush of a launch day ---------------------------------------------------------------


def launch_day(views: int, visitors: int, day: date, seed: int = 20261127):
    """A worker's batch of a launch day: ``views`` page views by ``visitors`` visitors, as the
    tally keeps them (views per key, each visitor once per key seen), the landings with a
    source and some with a campaign, a press of a buy button for one visitor in twenty."""
    from publisher.storage import visit_counts

    rng = random.Random(seed)
    batch = visit_counts.Batch()

    def view(kind: str, key: str, visitor: bytes) -> None:
        batch.views[(day, kind, key)] = batch.views.get((day, kind, key), 0) + 1
        batch.seen.add((day, kind, key, visitor))

    for n in range(views):
        number = n if n < visitors else rng.randrange(visitors)  # every visitor comes at least once
        visitor = number.to_bytes(16, "big")
        view("site", "", visitor)
        view("page", ROUTES[rng.randrange(len(ROUTES))], visitor)
        minute = (number * 1440 // visitors + rng.randrange(3)) % 1440  # a visit lasts a few minutes
        batch.seen.add((day, "minute", f"{minute // 60:02d}{minute % 60:02d}", visitor))  # no view: "now"
        if n < visitors:  # the landing
            view("source", SOURCES[number % len(SOURCES)], visitor)
            if number % 5 == 0:
                view("campaign", CAMPAIGNS[number % len(CAMPAIGNS)], visitor)
            if number % 20 == 0:
                view("buy", f"guinea-pig-or-hamster {STORES[0]}", visitor)
    return batch


def page_views(batch) -> int:
    return sum(count for (_, kind, _), count in batch.views.items() if kind == "site")


def timed_flush(label: str, db_url: str, batch) -> None:
    from publisher.storage import visit_counts

    started = time.perf_counter()
    visit_counts.flush(batch, db_url=db_url)
    seconds = time.perf_counter() - started
    [day] = {day for day, *_ in batch.views}
    [counted] = visit_counts.daily("site", day, day, db_url=db_url)
    print(
        f"{label:<11} {seconds:6.2f} s: {len(batch.seen):,} seen rows, {len(batch.views):,} counts; "
        f"read back {counted.views:,} views, {counted.visitors:,} visitors"
    )
    if counted.views != page_views(batch):
        raise RuntimeError(f"{label}: {counted.views} views counted of {page_views(batch)}")


def flush(args: argparse.Namespace, tmp: Path) -> int:
    """Part 2: one flush of a launch day's worth, on SQLite and PostgreSQL."""
    from tests.databases import migrated_database

    day = datetime.now(UTC).date()
    batch = launch_day(args.views, args.visitors, day)
    print(
        f"\nVisits, one flush of a launch day, {date.today()}, {platform.node()} ({os.cpu_count()} cores): "
        f"{page_views(batch):,} page views by {args.visitors:,} visitors"
    )
    timed_flush("SQLite", migrated_database(tmp / "flush.db"), batch)
    if args.postgres_url:
        timed_flush("PostgreSQL", args.postgres_url, batch)
    elif args.postgres:
        postgres = PostgresServer()
        try:
            timed_flush("PostgreSQL", postgres.url(postgres.migrated_database()), batch)
        finally:
            postgres.close()
    return 0


# --- 3. User agents -------------------------------------------------------------------------------


def agents_of(kind: str, count: int, seed: int = 20261128) -> list[str]:
    """``count`` user agents of one kind; all but the ordinary ones never seen before."""
    from crawlerdetect.providers.crawlers import data as crawler_patterns

    from publisher.rules import visit_rules

    longest = visit_rules.USER_AGENT_MAX
    rng = random.Random(seed)

    def letters(n: int) -> str:
        return "".join(rng.choice(string.ascii_letters) for _ in range(n))

    def pieces_of_patterns() -> str:  # new states for RE2's automaton at nearly every character
        text = ""
        while len(text) < longest:
            word = rng.choice(pattern_words)
            start = rng.randrange(len(word) - 2)
            text += word[start : rng.randrange(start + 2, len(word))]
        return text[:longest]

    if kind == "ordinary":
        return [DESKTOP_AGENTS[n % len(DESKTOP_AGENTS)] for n in range(count)]
    if kind == "never seen, short":
        return [agent_of(n, f"{kind[:5]}{seed}.{n}") for n in range(count)]
    if kind == "adversarial, long":  # docs/security.md: each pinned a worker for ~25 ms
        return [f"Mozilla/5.0 ({'a' * 490}{letters(8)})" if n % 2 else letters(512) for n in range(count)]
    # The worst still read: as long as is read, in the shapes that cost the list most.
    pattern_words = [word for pattern in crawler_patterns if len(word := re.sub(r"[^\w /;.-]", "", pattern)) > 3]
    shapes = (
        lambda: f"Mozilla/5.0 ({'a' * 490}{letters(8)})",
        lambda: letters(longest),
        lambda: ("x64 " * longest)[: longest - 8] + letters(8),
        lambda: ("Safari/1 " * longest)[: longest - 8] + letters(8),
        pieces_of_patterns,
    )
    return [shapes[n % len(shapes)]() for n in range(count)]


AGENT_KINDS = ("ordinary", "never seen, short", "adversarial, long", "worst still read")


def agents(args: argparse.Namespace) -> int:
    """Part 3: one page view counted on the request path, per kind of user agent."""
    from publisher.visits.recorder import Recorder

    now = datetime.now(UTC)
    counting = Recorder(trusted_proxy_hops=0, clock=lambda: now)
    counting.count_views_on({"/about"})
    asyncio.run(counting.salts.refresh(lambda day, now: b"s" * 32, now))
    print(
        f"\nVisits, a page view counted on the request path, {date.today()}, {platform.node()} "
        f"({os.cpu_count()} cores): {args.checks:,} views of each kind, each from an address of its own"
    )
    rates = {}
    for kind in AGENT_KINDS:
        times = []
        for n, agent in enumerate(agents_of(kind, args.checks)):
            headers = [(b"host", b"books.example"), (b"user-agent", agent.encode("latin-1"))]
            scope = {
                "method": "GET",
                "path": "/about",
                "query_string": b"",
                "headers": headers,
                "client": (loopback_address(n), 1),
            }
            started = time.perf_counter()
            counting.page_view(scope, 200, "/about")
            times.append(time.perf_counter() - started)
        counting.tally.take()
        rates[kind] = len(times) / sum(times)
        print(
            f"{kind + ':':<19} {rates[kind]:9,.0f} views/s, p50 {percentile(times, 50) * 1e6:8.1f} µs, "
            f"p95 {percentile(times, 95) * 1e6:8.1f} µs, slowest {max(times) * 1e6:8.1f} µs"
        )
    print(f"adversarial long against never-seen short: {rates['adversarial, long'] / rates['never seen, short']:.2f} x")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--part", choices=("serve", "flush", "agents", "all"), default="all")
    parser.add_argument("--path", default="/about", help="the static page the requests read")
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests per round and mode")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY, help="connections at once")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of each mode, alternating")
    parser.add_argument("--workers", type=int, default=1, help="GRANIAN_WORKERS of each server")
    parser.add_argument(
        "--new-agents",
        action="store_true",
        help="a user agent never seen before on every request: the bot check's uncached cost",
    )
    parser.add_argument("--views", type=int, default=LAUNCH_DAY_VIEWS, help="page views in the flushed batch")
    parser.add_argument("--visitors", type=int, default=LAUNCH_DAY_VISITORS, help="visitors making them")
    parser.add_argument("--no-postgres", dest="postgres", action="store_false", help="no PostgreSQL flush")
    parser.add_argument(
        "--postgres-url", help="a fresh, migrated PostgreSQL database to flush into, not a server started for the run"
    )
    parser.add_argument("--checks", type=int, default=CHECKS, help="page views of each kind of user agent")
    args = parser.parse_args(argv)
    if args.visitors > args.views or min(args.requests, args.concurrency, args.rounds, args.visitors, args.checks) < 1:
        parser.error(
            "--requests, --concurrency, --rounds, --visitors and --checks are at least 1, --visitors at most --views"
        )
    status = 0
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if args.part in ("serve", "all"):
            status = serve(args, tmp)
        if args.part in ("flush", "all"):
            status = flush(args, tmp) or status
        if args.part in ("agents", "all"):
            status = agents(args) or status
    return status


if __name__ == "__main__":
    raise SystemExit(main())
