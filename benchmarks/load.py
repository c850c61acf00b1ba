"""Load: N concurrent simulated visitors submitting both forms over Reflex's real websocket protocol.

Starts a recording test gateway on 127.0.0.1 (answers 200 after a fixed delay,
20 ms by default, and keeps every request), starts `publisher-serve` on the
existing build (`make build` first) pointed at it, then:

1. connects N visitors (half on /subscribe, half on /contact-us) and hydrates
   their pages, as a browser does;
2. all submit valid data, at moments spread uniformly over --spread-s seconds
   (contact visitors no earlier than 5 s after their form appeared, the
   fill-time rule); the submit latency is the time from sending the
   event to receiving the toast's state change;
3. disconnects everyone, waits until their states expire (--state-ttl-s), and
   runs the next wave (--waves): memory must come back down, not pile up.

Prints throughput, p50/p95/p99 submit latency, the backend's memory (idle,
peak, per connected visitor, after everyone left), and submissions accepted by
the site vs. received by the gateway (none lost, none duplicated).

With --submit plain, the form visitors send their forms as a browser without the app
does (server/plain_forms.py): each loads its form page over HTTP (the contact page
carries its question and signed token), then POSTs the form to the page; the
latency is from the POST to the server's 303 answer. No websocket is opened.

With --scenario readers, N readers of a book launch load Home (or --reader-path)
instead, each as a browser's first visit does: the page, then every file it
references (stylesheet, site.js, images, icons), at moments spread over
--spread-s seconds. Prints the full-load latency, the bytes per reader, whether
the page references any app script (it would open a websocket), the websockets
the server holds afterwards, and the backend's memory before, at the peak and
after: static pages cost the backend no connection and no state.

    .venv/bin/python benchmarks/load.py [--visitors 500] [--submit app|plain] [--gateway-delay-ms 20] [--workers 1]
        [--redis-url redis://127.0.0.1:6379/0 | --redis-url start] [--postgres]

With --postgres the embedded gateway stores into a PostgreSQL started for the run
(Debian's package, as in the tests) and lost/duplicated are counted in its tables.
    .venv/bin/python benchmarks/load.py --scenario readers [--visitors 500] [--reader-path /about]

Each form visitor connects from a loopback address of its own (127.0.0.2, .3, ...,
127.0.1.2, ...), as visitors arrive from many addresses, so the per-address limits
(open tabs, new tabs a minute, submissions) apply as they would to real visitors.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import ExitStack, suppress
from datetime import date
from pathlib import Path

import h11
import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.postgres import PostgresServer  # noqa: E402
from tests.support import RecordingGateway, RedisServer, running_server  # noqa: E402
from tests.visitor import (  # noqa: E402
    CONTACT_STATE,
    SUBSCRIBE_STATE,
    Visitor,
    hydrated,
    notice_changed,
    question_answer,
    question_in_page,
    served_question,
)

FILL_TIME_S = 5.0


def _over_server(root: psutil.Process, measure) -> float:
    """``measure`` summed over the server's main process and its workers (one may just have exited)."""
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        with suppress(psutil.NoSuchProcess):
            total += measure(process)
    return total


def server_rss_mb(root: psutil.Process) -> float:
    return _over_server(root, lambda process: process.memory_info().rss) / 2**20


class Run:
    def __init__(self, visitors: int, spread_s: float) -> None:
        rng = random.Random(20261122)
        self.wave_id = uuid.uuid4().hex[:8]
        self.offsets = [rng.uniform(0, spread_s) for _ in range(visitors)]
        self.latencies: list[float] = []
        self.spans: list[tuple[float, float]] = []
        self.outcomes: Counter[str] = Counter()
        self.errors: list[str] = []


def loopback_address(index: int) -> str:
    """Visitor ``index``'s own address in 127.0.0.0/8 (all of it is this machine's loopback)."""
    return f"127.0.{index // 250}.{index % 250 + 2}"


