"""Granian's worker signals (``granian._signals.set_loop_signals``), wrapped so a worker's submits
in flight finish before it stops (web/graceful_stop.py); Granian's own signal stops it after.
``what_moved()`` is run by ``reflex_internals.check()`` at start-up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from granian import _signals

_MARK = "publisher_graceful_stop"


def wrap_worker_signals(on_worker_loop: Callable[[asyncio.AbstractEventLoop, Callable[[], None]], None]) -> None:
    """Call ``on_worker_loop(loop, stop)`` in every Granian worker started from now on (once)."""
    granian_set_loop_signals = _signals.set_loop_signals
    if getattr(granian_set_loop_signals, _MARK, False):
        return

    def set_loop_signals(loop):
        worker_signal = granian_set_loop_signals(loop)
        on_worker_loop(loop, worker_signal.set)
        return worker_signal

    setattr(set_loop_signals, _MARK, True)
    _signals.set_loop_signals = set_loop_signals


def what_moved() -> list[str]:
    return [] if callable(getattr(_signals, "set_loop_signals", None)) else ["granian._signals.set_loop_signals"]
