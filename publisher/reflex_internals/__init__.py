"""Every touch of a Reflex or Granian internal: the single place to look at the next upgrade.
``check()`` runs at start-up (publisher.py) and names what moved; the rewrites of ``.web``'s
files are checked by the build, which alone has those files."""

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
