"""Which pages start the app, decided at build time from the pages themselves: one with no event,
state, React hook or React library is served static, and the build says why another is not."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reflex_base import constants

from publisher.reflex_internals import component_needs
from publisher.reflex_internals.component_needs import BaseComponent, Component

MANIFEST = Path(".web") / "backend" / "page_kinds.json"
NOT_FOUND_ROUTE = constants.Page404.SLUG
# A forthcoming book's variants: Home, its page and the feed as they are until its moment, built at
# /_before/<slug><route> beside the canonical files (every book out); the server picks one per request.
VARIANT_PREFIX = "/_before"
ALL_OUT = datetime.max.replace(tzinfo=UTC)  # the canonical pages' moment: every book out

# (library, tag; None: every tag) of components complete at prerender time: icons, fragments, links, and
# a forthcoming book's switch (web/components/book_cards.py: prerendered out; production serves variants).
RENDER_ONLY_COMPONENTS = frozenset(
    {
        ("lucide-react", None),
        ("react", "Fragment"),
        ("react-router", "Link"),
        ("$/public/release_switch.js", "ReleaseSwitch"),
    }
)
_STATE_CONTEXT_HOOK = re.compile(r'^const \w+ = useStateContext\("[\w.]+"\);?$')


@dataclass(frozen=True)
class PageKind:
    route: str
    app_reasons: tuple[str, ...]

    @property
    def starts_app(self) -> bool:
        return bool(self.app_reasons)

    def describe(self, limit: int = 4) -> str:
        if not self.starts_app:
            return f"{self.route}: static (no app, no websocket)"
        shown = "; ".join(self.app_reasons[:limit])
        more = len(self.app_reasons) - limit
        return f"{self.route}: starts the app: {shown}" + (f"; and {more} more" if more > 0 else "")


def walk(component: BaseComponent) -> Iterator[BaseComponent]:
    yield component
    for child in component.children:
        yield from walk(child)


def _element_name(component: BaseComponent) -> str:
    tag = getattr(component, "tag", None) or type(component).__name__
    element_id = getattr(component, "id", None)
    return f"<{tag} id={element_id!r}>" if isinstance(element_id, str) else f"<{tag}>"


def _library_name(library: str) -> str:
    """'lucide-react@0.1' -> 'lucide-react', '@radix-ui/themes@3' -> '@radix-ui/themes'."""
    head, _, _version = library[1:].partition("@")
    return library[0] + head


def _is_render_only(library: str, tag: object) -> bool:
    name = _library_name(library)
    return (name, None) in RENDER_ONLY_COMPONENTS or (name, tag) in RENDER_ONLY_COMPONENTS


def _reasons_in(component: BaseComponent) -> Iterator[str]:
    name = _element_name(component)
    if not isinstance(component, Component):
        return
    for trigger in component.event_triggers:
        yield f"{name} handles {trigger}"
    for state, field in component_needs.state_fields_read(component):
        yield f"{name} reads {state.rsplit('____', 1)[-1]}.{field}"  # '...____x_state', 'f' -> 'x_state.f'
    library = component.library
    if library and not _is_render_only(library, component.tag):
        yield f"{name} is the React component {component.tag} from {_library_name(library)}"
    if component_needs.brings_javascript(component):
        yield f"{name} brings its own JavaScript"


def app_reasons(component: BaseComponent, on_load: object = None, head: Sequence[object] = ()) -> tuple[str, ...]:
    """Why this page needs the app at run time; empty when it can be served static."""
    reasons: dict[str, None] = {}
    if on_load:
        reasons["its route has on_load events"] = None
    roots = [component, *(item for item in head if isinstance(item, BaseComponent))]
    ref_hooks: set[str] = set()
    for root in roots:
        for element in walk(root):
            reasons.update(dict.fromkeys(_reasons_in(element)))
            if isinstance(element, Component) and (ref := component_needs.ref_hook(element)) is not None:
                ref_hooks.add(ref)
    uses_state = any(" reads " in reason for reason in reasons)
    for root in roots:
        if not isinstance(root, Component):
            continue
        for code in component_needs.hooks(root):
            if code in ref_hooks or (uses_state and _STATE_CONTEXT_HOOK.match(code)):
                continue
            first_line = textwrap.shorten(code.partition("\n")[0], 80, placeholder="...")
            reasons[f"it runs the React hook `{first_line}`"] = None
    return tuple(reasons)


def page_route(path: str) -> str:
    """The route a URL path or a prerendered file names: '/about/', '/about.html', '/about/index.html' -> '/about'."""
    path = path.removesuffix(".html").removesuffix("/index")
    return "/" + path.strip("/") if path.strip("/") not in ("", "index") else "/"


def variant_route(slug: str, route: str) -> str:
    """Where ``route`` as it is until the book ``slug`` is out is built: '/' -> '/_before/<slug>'."""
    return f"{VARIANT_PREFIX}/{slug}{route}".rstrip("/")


def canonical_route(route: str) -> str:
    """The URL a variant is served at: '/_before/<slug>/books/x' -> '/books/x'; any other route as it is."""
    if not route.startswith(VARIANT_PREFIX + "/"):
        return route
    return "/" + route.removeprefix(VARIANT_PREFIX + "/").partition("/")[2]


def just_before(moment: datetime) -> datetime:
    """A variant's moment: the site as it is the instant before ``moment``."""
    return moment - timedelta.resolution


def decide(pages: Iterable[Any]) -> dict[str, PageKind]:
    kinds: dict[str, PageKind] = {}
    for page in pages:
        component = page.component() if callable(page.component) else page.component
        route = page.route if page.route == NOT_FOUND_ROUTE else page_route(page.route)  # Reflex's keys: '404'
        kinds[route] = PageKind(route, app_reasons(component, page.on_load, getattr(page, "meta", ())))
    return kinds


def write_manifest(kinds: dict[str, PageKind]) -> None:
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(json.dumps({route: list(kind.app_reasons) for route, kind in kinds.items()}, indent=2) + "\n")


def read_manifest() -> dict[str, PageKind]:
    return {route: PageKind(route, tuple(reasons)) for route, reasons in json.loads(MANIFEST.read_text()).items()}


def starts_app_by_route() -> dict[str, bool] | None:
    """Whether each page starts the app, as the last build decided; None before any build."""
    if not MANIFEST.exists():
        return None
    return {route: kind.starts_app for route, kind in read_manifest().items()}
