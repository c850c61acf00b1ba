"""Every touch of a Reflex or Granian internal: the single place to look at the next upgrade.

Each module here says why the site needs what it touches, and what it relies on;
``check()`` runs when the app starts (publisher.py) and stops it, naming what moved,
if an upgrade took any of it away:

- ``state_managers``: a closed tab's state let go early (private attributes of
  Reflex's disk, memory and Redis state managers);
- ``stored_state``: what a tab's stored state holds (no secret header of the connection, no
  field a page keeps for its open tab only), through ``BaseState.__getstate__`` and Reflex's
  router data, and the states folder kept private;
- ``granian_signals``: a worker's SIGTERM drains submits first (Granian's private
  ``_signals`` module);
- ``frontend_files``: the files Reflex generates under ``.web`` that the build rewrites
  (``utils/state.js``, ``vite.config.js``, ``react-router.config.js``): checked when
  the build rewrites them, since only a build has them;
- ``component_needs``: what a page's components need at run time, read from Reflex's
  component internals (web/page_kinds.py decides from it which pages start the app).
"""

from __future__ import annotations

from publisher.reflex_internals import component_needs, granian_signals, state_managers, stored_state


class ReflexInternalsMoved(RuntimeError):
    """A Reflex or Granian upgrade moved an internal the site relies on."""


def check() -> None:
    """Raise ReflexInternalsMoved, naming each internal that moved; nothing when all are there."""
    moved = [
        *state_managers.what_moved(),
        *stored_state.what_moved(),
        *granian_signals.what_moved(),
        *component_needs.what_moved(),
    ]
    if moved:
        raise ReflexInternalsMoved(
            "publisher/reflex_internals relies on Reflex or Granian internals that this version no longer has: "
            + ", ".join(moved)
            + ". Adapt the module that names each one before upgrading."
        )
