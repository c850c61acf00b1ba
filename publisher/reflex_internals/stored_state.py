"""What a tab's stored state holds: nothing of its visitor's connection, no page's query, no
``tab_only`` field (docs/security.md). Only the pickled copy changes: Reflex refills the router
data at every event."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from reflex.istate import data as router_types
from reflex.state import BaseState, State
from reflex_base import constants
from reflex_base.environment import environment

# The router data's entries never stored: the connection's headers and address, the page's query.
UNSTORED_ENTRIES = frozenset({constants.RouteVar.HEADERS, constants.RouteVar.CLIENT_IP, constants.RouteVar.QUERY})

PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600

_TAB_ONLY: dict[type, frozenset[str]] = {}
# Reflex's own (an app module imported again in one process finds the wrapper installed already).
_reflex_getstate: Callable[[BaseState], dict[str, Any]] = getattr(
    BaseState.__getstate__, "reflex_getstate", BaseState.__getstate__
)

StateClass = TypeVar("StateClass", bound=type)


def what_moved() -> list[str]:
    return [
        name
        for name, present in (
            ("BaseState.__getstate__", "__getstate__" in vars(BaseState)),
            ("State.router_data", constants.ROUTER_DATA in State.__fields__),
            ("State.rx_router_headers", constants.ROUTER_HEADERS in State.__fields__),
            ("State.rx_router_session", constants.ROUTER_SESSION in State.__fields__),
            ("SessionData.client_ip", "client_ip" in router_types.SessionData.__dataclass_fields__),
            ("State.rx_router_page", constants.ROUTER_PAGE in State.__fields__),
            ("State.rx_router_url", constants.ROUTER_URL in State.__fields__),
            (
                "PageData.raw_path, full_raw_path, params",
                {"raw_path", "full_raw_path", "params"} <= router_types.PageData.__dataclass_fields__.keys(),
            ),
            (
                "URLData.from_url, ReflexURL",
                hasattr(router_types.URLData, "from_url") and hasattr(router_types, "ReflexURL"),
            ),
            ("environment.REFLEX_STATES_WORKDIR", hasattr(environment, "REFLEX_STATES_WORKDIR")),
        )
        if not present
    ]


def path_only(address: str) -> str:
    return address.split("#", 1)[0].split("?", 1)[0]


def stored_fields(state: BaseState, fields: Mapping[str, Any]) -> dict[str, Any]:
    """What is stored of ``state``, given what Reflex would pickle: a new dict, the live state untouched."""
    stored = dict(fields)
    if isinstance(stored.get(constants.ROUTER_DATA), Mapping):
        router_data = {
            key: value for key, value in stored[constants.ROUTER_DATA].items() if key not in UNSTORED_ENTRIES
        }
        if isinstance(router_data.get(constants.RouteVar.ORIGIN), str):
            router_data[constants.RouteVar.ORIGIN] = path_only(router_data[constants.RouteVar.ORIGIN])
        stored[constants.ROUTER_DATA] = router_data
    if isinstance(stored.get(constants.ROUTER_HEADERS), router_types.HeaderData):
        stored[constants.ROUTER_HEADERS] = router_types.HeaderData()
    if isinstance(stored.get(constants.ROUTER_SESSION), router_types.SessionData):
        stored[constants.ROUTER_SESSION] = dataclasses.replace(stored[constants.ROUTER_SESSION], client_ip="")
    if isinstance(page := stored.get(constants.ROUTER_PAGE), router_types.PageData):
        stored[constants.ROUTER_PAGE] = dataclasses.replace(
            page,
            raw_path=path_only(page.raw_path),
            full_raw_path=path_only(page.full_raw_path),
            params={},
        )
    if isinstance(url := stored.get(constants.ROUTER_URL), router_types.URLData):
        stored[constants.ROUTER_URL] = router_types.URLData.from_url(router_types.ReflexURL(path_only(url.href)))
    cls = type(state)
    for name in _TAB_ONLY.get(cls, ()):
        if name in stored:
            stored[name] = cls.__fields__[name].default_value()
    return stored


def tab_only(*names: str) -> Callable[[StateClass], StateClass]:
    """Class decorator: these fields live for the open tab only, stored as their default; an event
    that needs them sets them again first (a state loaded from Redis or after a restart has defaults)."""

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
    BaseState.__getstate__ = _getstate_for_storage  # type: ignore[method-assign]


def keep_private() -> None:
    """Each worker, at start: what it writes is its user's alone (umask 077, an operator's stricter one
    kept), the states folder ``0700`` and its files ``0600``, also those an older version left."""
    os.umask(os.umask(0o077) | 0o077)
    folder: Path = environment.REFLEX_STATES_WORKDIR.get()
    if not folder.is_dir():
        return  # no disk manager here (Redis), or none started yet: Reflex makes it under the umask
    folder.chmod(PRIVATE_FOLDER_MODE)
    for path in folder.iterdir():
        if stat.S_ISREG(path.lstat().st_mode):
            path.chmod(PRIVATE_FILE_MODE)