async def visit(
    index: int,
    base_url: str,
    run: Run,
    connected: asyncio.Event,
    go: asyncio.Event,
    done: asyncio.Event,
    connect_gate: asyncio.Semaphore,
    ready_count: list[int],
    total: int,
) -> None:
    contact = index % 2 == 1
    substate = CONTACT_STATE if contact else SUBSCRIBE_STATE
    visitor = Visitor(base_url, "/contact-us" if contact else "/subscribe", source=loopback_address(index))
    try:
        async with connect_gate:
            await visitor.open_page(hydrated, timeout_s=60)
            question, token = await served_question(base_url) if contact else ("", "")
        shown_at = time.perf_counter()
        ready_count[0] += 1
        if ready_count[0] == total:
            connected.set()
        await go.wait()
        # Visitors do not all press the button in the same millisecond: spread them out.
        await asyncio.sleep(run.offsets[index])
        if contact:
            await asyncio.sleep(max(0.0, FILL_TIME_S + 0.2 - (time.perf_counter() - shown_at)))
            form = contact_form(index, run, question, token)
        else:
            form = subscribe_form(index, run)
        before = visitor.var(substate, "notice_id", "")
        started = time.perf_counter()
        await visitor.send(f"{substate}.submit", {"form_data": form})
        await visitor.wait_for(notice_changed(substate, before), timeout_s=60)
        finished = time.perf_counter()
        run.latencies.append(finished - started)
        run.spans.append((started, finished))
        run.outcomes[visitor.var(substate, "status")] += 1
        await done.wait()
    except Exception as exc:  # noqa: BLE001 - count every failure, keep the others going
        if not connected.is_set():
            ready_count[0] += 1
            if ready_count[0] == total:
                connected.set()
        run.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        await visitor.close()


def contact_form(index: int, run: Run, question: str, token: str) -> dict[str, str]:
    return {
        "firstName": "Load",
        "lastName": f"Visitor{index}",
        "email": f"visitor{index}-{run.wave_id}@example.com",
        "message": f"Hello from simulated visitor {index}.",
        "answer": str(question_answer(question)),
        "website": "",
        "token": token,
    }


def subscribe_form(index: int, run: Run) -> dict[str, str]:
    return {"name": f"Visitor {index}", "email": f"visitor{index}-{run.wave_id}@example.com", "website": ""}


async def post_plainly(
    index: int,
    base_url: str,
    run: Run,
    connected: asyncio.Event,
    go: asyncio.Event,
    ready_count: list[int],
    total: int,
) -> None:
    """A visitor without the app: the form page over HTTP, then the form POSTed to it (a 303 is accepted)."""
    contact = index % 2 == 1
    path = "/contact-us" if contact else "/subscribe"
    transport = httpx.AsyncHTTPTransport(local_address=loopback_address(index))
    async with httpx.AsyncClient(base_url=base_url, transport=transport, timeout=60) as http:
        try:
            page = await http.get(path)
            shown_at = time.perf_counter()
        finally:
            ready_count[0] += 1
            if ready_count[0] == total:
                connected.set()
        try:
            await go.wait()
            await asyncio.sleep(run.offsets[index])
            if contact:
                question, token = question_in_page(page.text)
                await asyncio.sleep(max(0.0, FILL_TIME_S + 0.2 - (time.perf_counter() - shown_at)))
                form = contact_form(index, run, question, token)
            else:
                form = subscribe_form(index, run)
            started = time.perf_counter()
            answer = await http.post(path, data=form, headers={"Origin": base_url})
            finished = time.perf_counter()
            run.latencies.append(finished - started)
            run.spans.append((started, finished))
            run.outcomes["success" if answer.status_code == 303 else f"status {answer.status_code}"] += 1
        except Exception as exc:  # noqa: BLE001 - count every failure, keep the others going
            run.errors.append(f"{type(exc).__name__}: {exc}")


_REFERENCE = re.compile(r'<(?:link|script|img)\b[^>]*?\b(?:href|src)="(/[^"]*)"')


def referenced_files(html: str) -> list[str]:
    """The same-origin files a browser fetches for this page (stylesheet, scripts, images, icons)."""
    return sorted(set(_REFERENCE.findall(html)))


def server_cpu_s(root: psutil.Process) -> float:
    return _over_server(root, lambda process: process.cpu_times().user + process.cpu_times().system)


def server_websockets(root: psutil.Process, port: int) -> int:
    """Connections the server holds open on its port (a form page's visitor holds one: its websocket)."""
    return int(
        _over_server(
            root,
            lambda process: sum(
                1
                for c in process.net_connections("tcp")
                if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
            ),
        )
    )


async def _get(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: h11.Connection, host: str, path: str
) -> tuple[int, int, bytes]:
    """One GET on an open keep-alive connection: (status, bytes received, body)."""
    writer.write(
        connection.send(
            h11.Request(
                method="GET",
                target=path,
                headers=[("Host", host), ("Accept-Encoding", "gzip"), ("User-Agent", "publisher-load-readers")],
            )
        )
    )
    writer.write(connection.send(h11.EndOfMessage()))
    await writer.drain()
    status, received, body = 0, 0, bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(65536)
            received += len(data)
            connection.receive_data(data)
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            connection.start_next_cycle()
            return status, received, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            raise ConnectionError(f"closed during GET {path}")


