"""What one rate-limit hit costs as the live keys grow: at 100 and at 100,000 (issue 48).

Without Redis a worker keeps every address's count in its memory, and every new address makes
a key (a flood from one /48 holds 65,536 /64s). Each store is filled with --keys live keys (one
address each), then takes hits from those addresses in turn, so the keys stay as many, each
followed by one turn of the event loop as a request gives it (the ``limits`` package sweeps
its expired keys in a task on that loop), for --hits hits or 10 s, whichever comes first.
Prints per hit the mean (any sweep included) and the p99, in microseconds:

- the site's (``limits/submits.py``): the ``limits`` package's fixed windows in its memory
  storage, swept at most once a minute, through ``Limiter.allow`` as the beacon calls it;
  and the hit a minute later that sweeps every key;
- ``limits`` as shipped: the same with the package's own memory storage, which sweeps every
  key after every hit;
- with --before REF: the hand-written counter of ``limits/submits.py`` at that git commit
  (``git show``; c532aa7 is main before issue 48), keyed as its ``Limiter`` keyed;
- in Redis (unless --no-redis; a redis-server started for the run): the site's (the ``limits``
  package's Redis storage on Reflex's client) and, with --before, REF's counter.

Each store must refuse an address's 41st hit in its window, or the run fails.

    .venv/bin/python benchmarks/rate_limits.py [--keys 100,100000] [--hits 10000] [--before c532aa7] [--no-redis]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import limits.aio.storage  # noqa: E402

from publisher.limits import submits  # noqa: E402
from publisher.rules.visitor_limits import PER_ADDRESS, address_key  # noqa: E402

Hit = Callable[[str], Awaitable[bool]]
BUDGET_S = 10.0
BEFORE = ("MemoryCounter", "RedisCounter")


def address(n: int, first: int) -> str:
    return f"{first}.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


def site_hit(storage) -> Hit:
    limiter = submits.Limiter(storage, per_address=PER_ADDRESS)
    return lambda visitor: limiter.allow("bench", "", visitor)


def before_counters(ref: str) -> dict:
    """REF's ``MemoryCounter`` and ``RedisCounter`` classes, from its ``limits/submits.py``."""
    source = subprocess.run(
        ["git", "show", f"{ref}:publisher/limits/submits.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    classes = [node for node in ast.parse(source).body if isinstance(node, ast.ClassDef) and node.name in BEFORE]
    namespace: dict = {"time": time}
    exec(compile(ast.Module(body=classes, type_ignores=[]), f"{ref}:publisher/limits/submits.py", "exec"), namespace)
    return namespace


def before_hit(counter) -> Hit:
    """REF's counter, keyed as REF's ``Limiter`` keyed an address's window."""

    async def hit(visitor: str) -> bool:
        window = int(time.time() // PER_ADDRESS.window_s)
        key = f"publisher:ratelimit:bench:address:{address_key(visitor)}:{window}"
        return await counter.hit(key, PER_ADDRESS.window_s) <= PER_ADDRESS.attempts

    return hit


async def measure(name: str, hit: Hit, keys: int, hits: int, redis=None) -> None:
    if redis is not None:
        await redis.flushdb()
    for n in range(keys):
        await hit(address(n, 10))
    for _ in range(2):  # a sweep the filling began ends
        await asyncio.sleep(0)
    times = []
    started = time.perf_counter()
    for n in range(hits):
        moment = time.perf_counter()
        await hit(address(n % keys, 10))
        await asyncio.sleep(0)  # a request's turn of the loop
        times.append(time.perf_counter() - moment)
        if moment - started > BUDGET_S:
            break
    mean = (time.perf_counter() - started) / len(times)
    p99 = sorted(times)[int(len(times) * 0.99)]
    print(
        f"{name:<26} {keys:>9,} live keys  {mean * 1e6:9.1f} µs a hit  p99 {p99 * 1e6:9.1f} µs  ({len(times):,} hits)"
    )
    verdicts = [await hit("12.0.0.1") for _ in range(PER_ADDRESS.attempts + 1)]
    if verdicts != [True] * PER_ADDRESS.attempts + [False]:
        raise SystemExit(f"{name}: {PER_ADDRESS.attempts + 1} hits of one address were not refused at the last")


async def in_process(sizes: list[int], hits: int, before: dict | None) -> None:
    warm_up = site_hit(submits.MemoryStorage())
    for n in range(2_000):  # unmeasured: a process's first hits cost more, whichever store takes them
        await warm_up(address(n, 13))
        await asyncio.sleep(0)
    minutes = [0.0]  # the site's stores' sweep clock: a minute passes when a store's hits are done
    for keys in sizes:
        hit = site_hit(submits.MemoryStorage(clock=lambda: minutes[0]))
        await measure("site, in process", hit, keys, hits)
        minutes[0] += submits.SWEEP_EVERY_S
        started = time.perf_counter()
        await hit(address(0, 10))
        await asyncio.sleep(0)  # the sweep runs
        swept_ms = (time.perf_counter() - started) * 1e3
        print(f"{'site, its sweep':<26} {keys:>9,} live keys  {swept_ms:9.1f} ms once a minute")
        await measure("limits as shipped", site_hit(limits.aio.storage.MemoryStorage()), keys, hits)
        if before is not None:
            await measure("before, in process", before_hit(before["MemoryCounter"]()), keys, hits)


async def in_redis(url: str, sizes: list[int], hits: int, before: dict | None) -> None:
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(url)
    try:
        with mock.patch.object(submits.prerequisites, "get_redis", lambda: client):
            storage = submits.configured_storage()
        for keys in sizes:
            await measure("site, Redis", site_hit(storage), keys, hits, client)
            if before is not None:
                await measure("before, Redis", before_hit(before["RedisCounter"](client)), keys, hits, client)
    finally:
        await client.aclose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", default="100,100000", help="live keys before the timed hits, comma-separated")
    parser.add_argument("--hits", type=int, default=10_000, help=f"timed hits at each size (at most {BUDGET_S:g} s)")
    parser.add_argument("--before", metavar="REF", help="also REF's hand-written counters (a git commit)")
    parser.add_argument("--no-redis", dest="redis", action="store_false", help="in process only")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.keys.split(",")]
    before = before_counters(args.before) if args.before else None
    print(
        f"Rate limits, {date.today()}, {platform.node()} ({os.cpu_count()} cores): "
        f"{PER_ADDRESS.attempts} hits per address in {PER_ADDRESS.window_s} s"
    )
    asyncio.run(in_process(sizes, args.hits, before))
    if args.redis:
        from tests.support import RedisServer

        with tempfile.TemporaryDirectory() as folder:
            server = RedisServer(Path(folder))
            try:
                asyncio.run(in_redis(server.url, sizes, args.hits, before))
            finally:
                server.stop()


if __name__ == "__main__":
    main()
