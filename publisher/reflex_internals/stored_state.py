"""What a tab's stored state holds: never a secret header, never what a page shows for its open tab only.

Reflex pickles every tab's state into ``REFLEX_STATES_WORKDIR`` (or Redis), its router data with
the headers the tab's event channel opened with: a signed-in dashboard's ``Cookie`` would be
readable by whoever reads the folder, a backup of it or Redis, and the page's own values kept for
Reflex's hour after the tab closed, out of reach of ``forget`` (docs/security.md, "What a
dashboard tab leaves behind").

So the site changes what is pickled, never what the live state holds while an event runs:

- ``install()`` wraps ``BaseState.__getstate__`` (what pickle calls for each state Reflex
  stores, on disk and in Redis alike): the stored copy of ``router_data`` and of
  ``rx_router_headers`` (``HeaderData``, with its ``cookie`` and ``raw_headers``) has no
  header of ``SECRET_HEADERS``, and a field named by ``tab_only`` is stored as its default.
  Reflex fills the router data from the connection itself at every event, so an event's
  handler still reads the cookie its tab's channel opened with; a background task reads it
  once, from the event that started it, and keeps it in a local (web/states/admin_state.py).
- ``keep_private()`` (each worker, at start): the states folder ``0700`` and its files
  ``0600``, and the worker's umask so that every file it writes from then on is ``0600``.

``what_moved()`` names what this relies on; ``reflex_internals.check()`` runs it at start-up.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from reflex.istate import data as router_types
from reflex.state import BaseState, State
from reflex_base import constants
from reflex_base.environment import environment

ROUTER_DATA = constants.ROUTER_DATA  # "router_data": the dict Reflex builds from the connection
ROUTER_HEADERS = constants.ROUTER_HEADERS  # "rx_router_headers": the HeaderData made from it
HEADERS = constants.RouteVar.HEADERS  # the router data's "headers" entry

# Headers that carry a credential, in any letter case. Reflex's own list of the headers it
# keeps from the page's script (its _PRIVATE_HEADERS) is added, so one it learns joins this.
SECRET_HEADERS = frozenset(
    {
        "cookie",
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-auth-token",
        "x-csrf-token",
        *getattr(router_types, "_PRIVATE_HEADERS", ()),
    }
)

PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600

# Per state class: the fields kept for the open tab only (``tab_only``).
_TAB_ONLY: dict[type, frozenset[str]] = {}
# Reflex's own (an app module imported again in one process finds the wrapper installed already).
_reflex_getstate: Callable[[BaseState], dict[str, Any]] = getattr(
    BaseState.__getstate__, "reflex_getstate", BaseState.__getstate__
)

StateClass = TypeVar("StateClass", bound=type)


def what_moved() -> list[str]:
    """The internals this module relies on that this Reflex no longer has."""
    return [
        name
        for name, present in (
            ("BaseState.__getstate__", "__getstate__" in vars(BaseState)),
            ("State.router_data", ROUTER_DATA in State.__fields__),
            ("State.rx_router_headers", ROUTER_HEADERS in State.__fields__),
            ("HeaderData.from_router_data", hasattr(router_types.HeaderData, "from_router_data")),
            ("HeaderData.raw_headers", "raw_headers" in router_types.HeaderData.__dataclass_fields__),
            ("reflex.istate.data._PRIVATE_HEADERS", hasattr(router_types, "_PRIVATE_HEADERS")),
            ("environment.REFLEX_STATES_WORKDIR", hasattr(environment, "REFLEX_STATES_WORKDIR")),
        )
        if not present
    ]


def without_secret_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """``headers`` without any of ``SECRET_HEADERS`` (in any letter case); the rest as they were."""
    return {name: value for name, value in headers.items() if str(name).lower() not in SECRET_HEADERS}


def stored_router_data(router_data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of Reflex's router data for storage: its ``headers`` without the secret ones."""
    stored = dict(router_data)
    headers = stored.get(HEADERS)
    if isinstance(headers, Mapping):
        stored[HEADERS] = without_secret_headers(headers)
    return stored


def stored_header_data(headers: router_types.HeaderData) -> router_types.HeaderData:
    """The ``HeaderData`` Reflex would build from the connection's headers without the secret ones."""
    return router_types.HeaderData.from_router_data({HEADERS: without_secret_headers(headers.raw_headers)})


def stored_fields(state: BaseState, fields: Mapping[str, Any]) -> dict[str, Any]:
    """What is stored of ``state``, given ``fields`` (what Reflex would pickle): a new dict, the
    live state untouched."""
    stored = dict(fields)
    if isinstance(stored.get(ROUTER_DATA), Mapping):
        stored[ROUTER_DATA] = stored_router_data(stored[ROUTER_DATA])
    if isinstance(stored.get(ROUTER_HEADERS), router_types.HeaderData):
        stored[ROUTER_HEADERS] = stored_header_data(stored[ROUTER_HEADERS])
    cls = type(state)
    for name in _TAB_ONLY.get(cls, ()):
        if name in stored:
            stored[name] = cls.__fields__[name].default_value()
    return stored


def tab_only(*names: str) -> Callable[[StateClass], StateClass]:
    """Class decorator: these fields of the state live for the open tab only, never stored (their
    default is). The page gets them from the event that sets them; an event that needs them sets
    them again first (the state loaded from Redis, or after a restart, has the defaults)."""

    def register(cls: StateClass) -> StateClass:
        fields = getattr(cls, "__fields__", {})
        unknown = [name for name in names if name not in fields]
        if unknown:
            raise ValueError(f"{cls.__name__} has no field {', '.join(unknown)}")
        _TAB_ONLY[cls] = frozenset(names)
        return cls

    return register


def _getstate_for_storage(self: BaseState) -> dict[str, Any]:
    return stored_fields(self, _reflex_getstate(self))


_getstate_for_storage.reflex_getstate = _reflex_getstate  # type: ignore[attr-defined]


def install() -> None:
    """From now on, every state Reflex pickles goes through ``stored_fields`` (once is enough)."""
    BaseState.__getstate__ = _getstate_for_storage  # type: ignore[method-assign]


def states_folder() -> Path:
    """Where the disk manager writes the tabs' states (``REFLEX_STATES_WORKDIR``)."""
    return environment.REFLEX_STATES_WORKDIR.get()


def keep_private() -> None:
    """Each worker, at start: what it writes from now on is its user's alone (umask 077), and the
    states folder is ``0700`` and each file in it ``0600``, also those an older version left."""
    os.umask(os.umask(0o077) | 0o077)  # an operator's stricter umask stays
    folder = states_folder()
    if not folder.is_dir():
        return  # no disk manager here (Redis), or none started yet: Reflex makes it under the umask
    folder.chmod(PRIVATE_FOLDER_MODE)
    for path in folder.iterdir():
        if stat.S_ISREG(path.lstat().st_mode):
            path.chmod(PRIVATE_FILE_MODE)
