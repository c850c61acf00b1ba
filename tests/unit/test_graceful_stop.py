"""The clean stop: submits in flight finish, new ones send nothing, the stop is bounded."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from publisher import reflex_internals
from publisher.web import submissions
from tests.unit.test_form_states import Gateway, recording_gateway
from tests.unit.test_tabs import wait_for


@pytest.fixture(autouse=True)
def gw(monkeypatch) -> Iterator[Gateway]:
    async def answer_after_call(recorder: Gateway, request: httpx.Request) -> httpx.Response:
        await recorder.call()
        return httpx.Response(200, json={})

    monkeypatch.setattr(Gateway, "handle", answer_after_call)
    submissions.worker_stop.set(None)
    with recording_gateway() as recorder:
        yield recorder
    submissions.worker_stop.set(None)


class Stop:
    """Stands in for Granian's worker stop; records when it was called, and each call in ``events``."""

    def __init__(self, events: list[str] | None = None) -> None:
        self.called_at: float | None = None
        self.called = asyncio.Event()
        self.events = events if events is not None else []

    def __call__(self) -> None:
        self.called_at = time.monotonic()
        self.events.append("stopped")
        self.called.set()


def test_nothing_in_flight_stops_at_once():
    stop = Stop()
    # One step of the coroutine: it stops without ever waiting (a wait would suspend it here).
    with pytest.raises(StopIteration):
        submissions.drain(stop).send(None)
    assert stop.events == ["stopped"]


@pytest.mark.asyncio
async def test_a_call_still_running_at_the_limit_is_cancelled_and_the_stop_follows(monkeypatch, gw):
    stop = Stop()
    outcome: list[str] = []
    gw.call = asyncio.Event().wait

    async def submit():
        async with submissions.submit_in_flight():
            if not await submissions.send("subscribe", {}):
                outcome.append("failure toast")

    visitor = asyncio.create_task(submit())
    await wait_for(lambda: len(submissions.worker_stop.get().gateway_calls) == 1)
    # A settling time no busy machine reaches: stopping once the cancelled submit ended, not after it.
    monkeypatch.setattr(submissions, "_SETTLE_S", 60.0)
    started = time.monotonic()
    await submissions.drain(stop, limit_s=0.3)
    await asyncio.wait_for(visitor, 30)  # its call was cancelled: it ends
    assert outcome == ["failure toast"]
    assert 0.3 <= stop.called_at - started < 30  # cancelled at the limit, not before; stopped without waiting more


@pytest.mark.asyncio
async def test_cancelling_the_submit_cancels_its_gateway_call(gw):
    call_started = asyncio.Event()
    call_cancelled = asyncio.Event()

    async def slow_gateway():
        call_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            call_cancelled.set()
            raise

    gw.call = slow_gateway
    submit = asyncio.create_task(submissions.send("subscribe", {}))
    await asyncio.wait_for(call_started.wait(), 10)
    submit.cancel()
    with pytest.raises(asyncio.CancelledError):
        await submit
    await asyncio.wait_for(call_cancelled.wait(), 10)


@pytest.mark.asyncio
async def test_sigterm_waits_for_the_submits_in_flight_then_stops_and_a_second_signal_changes_nothing(gw, caplog):
    loop = asyncio.get_running_loop()
    events: list[str] = []
    stop = Stop(events)
    answer = asyncio.Event()
    gw.call = answer.wait
    handled = asyncio.Event()

    async def submit():
        async with submissions.submit_in_flight():
            assert await submissions.send("subscribe", {}) is True
            events.append("result shown")

    caplog.set_level(logging.INFO, logger=submissions.__name__)
    submissions.handle_stop_signals(loop, stop)
    # Signals reach the loop's handlers in the order they were sent: once this one has run, so has SIGINT's.
    loop.add_signal_handler(signal.SIGUSR1, handled.set)
    try:
        visitor = asyncio.create_task(submit())
        await wait_for(lambda: len(submissions.worker_stop.get().gateway_calls) == 1)
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_for(lambda: submissions.worker_stop.get().stopping)
        os.kill(os.getpid(), signal.SIGINT)  # e.g. Granian's supervisor forwarding the stop
        os.kill(os.getpid(), signal.SIGUSR1)
        await asyncio.wait_for(handled.wait(), 10)
        await wait_for(lambda: "waiting for 1 submit(s) in flight" in caplog.text)
        assert not stop.called.is_set()  # still waiting for the gateway
        answer.set()
        await asyncio.wait_for(stop.called.wait(), 10)
        await visitor
        # Every drain has ended: a second one (started by SIGINT) would have stopped a second time.
        await asyncio.gather(*(task for task in asyncio.all_tasks() if task.get_coro().__name__ == "drain"))
        assert events == ["result shown", "stopped"]  # the stop came after the result, not before
        assert submissions.worker_stop.get().submits_in_flight == 0
    finally:
        for sig in (*submissions.STOP_SIGNALS, signal.SIGUSR1):
            loop.remove_signal_handler(sig)


def test_granian_workers_get_the_draining_handlers(monkeypatch):
    from granian import _signals

    monkeypatch.setattr(_signals, "set_loop_signals", _signals.set_loop_signals)
    reflex_internals.wrap_worker_signals(submissions.handle_stop_signals)
    reflex_internals.wrap_worker_signals(submissions.handle_stop_signals)  # once is enough; twice changes nothing
    assert _signals.set_loop_signals.publisher_graceful_stop

    drained_with = []

    async def recording_drain(stop, limit_s=submissions.STOP_LIMIT_S):
        drained_with.append(stop)

    monkeypatch.setattr(submissions, "drain", recording_drain)
    loop = asyncio.new_event_loop()
    try:
        worker_signal = _signals.set_loop_signals(loop)  # what a Granian worker calls at start

        async def signalled():
            os.kill(os.getpid(), signal.SIGTERM)
            await wait_for(lambda: drained_with)

        loop.run_until_complete(signalled())
        # The drain ends with Granian's own worker stop, not the immediate one.
        assert drained_with == [worker_signal.set]
        assert submissions.worker_stop.get().stopping
    finally:
        for sig in submissions.STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        loop.close()


def test_the_stop_limit_is_docs_8_seconds_and_a_stop_at_it_ends_inside_the_runtimes_10():
    """docs/deploying.md's figures (the container stage shows the stop happens at the limit, by itself)."""
    deploying = (Path(__file__).resolve().parents[2] / "docs" / "deploying.md").read_text(encoding="utf-8")
    assert re.search(r"8 s after the signal \(`STOP_LIMIT_S`\)", deploying)
    assert re.search(r"inside the 10 s that Docker and podman wait", " ".join(deploying.split()))
    assert submissions.STOP_LIMIT_S == 8
    # The limit, a cancelled submit's failure toast, about a second to shut down: before the SIGKILL.
    assert submissions.STOP_LIMIT_S + submissions._SETTLE_S + 1 <= 10
