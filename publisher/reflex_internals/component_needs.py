"""What a page's components need at run time (web/page_kinds.py), read through Reflex 0.10's private
component methods."""

from __future__ import annotations

from collections.abc import Iterator

from reflex_base.components.component import BaseComponent, Component

__all__ = ["BaseComponent", "Component", "brings_javascript", "hooks", "ref_hook", "state_fields_read", "what_moved"]

_USED = ("_get_vars", "_get_custom_code", "_get_dynamic_imports", "_get_ref_hook", "_get_all_hooks")


def what_moved() -> list[str]:
    return [f"Component.{name}" for name in _USED if not hasattr(Component, name)]


def state_fields_read(component: Component) -> Iterator[tuple[str, str]]:
    """(state name, field) for every state field the component's vars read ("" for a whole state)."""
    for var in component._get_vars():
        var_data = var._get_all_var_data()
        if var_data is None:
            continue
        for state, fields in var_data.field_dependencies.items():
            for field in fields or ("",):
                yield state, field


def brings_javascript(component: Component) -> bool:
    return bool(component._get_custom_code() or component._get_dynamic_imports())


def ref_hook(component: Component) -> str | None:
    ref = component._get_ref_hook()
    return None if ref is None else str(ref)


def hooks(component: Component) -> list[str]:
    """Every React hook the component and its children run."""
    return [hook.strip() for hook in component._get_all_hooks()]