async def read_page(base_url: str, path: str, delay_s: float, results: dict) -> None:
    """One reader: the page, then what it references, over one keep-alive connection (h11 on asyncio
    streams: a light client, so the load generator does not take the CPU the server needs)."""
    await asyncio.sleep(delay_s)
    host = base_url.split("://", 1)[1]
    address, port = host.rsplit(":", 1)
    started = time.perf_counter()
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, int(port)), timeout=30)
        connection = h11.Connection(h11.CLIENT)
        status, total, page = await _get(reader, writer, connection, host, path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
        html = (gzip.decompress(page) if page[:2] == b"\x1f\x8b" else page).decode()
        files = referenced_files(html)
        for file in files:  # a browser would use several connections; one keeps the client cheap
            status, received, _ = await _get(reader, writer, connection, host, file)
            if status != 200:
                raise RuntimeError(f"GET {file}: {status}")
            total += received
        results["latencies"].append(time.perf_counter() - started)
        results["bytes"].append(total)
        results["files"] = files
    except Exception as exc:  # noqa: BLE001 - count every failure, keep the others going
        results["errors"].append(f"{type(exc).__name__}: {exc}")
    finally:
        if writer is not None:
            writer.close()


async def reader_wave(args: argparse.Namespace, base_url: str, root: psutil.Process, port: int) -> dict:
    rng = random.Random(20261122)
    results: dict = {"latencies": [], "bytes": [], "errors": [], "files": []}
    before, cpu_before, own_cpu_before = server_rss_mb(root), server_cpu_s(root), time.process_time()
    tasks = [
        asyncio.create_task(read_page(base_url, args.reader_path, rng.uniform(0, args.spread_s), results))
        for _ in range(args.visitors)
    ]
    peak = before
    started = time.perf_counter()
    while not all(task.done() for task in tasks):
        await asyncio.sleep(0.05)
        peak = max(peak, server_rss_mb(root))
    results["window_s"] = time.perf_counter() - started
    results["server_cpu_s"] = server_cpu_s(root) - cpu_before
    results["client_cpu_s"] = time.process_time() - own_cpu_before
    results["held"] = server_websockets(root, port)
    await asyncio.sleep(args.settle_s)
    results["memory"] = (before, peak, server_rss_mb(root))
    return results


async def readers(args: argparse.Namespace) -> int:
    """--scenario readers: waves of N readers of a static page, and what they cost the backend."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"REFLEX_DB_URL": f"sqlite:///{tmp}/load.db", "GRANIAN_WORKERS": str(args.workers), "LOGLEVEL": "warning"}
        if args.redis_url:
            env["REFLEX_REDIS_URL"] = args.redis_url
        with running_server(Path(tmp), env) as server:
            root = psutil.Process(server.process.pid)
            await asyncio.sleep(args.settle_s)
            idle = server_rss_mb(root)
            waves = [await reader_wave(args, server.base_url, root, server.port) for _ in range(args.waves)]
    files = waves[0]["files"]
    app_scripts = [file for file in files if file.startswith("/assets/") and file.endswith(".js")]
    print(
        f"\nReaders, {date.today()}, {platform.node()} ({os.cpu_count()} cores), {args.workers} worker(s); "
        f"backend idle {idle:.0f} MB"
    )
    print(
        f"{args.waves} wave(s) of {args.visitors} readers of {args.reader_path} arriving over {args.spread_s:g} s, "
        f"each fetching the page and its {len(files)} files ({', '.join(files)})"
    )
    print(f"  app scripts referenced: {len(app_scripts)} (a page that referenced one would open a websocket)")
    failed = bool(app_scripts)
    for number, wave in enumerate(waves, start=1):
        before, peak, after = wave["memory"]
        print(f"wave {number}:")
        if wave["latencies"]:
            lat = wave["latencies"]
            print(
                f"  full load: p50 {percentile(lat, 50) * 1000:.0f} ms, p95 {percentile(lat, 95) * 1000:.0f} ms, "
                f"p99 {percentile(lat, 99) * 1000:.0f} ms; {len(lat)} readers in {wave['window_s']:.1f} s; "
                f"{statistics.mean(wave['bytes']) / 1024:.1f} KB per reader (gzip)"
            )
        print(
            f"  CPU: server {wave['server_cpu_s'] * 1000 / args.visitors:.1f} ms per reader, "
            f"this load generator {wave['client_cpu_s'] * 1000 / args.visitors:.1f} ms per reader"
        )
        print(f"  connections the server holds once they have read: {wave['held']}")
        print(f"  backend memory: before {before:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB")
        print(f"  errors: {len(wave['errors'])}")
        for error, count in Counter(wave["errors"]).most_common(5):
            print(f"    {count} x {error}")
        failed = failed or bool(wave["errors"]) or wave["held"] > 0
    return 1 if failed else 0


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


async def wave(args: argparse.Namespace, base_url: str, root: psutil.Process) -> tuple[Run, dict[str, float]]:
    """One wave of visitors: connect all, submit all, leave all."""
    run = Run(args.visitors, args.spread_s)
    connected, go, done = asyncio.Event(), asyncio.Event(), asyncio.Event()
    ready_count = [0]
    gate = asyncio.Semaphore(args.connect_concurrency)
    memory = {"before": server_rss_mb(root)}
    connect_started = time.perf_counter()
    if args.submit == "plain":
        tasks = [
            asyncio.create_task(post_plainly(i, base_url, run, connected, go, ready_count, args.visitors))
            for i in range(args.visitors)
        ]
    else:
        tasks = [
            asyncio.create_task(visit(i, base_url, run, connected, go, done, gate, ready_count, args.visitors))
            for i in range(args.visitors)
        ]
    await connected.wait()
    memory["connect_s"] = time.perf_counter() - connect_started
    memory["connected"] = server_rss_mb(root)
    go.set()
    cpu_before = server_cpu_s(root)
    peak = memory["connected"]
    while len(run.latencies) + len(run.errors) < args.visitors:
        await asyncio.sleep(0.05)
        peak = max(peak, server_rss_mb(root))
    memory["peak"] = peak
    memory["cpu_ms_per_submit"] = (server_cpu_s(root) - cpu_before) * 1000 / args.visitors
    done.set()
    await asyncio.gather(*tasks)
    return run, memory


def stored_addresses(db_url: str) -> Counter[str]:
    """Each address the embedded gateway stored, with how often (subscribers and message senders)."""
    from publisher.storage import subscribers, tables

    return Counter(
        [s.email for s in subscribers.list_subscribers(db_url=db_url)]
        + [m.sender_email for m in tables.list_messages(db_url)]
    )


async def main_async(args: argparse.Namespace) -> int:
    gateway = RecordingGateway()
    gateway.delay_s = args.gateway_delay_ms / 1000
    waves: list[tuple[Run, dict[str, float]]] = []
    with ExitStack() as services, gateway, tempfile.TemporaryDirectory() as tmp:
        env = {
            "PUBLISHER_GATEWAY_URL": gateway.url,
            "REFLEX_DB_URL": f"sqlite:///{tmp}/load.db",
            # How long a departed visitor's state is kept (Reflex default: 1 hour).
            "REFLEX_REDIS_TOKEN_EXPIRATION": str(args.state_ttl_s),
            "GRANIAN_WORKERS": str(args.workers),
            "LOGLEVEL": "warning",
        }
        redis_url = args.redis_url
        if redis_url == "start":
            redis = RedisServer(Path(tmp))
            services.callback(redis.stop)
            redis_url = redis.url
        if redis_url:
            env["REFLEX_REDIS_URL"] = redis_url
        if args.postgres:
            # The embedded gateway stores into a PostgreSQL of its own: what is stored is counted there.
            postgres = PostgresServer()
            services.callback(postgres.close)
            env["REFLEX_DB_URL"] = postgres.url(postgres.migrated_database())
            env["PUBLISHER_GATEWAY_URL"] = ""
        with running_server(Path(tmp), env) as server:
            root = psutil.Process(server.process.pid)
            idle_mb = server_rss_mb(root)
            for _ in range(args.waves):
                waves.append(await wave(args, server.base_url, root))
                # Let the departed visitors' states expire before the next wave (or the end).
                await asyncio.sleep(args.state_ttl_s + args.settle_s)
                waves[-1][1]["after"] = server_rss_mb(root)
        if args.postgres:
            received = stored_addresses(env["REFLEX_DB_URL"])
        else:
            received = Counter(
                body.get("email") or body["sender"]["email"]
                for body in (json.loads(r["body"]) for r in gateway.requests)
            )

    print(
        f"\nLoad, {date.today()}, {platform.node()} ({os.cpu_count()} cores), "
        f"{args.workers} worker(s){', Redis' if args.redis_url else ', in-memory state'}, "
        f"{'plain HTML POSTs, no app' if args.submit == 'plain' else 'submits through the app'}"
        f"{', embedded gateway on PostgreSQL' if args.postgres else ''}"
    )
    contact_visitors = args.visitors // 2
    print(
        f"{args.waves} wave(s) of {args.visitors} visitors ({args.visitors - contact_visitors} subscribe, "
        f"{contact_visitors} contact), "
        f"{'stored by the embedded gateway' if args.postgres else f'gateway delay {args.gateway_delay_ms} ms'}, "
        f"submits spread over {args.spread_s:g} s; backend idle {idle_mb:.0f} MB"
    )
    failed = False
    for number, (run, memory) in enumerate(waves, start=1):
        opened = "load the form pages" if args.submit == "plain" else "connect + hydrate all"
        print(f"wave {number}: {opened} {memory['connect_s']:.1f} s")
        if run.latencies:
            print(
                f"  submit latency: p50 {percentile(run.latencies, 50) * 1000:.0f} ms, "
                f"p95 {percentile(run.latencies, 95) * 1000:.0f} ms, "
                f"p99 {percentile(run.latencies, 99) * 1000:.0f} ms, max {max(run.latencies) * 1000:.0f} ms"
            )
            window = max(end for _, end in run.spans) - min(start for start, _ in run.spans)
            ends = sorted(end for _, end in run.spans)
            busiest = max(sum(1 for e in ends[i:] if e - start < 1.0) for i, start in enumerate(ends))
            print(
                f"  throughput: {len(run.spans) / window:.0f} submissions/s on average ({len(run.spans)} in "
                f"{window:.2f} s, paced by the spread and the 5 s fill time); busiest second: {busiest} answered"
            )
            print(f"  server CPU: {memory['cpu_ms_per_submit']:.1f} ms per submit (every worker, the submits' span)")
        print(
            f"  backend memory: before {memory['before']:.0f} MB, all connected {memory['connected']:.0f} MB "
            f"({(memory['connected'] - memory['before']) * 1024 / args.visitors:.0f} KB per visitor), "
            f"peak {memory['peak']:.0f} MB, after the visitors left and their states expired "
            f"({args.state_ttl_s} s) {memory['after']:.0f} MB"
        )
        print(f"  outcomes {dict(run.outcomes)}, visitor errors {len(run.errors)}")
        for error, count in Counter(run.errors).most_common(5):
            print(f"    {count} x {error}")
        failed = failed or bool(run.errors)
    accepted = sum(run.outcomes.get("success", 0) for run, _ in waves)
    duplicates = sum(n - 1 for n in received.values() if n > 1)
    lost = accepted - len(received)
    where = "stored in PostgreSQL" if args.postgres else "received by the gateway"
    print(
        f"accepted by the site: {accepted}; {where}: {sum(received.values())} "
        f"({len(received)} distinct); lost: {max(lost, 0)}, duplicated: {duplicates}"
    )
    return 0 if lost == 0 and duplicates == 0 and not failed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario",
        choices=("forms", "readers"),
        default="forms",
        help="forms: visitors submit both forms; readers: visitors read a static page",
    )
    parser.add_argument("--reader-path", default="/", help="the page readers load (readers scenario)")
    parser.add_argument(
        "--submit",
        choices=("app", "plain"),
        default="app",
        help="app: the forms through the app's event channel; plain: HTML POSTs the server answers alone",
    )
    parser.add_argument("--visitors", type=int, default=500)
    parser.add_argument("--gateway-delay-ms", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--redis-url", default="", help="Redis for visitor state; 'start' runs a redis-server for the run"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="the embedded gateway stores into a PostgreSQL started for the run (counted there)",
    )
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument(
        "--spread-s", type=float, default=2.0, help="submits start uniformly within this many seconds (0: all at once)"
    )
    parser.add_argument("--settle-s", type=float, default=3.0)
    parser.add_argument("--waves", type=int, default=2, help="waves of visitors, one after another")
    parser.add_argument(
        "--state-ttl-s",
        type=int,
        default=10,
        help="how long the server keeps a visitor's idle state (Reflex's default is 3600)",
    )
    args = parser.parse_args()
    if args.state_ttl_s <= FILL_TIME_S:
        # The state also expires while a visitor sits on the form: it must outlive the fill time.
        parser.error(f"--state-ttl-s must be longer than the {FILL_TIME_S:g} s fill time")
    if not (ROOT / ".web" / "build" / "client" / "index.html").exists():
        print("No build: run `make build` first.", file=sys.stderr)
        return 2
    if args.scenario == "readers":
        return asyncio.run(readers(args))
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
