"""Container figures: image size and what makes it up, start time, memory, stop time.

Builds the image from the Dockerfile with podman (``scripts/podman``; the stand-in
base image is bootstrapped when missing) unless ``--no-build``, then starts a
container of it ``--runs`` times (host network, a free port of 127.0.0.1, a fresh
volume, the embedded gateway) and prints:

- the image's size, its base image's size, and the largest layers it adds;
- start: from ``podman run`` to the first answer of ``/ping``, and to ``/subscribe``;
- memory of the running container after ten simulated visitors have opened the
  contact form over the websocket (``podman stats``);
- stop: from SIGTERM to exit with those visitors still connected.

    .venv/bin/python benchmarks/container.py [--runs 3] [--no-build] [--image localhost/publisher:bench]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.containers import Container, Volume, build_image, engine_problem, image_config, podman  # noqa: E402
from tests.visitor import Visitor, hydrated  # noqa: E402

VISITORS = 10
BASE_IMAGE = "docker.io/library/python:3.11-slim"


def megabytes(size: float) -> str:
    return f"{size / 1e6:.0f} MB"


def layers(image: str) -> list[tuple[int, str]]:
    history = json.loads(podman("history", "--format", "json", image).stdout)
    return [(entry.get("size", 0), entry.get("CreatedBy", entry.get("created_by", ""))) for entry in history]


def memory_bytes(container: Container) -> float | None:
    stats = podman("stats", "--no-stream", "--format", "json", container.name, check=False)
    if stats.returncode != 0:
        return None
    entry = json.loads(stats.stdout)[0]
    usage = entry.get("mem_usage") or entry.get("MemUsage") or ""
    used = usage.split("/")[0].strip()
    units = {"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "B": 1}
    for unit, factor in units.items():
        if used.endswith(unit):
            return float(used[: -len(unit)]) * factor
    return None


async def measure(container: Container) -> dict[str, float | None]:
    """Start, fill the form with visitors, read the memory, stop with them connected."""
    started = time.monotonic()
    container.start()
    ready_s = time.monotonic() - started
    httpx.get(f"{container.base_url}/subscribe", timeout=10).raise_for_status()
    page_s = time.monotonic() - started

    visitors = [Visitor(container.base_url, "/contact-us") for _ in range(VISITORS)]
    for visitor in visitors:
        await visitor.open_page(hydrated)  # connects and hydrates, as a page load does
    memory = memory_bytes(container)
    sent_at = container.send_sigterm()
    exit_code = await asyncio.to_thread(container.wait_exit)
    stop_s = time.monotonic() - sent_at
    await asyncio.gather(*(visitor.close() for visitor in visitors), return_exceptions=True)
    if exit_code != 0:
        raise RuntimeError(f"exit code {exit_code}; logs:\n{container.logs()[-2000:]}")
    return {"ready_s": ready_s, "page_s": page_s, "memory": memory, "stop_s": stop_s}


def one_run(image: str) -> dict[str, float | None]:
    volume = Volume()
    container = Container(image, volume=volume)
    try:
        return asyncio.run(measure(container))
    finally:
        container.remove()
        volume.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image", default="localhost/publisher:bench")
    parser.add_argument("--no-build", action="store_true", help="use the existing --image")
    args = parser.parse_args()
    problem = engine_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2

    if not args.no_build:
        with tempfile.TemporaryDirectory() as workdir:
            seconds = build_image(args.image, Path(workdir) / "build.log")
        print(f"built {args.image} in {seconds:.0f} s")
    config = image_config(args.image)
    base = image_config(BASE_IMAGE)
    print(f"\n{date.today()}, {platform.node()}, {platform.processor() or platform.machine()}")
    print(
        f"image {args.image}: {megabytes(config['Size'])} "
        f"(base python:3.11-slim here: {megabytes(base['Size'])}, added: {megabytes(config['Size'] - base['Size'])})"
    )
    own_layers = layers(args.image)[: -len(layers(BASE_IMAGE))]  # newest first; the base's come last
    for size, created_by in sorted(own_layers, reverse=True)[:5]:
        print(f"  {megabytes(size):>7}  {created_by[:90]}")

    runs = [one_run(args.image) for _ in range(args.runs)]

    def median(key: str) -> str:
        values = [run[key] for run in runs if run[key] is not None]
        return f"{statistics.median(values):.2f}" if values else "n/a"

    memories = [run["memory"] for run in runs if run["memory"] is not None]
    print(f"\n{args.runs} runs, medians:")
    print(f"  start to /ping answering:        {median('ready_s')} s")
    print(f"  start to /subscribe served:      {median('page_s')} s")
    print(
        f"  memory with {VISITORS} visitors on the form: "
        f"{megabytes(statistics.median(memories)) if memories else 'n/a (podman stats unavailable)'}"
    )
    print(f"  SIGTERM to exit, visitors connected: {median('stop_s')} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
