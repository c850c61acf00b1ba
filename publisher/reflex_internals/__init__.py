"""Every touch of a Reflex or Granian internal: the single place to look at the next upgrade.

Each module here says why the site needs what it touches, and what it relies on (its
``what_moved()``); ``check()`` runs when the app starts (publisher.py) and stops it, naming
what moved, if an upgrade took any of it away. The files of ``frontend_files`` are checked by
the build: each of its rewrites of a file Reflex generates under ``.web`` raises when the text
it replaces changed, since only a build has those files.
"""

from __future__ import annotations

from publisher.reflex_internals import (
    component_needs,
    frontend_files,
    granian_signals,
    no_cors,
    state_managers,
    stored_state,
)


class ReflexInternalsMoved(RuntimeError):
    """A Reflex or Granian upgrade moved an internal the site relies on."""


def check() -> None:
    """Raise ReflexInternalsMoved, naming each internal that moved; nothing when all are there."""
    moved = [
        *state_managers.what_moved(),
        *stored_state.what_moved(),
        *granian_signals.what_moved(),
        *component_needs.what_moved(),
        *no_cors.what_moved(),
        *frontend_files.what_moved(),
    ]
    if moved:
        raise ReflexInternalsMoved(
            "publisher/reflex_internals relies on Reflex or Granian internals that this version no longer has: "
            + ", ".join(moved)
            + ". Adapt the module that names each one before upgrading."
        )
