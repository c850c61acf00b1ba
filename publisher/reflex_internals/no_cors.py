"""Reflex's CORS middleware (``App._add_cors``, no setting turns it off) allows every origin with
credentials; the site needs none: its pages call their own origin, and the event channel's door
checks the websocket's Origin (server/event_channel.py). ``what_moved()`` runs at start-up."""

from __future__ import annotations

import inspect
from typing import Any

from starlette.applications import Starlette


def _no_cors(api: Starlette) -> None:
    """Reflex's ``App._add_cors``, adding nothing."""


def _reflex_app() -> Any:
    # Only where the app is made: rxconfig.py loads this package through the build plugin, and
    # reflex.app would add 0.4 s to every command that reads the configuration.
    from reflex.app import App  # noqa: PLC0415

    return App


def install() -> None:
    """Before the app is made: Reflex wraps it in no CORS middleware."""
    _reflex_app()._add_cors = staticmethod(_no_cors)


def what_moved() -> list[str]:
    """The internals this module relies on that this Reflex no longer has: the method, and its two callers."""
    app = _reflex_app()
    present = isinstance(inspect.getattr_static(app, "_add_cors", None), staticmethod)
    called = all("_add_cors" in caller.__code__.co_names for caller in (app.__post_init__, app.__call__))
    return [] if present and called else ["reflex.app.App._add_cors (called by App.__post_init__ and App.__call__)"]
