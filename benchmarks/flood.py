"""A flood of tabs that never submit: from one address, then from many, on one worker and on two with Redis.

Starts publisher-serve (the existing build, the default tab limits unless set in
the environment) and, like the attacker of issue 22, opens --tabs tabs of
/contact-us as fast as it can:

1. all from one address (127.0.0.2);
2. spread over many addresses (127.0.x.y, at most the per-address limit each),
   which only the per-worker cap (PUBLISHER_MAX_TABS) stops.

For each it prints the tabs accepted and refused, the server's memory (all its
processes' RSS; with Redis also Redis's used memory and keys) before, with the
tabs open, and after they closed, and how long memory took to come back near
its baseline (the closed tabs' states are kept tabs.CLOSED_TAB_KEEP_S).
The KB per open tab it prints is what PUBLISHER_MAX_TABS's default is derived from.

    .venv/bin/python benchmarks/flood.py [--tabs 2500] [--only one-worker|redis] [--wait-s 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import date
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import server_rss_mb

from publisher.config import settings
from publisher.limits import tabs
from tests.support import RecordingGateway, RedisServer, running_server
from tests.visitor import Visitor, hydrated

NEAR_BASELINE_MB = 20  # "back": within this of the memory before the flood


class Flood:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.open: list[Visitor] = []
        self.refused = 0

    async def one(self, source: str) -> None:
        tab = Visitor(self.base_url, "/contact-us", source=source)
        try:
            await tab.open_page(hydrated, timeout_s=60)
        except Exception:  # noqa: BLE001 - refused at the door (or timed out): counted, not raised
            self.refused += 1
            await tab.close()
            return
        self.open.append(tab)

    async def run(self, sources: list[str], at_once: int = 100) -> float:
        gate = asyncio.Semaphore(at_once)

        async def limited(source: str) -> None:
            async with gate:
                await self.one(source)

        started = time.perf_counter()
        await asyncio.gather(*(limited(source) for source in sources))
        return time.perf_counter() - started

    async def close(self) -> None:
        await asyncio.gather(*(tab.close() for tab in self.open))


def redis_memory(redis: RedisServer | None) -> str:
    if redis is None:
        return ""
    info = subprocess.run(["redis-cli", "-p", str(redis.port), "info", "memory"], capture_output=True, text=True)
    used = next(line for line in info.stdout.splitlines() if line.startswith("used_memory:"))
    keys = subprocess.run(["redis-cli", "-p", str(redis.port), "dbsize"], capture_output=True, text=True)
    return f", Redis {int(used.split(':')[1]) / 2**20:.1f} MB in {keys.stdout.strip()} keys"


def many_addresses(count: int, per_address: int) -> list[str]:
    return [f"127.0.{1 + n // per_address // 250}.{n // per_address % 250 + 2}" for n in range(count)]


async def flood(label: str, base_url: str, root: psutil.Process, redis, sources: list[str], wait_s: float) -> None:
    before = server_rss_mb(root)
    before_redis = redis_memory(redis)
    opened = Flood(base_url)
    took = await opened.run(sources)
    during = server_rss_mb(root)
    during_redis = redis_memory(redis)
    accepted = len(opened.open)
    per_tab_kb = (during - before) * 1024 / accepted if accepted else 0
    await opened.close()
    closed_at = time.perf_counter()
    after, back_in = server_rss_mb(root), None
    while time.perf_counter() - closed_at < wait_s:
        after = server_rss_mb(root)
        if after - before <= NEAR_BASELINE_MB and back_in is None:
            back_in = time.perf_counter() - closed_at
            if redis is None or time.perf_counter() - closed_at > tabs.CLOSED_TAB_KEEP_S + 5:
                break
        await asyncio.sleep(2)
    print(
        f"{label}: {len(sources)} tabs in {took:.1f} s: {accepted} accepted, {opened.refused} refused\n"
        f"  memory before {before:.0f} MB{before_redis}\n"
        f"  with the tabs open {during:.0f} MB ({per_tab_kb:.0f} KB per accepted tab){during_redis}\n"
        f"  after they closed {after:.0f} MB{redis_memory(redis)}, "
        + (
            f"back within {NEAR_BASELINE_MB} MB of before in {back_in:.0f} s"
            if back_in is not None
            else f"not back within {NEAR_BASELINE_MB} MB of before after {wait_s:.0f} s"
        ),
        flush=True,
    )


async def main_async(args: argparse.Namespace) -> None:
    limits = settings.current().tabs
    print(
        f"Flood, {date.today()}, {platform.node()} ({os.cpu_count()} cores); limits: "
        f"{limits.per_address} open tabs per address, {limits.new_per_minute} new a minute, "
        f"{limits.per_worker} per worker; a closed tab that never submitted is kept {tabs.CLOSED_TAB_KEEP_S} s"
    )
    for setup in ("one-worker", "redis"):
        if args.only not in (None, setup):
            continue
        with ExitStack() as stack, RecordingGateway() as gateway, tempfile.TemporaryDirectory() as tmp:
            env = {"PUBLISHER_GATEWAY_URL": gateway.url, "REFLEX_DB_URL": f"sqlite:///{tmp}/flood.db"}
            # The benchmark's own settings, not the test servers' raised ones.
            env |= {
                name: os.environ.get(name, "")
                for name in ("PUBLISHER_MAX_TABS_PER_ADDRESS", "PUBLISHER_NEW_TABS_PER_MINUTE", "PUBLISHER_MAX_TABS")
            }
            redis = None
            if setup == "redis":
                redis = RedisServer(Path(tmp))
                stack.callback(redis.stop)
                env |= {"REFLEX_REDIS_URL": redis.url, "GRANIAN_WORKERS": "2"}
            with running_server(Path(tmp), env) as server:
                root = psutil.Process(server.process.pid)
                base_url = f"http://127.0.0.1:{server.port}"
                label = (
                    "one worker, states in memory (and files)"
                    if setup == "one-worker"
                    else "two workers, states in Redis"
                )
                await flood(f"{label}, one address", base_url, root, redis, ["127.0.0.2"] * args.tabs, args.wait_s)
                sources = many_addresses(args.tabs, limits.per_address)
                await flood(f"{label}, {len(set(sources))} addresses", base_url, root, redis, sources, args.wait_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=2500)
    parser.add_argument("--only", choices=("one-worker", "redis"))
    parser.add_argument("--wait-s", type=float, default=300)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
