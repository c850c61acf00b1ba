"""Every touch of a Reflex or Granian internal: the place to look at the next upgrade. ``check()`` runs
at start-up and names what moved; the rewrites of ``.web``'s files are checked by the build."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from granian import _signals
from starlette.applications import Starlette

from publisher.reflex_internals import component_needs, frontend_files, state_managers, stored_state

_MARK = "publisher_graceful_stop"


class ReflexInternalsMoved(RuntimeError):
    pass


def check() -> None:
    moved = [
        *state_managers.what_moved(),
        *stored_state.what_moved(),
        *component_needs.what_moved(),
        *frontend_files.what_moved(),
        *([] if callable(getattr(_signals, "set_loop_signals", None)) else ["granian._signals.set_loop_signals"]),
        *_cors_moved(),
    ]
    if moved:
        raise ReflexInternalsMoved(
            "publisher/reflex_internals relies on Reflex or Granian internals that this version no longer has: "
            + ", ".join(moved)
            + ". Adapt the module that names each one before upgrading."
        )


def wrap_worker_signals(on_worker_loop: Callable[[asyncio.AbstractEventLoop, Callable[[], None]], None]) -> None:
    """Call ``on_worker_loop(loop, stop)`` in every Granian worker started from now on (once), so a worker's
    submits in flight finish before Granian's own signal stops it (web/submissions.py)."""
    granian_set_loop_signals = _signals.set_loop_signals
    if getattr(granian_set_loop_signals, _MARK, False):
        return

    def set_loop_signals(loop):
        worker_signal = granian_set_loop_signals(loop)
        on_worker_loop(loop, worker_signal.set)
        return worker_signal

    setattr(set_loop_signals, _MARK, True)
    _signals.set_loop_signals = set_loop_signals


def _no_cors(api: Starlette) -> None:
    pass


def _reflex_app() -> Any:
    # Here, not at the top: reflex.app would add 0.4 s to every command that reads rxconfig.py.
    from reflex.app import App  # noqa: PLC0415

    return App


def install_no_cors() -> None:
    """Reflex's CORS middleware (``App._add_cors``, no setting turns it off) allows every origin with
    credentials; the site needs none: its pages call their own origin, the channel's door checks its own."""
    _reflex_app()._add_cors = staticmethod(_no_cors)


def _cors_moved() -> list[str]:
    app = _reflex_app()
    present = isinstance(inspect.getattr_static(app, "_add_cors", None), staticmethod)
    called = all("_add_cors" in caller.__code__.co_names for caller in (app.__post_init__, app.__call__))
    return [] if present and called else ["reflex.app.App._add_cors (called by App.__post_init__ and App.__call__)"]
