"""A clean stop: Granian closes every websocket the moment a worker is told to stop, so on SIGTERM a
worker sends nothing new, lets its submits in flight finish and reach their page, and cancels a
gateway call still running after ``STOP_LIMIT_S`` (inside Docker's 10 s wait before it kills)."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from publisher.per_process import PerProcess
from publisher.reflex_internals import granian_signals

logger = logging.getLogger(__name__)

STOP_LIMIT_S = 8.0
# After the limit, the time a cancelled submit gets to show its failure toast.
_SETTLE_S = 1.0
_POLL_S = 0.05
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopLimitReached(Exception):
    """The server stopped waiting for this gateway call."""


class WorkerStop:
    """This process's submits in flight and whether it is stopping."""

    def __init__(self) -> None:
        self.submits_in_flight = 0
        self.stopping = False
        self.gateway_calls: set[asyncio.Task[Any]] = set()


# Tests start afresh with ``worker_stop.set(None)``.
worker_stop: PerProcess[WorkerStop] = PerProcess(WorkerStop)


def stopping() -> bool:
    return worker_stop.get().stopping


def submits_in_flight() -> int:
    return worker_stop.get().submits_in_flight


@asynccontextmanager
async def submit_in_flight() -> AsyncIterator[None]:
    """Hold the worker's stop until this submit has ended and its result was sent."""
    worker = worker_stop.get()
    worker.submits_in_flight += 1
    try:
        yield
    finally:
        worker.submits_in_flight -= 1


async def gateway_call(call: Awaitable[Any]) -> Any:
    """Await one gateway call, unless the worker is stopping (nothing sent) or its stop limit passes
    first: StopLimitReached in both cases."""
    if stopping():
        if asyncio.iscoroutine(call):
            call.close()  # never started: nothing was sent
        raise StopLimitReached("the server is stopping")
    task = asyncio.ensure_future(call)
    calls = worker_stop.get().gateway_calls
    calls.add(task)
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()  # the submit itself was cancelled: take its call with it
        raise
    finally:
        calls.discard(task)
    if task.cancelled():
        raise StopLimitReached(f"no answer within the {STOP_LIMIT_S:g} s stop limit")
    return task.result()


async def drain(stop: Callable[[], None], limit_s: float = STOP_LIMIT_S) -> None:
    """Wait for the submits in flight (cancelling their gateway calls at ``limit_s``), then ``stop``."""
    worker = worker_stop.get()
    started = time.monotonic()
    waiting = worker.submits_in_flight
    if waiting:
        logger.info("Stopping: waiting for %d submit(s) in flight (at most %g s)", waiting, limit_s)
    cancelled = False
    while worker.submits_in_flight:
        elapsed = time.monotonic() - started
        if not cancelled and elapsed >= limit_s:
            cancelled = True
            for task in list(worker.gateway_calls):
                task.cancel()
            logger.warning("Stopping: cancelled %d gateway call(s) after %g s", len(worker.gateway_calls), limit_s)
        if elapsed >= limit_s + _SETTLE_S:
            break
        await asyncio.sleep(_POLL_S)
    if waiting:
        logger.info(
            "Stopping after %.2f s; %d submit(s) still in flight",
            time.monotonic() - started,
            worker.submits_in_flight,
        )
    stop()


def handle_stop_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
    """Make SIGTERM/SIGINT drain this worker's submits before ``stop`` (Granian's own stop)."""

    def on_signal() -> None:
        if stopping():
            return  # already draining; the drain is bounded
        worker_stop.get().stopping = True
        loop.create_task(drain(stop))

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal)


def install_in_granian_workers() -> None:
    """Have every Granian worker forked from this process stop through ``handle_stop_signals``."""
    granian_signals.wrap_worker_signals(handle_stop_signals)
