"""The clean stop: submits in flight finish, new ones send nothing, the stop is bounded."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator

import pytest

from publisher.web import graceful_stop
from publisher.web.graceful_stop import StopLimitReached


@pytest.fixture(autouse=True)
def fresh_worker() -> Iterator[None]:
    graceful_stop.worker_stop.set(None)
    yield
    graceful_stop.worker_stop.set(None)


class Stop:
    """Stands in for Granian's worker stop; records when it was called."""

    def __init__(self) -> None:
        self.called_at: float | None = None
        self.called = asyncio.Event()

    def __call__(self) -> None:
        self.called_at = time.monotonic()
        self.called.set()


@pytest.mark.asyncio
async def test_nothing_in_flight_stops_at_once():
    stop = Stop()
    started = time.monotonic()
    await graceful_stop.drain(stop)
    assert stop.called_at is not None and stop.called_at - started < 0.1


@pytest.mark.asyncio
async def test_the_stop_waits_for_a_submit_in_flight_to_end():
    stop = Stop()
    answer = asyncio.Event()
    events: list[str] = []

    async def submit():
        async with graceful_stop.submit_in_flight():
            assert await graceful_stop.gateway_call(answer.wait()) is True
            events.append("result shown")

    visitor = asyncio.create_task(submit())
    await asyncio.sleep(0.05)
    assert graceful_stop.submits_in_flight() == 1
    draining = asyncio.create_task(graceful_stop.drain(stop, limit_s=5))
    await asyncio.sleep(0.2)
    assert not stop.called.is_set()  # still waiting for the gateway
    answer.set()
    await asyncio.wait_for(stop.called.wait(), 2)
    await visitor
    assert events == ["result shown"]
    assert graceful_stop.submits_in_flight() == 0
    await draining


@pytest.mark.asyncio
async def test_a_gateway_call_after_the_stop_began_is_never_started():
    graceful_stop.worker_stop.get().stopping = True
    started = []

    async def call():
        started.append(True)

    with pytest.raises(StopLimitReached, match="stopping"):
        await graceful_stop.gateway_call(call())
    assert started == []


@pytest.mark.asyncio
async def test_a_call_still_running_at_the_limit_is_cancelled_and_the_stop_follows():
    stop = Stop()
    outcome: list[str] = []

    async def hanging_gateway():
        await asyncio.Event().wait()

    async def submit():
        async with graceful_stop.submit_in_flight():
            try:
                await graceful_stop.gateway_call(hanging_gateway())
            except StopLimitReached:
                outcome.append("failure toast")

    visitor = asyncio.create_task(submit())
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await graceful_stop.drain(stop, limit_s=0.3)
    await visitor
    assert outcome == ["failure toast"]
    assert 0.3 <= stop.called_at - started < 1.0  # cancelled at the limit, then stopped without waiting more


@pytest.mark.asyncio
async def test_cancelling_the_submit_cancels_its_gateway_call():
    call_cancelled = asyncio.Event()

    async def slow_gateway():
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            call_cancelled.set()
            raise

    submit = asyncio.create_task(graceful_stop.gateway_call(slow_gateway()))
    await asyncio.sleep(0.05)
    submit.cancel()
    with pytest.raises(asyncio.CancelledError):
        await submit
    await asyncio.wait_for(call_cancelled.wait(), 1)


@pytest.mark.asyncio
async def test_sigterm_drains_then_stops_and_a_second_signal_changes_nothing():
    loop = asyncio.get_running_loop()
    stop = Stop()
    answer = asyncio.Event()

    async def submit():
        async with graceful_stop.submit_in_flight():
            await graceful_stop.gateway_call(answer.wait())

    graceful_stop.handle_stop_signals(loop, stop)
    try:
        visitor = asyncio.create_task(submit())
        await asyncio.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.1)
        assert graceful_stop.stopping()
        os.kill(os.getpid(), signal.SIGINT)  # e.g. Granian's supervisor forwarding the stop
        await asyncio.sleep(0.1)
        assert not stop.called.is_set()
        answer.set()
        await asyncio.wait_for(stop.called.wait(), 2)
        await visitor
    finally:
        for sig in graceful_stop.STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def test_granian_workers_get_the_draining_handlers(monkeypatch):
    from granian import _signals

    monkeypatch.setattr(_signals, "set_loop_signals", _signals.set_loop_signals)
    graceful_stop.install_in_granian_workers()
    graceful_stop.install_in_granian_workers()  # once is enough; twice changes nothing
    assert _signals.set_loop_signals.publisher_graceful_stop

    drained_with = []

    async def recording_drain(stop, limit_s=graceful_stop.STOP_LIMIT_S):
        drained_with.append(stop)

    monkeypatch.setattr(graceful_stop, "drain", recording_drain)
    loop = asyncio.new_event_loop()
    try:
        worker_signal = _signals.set_loop_signals(loop)  # what a Granian worker calls at start

        async def signalled():
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 2
            while not drained_with and time.monotonic() < deadline:
                await asyncio.sleep(0.02)

        loop.run_until_complete(signalled())
        # The drain ends with Granian's own worker stop, not the immediate one.
        assert drained_with == [worker_signal.set]
        assert graceful_stop.stopping()
    finally:
        for sig in graceful_stop.STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        loop.close()
