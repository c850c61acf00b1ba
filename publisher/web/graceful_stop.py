"""A clean stop: on SIGTERM the submits in flight finish before the server closes.

Granian closes every websocket the moment a worker is told to stop, so a submit
waiting on the gateway would never reach the visitor's page (its button would stay
"Sending..."). ``publisher-serve`` therefore makes each worker take SIGTERM (and
SIGINT) itself:

1. The worker is *stopping*: a submit that reaches the gateway call now sends
   nothing and ends with the form's failure toast, so the visitor can retry on the
   next server.
2. The submits already in flight finish, and their result reaches the page over
   the still-open websocket.
3. Then the worker stops as Granian would have (websockets closed, state flushed).

A gateway call still running ``STOP_LIMIT_S`` after the signal is cancelled and
its submit ends with the failure toast, so a stop takes at most about that long
(inside the 10 s Docker and podman wait before they kill), and well under a
second when nothing is in flight. Each worker counts its own submits: the state is
per process, nothing is shared.

Container runtimes signal only the main process; Granian then signals each worker
and waits for it. A worker that gets the signal directly (a process-group kill)
drains the same way.
"""

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
    """Await one gateway call, unless the worker is stopping or its stop limit passes first.

    Raises StopLimitReached in both cases; nothing is sent in the first.
    """
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
    """Have every Granian worker forked from this process stop through ``handle_stop_signals``
    (reflex_internals/granian_signals.py wraps Granian's own wiring of a worker's signals)."""
    granian_signals.wrap_worker_signals(handle_stop_signals)
