"""Every page of the site, each declared once with ``@site_page(...)``; whatever needs to know the
pages (navigation, sitemap, metadata) reads the declarations."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import reflex as rx

from publisher.content.models import PageCopy
from publisher.web import seo
from publisher.web.components.layout import NavItem, page_layout
from publisher.web.page_kinds import NOT_FOUND_ROUTE, VARIANT_PREFIX

ROOT = "/"  # Home


@dataclass(frozen=True)
class SitePage:
    route: str
    copy: PageCopy
    content: Callable[[], Iterable[rx.Component]]
    on_load: Any = None
    nav_position: int | None = None  # in the header and the drawer (1 is first); None: not listed
    active_nav: str | None = None  # the navigation item marked current; None: this page's own
    in_sitemap: bool = True
    indexed: bool = True  # robots "index, follow"; False: "noindex"
    structured_data: Callable[[], Iterable[dict[str, Any]]] = tuple  # beyond breadcrumbs
    og_type: str = "website"
    open_graph: Callable[[], Iterable[tuple[str, str]]] = tuple  # beyond the common ones
    share_image: Callable[[], tuple[str, str]] | None = None  # (path, text); None: the site's

    @property
    def has_url(self) -> bool:
        """False for the not-found page, which answers at every unknown path and has no URL of its own."""
        return self.route != NOT_FOUND_ROUTE

    def __call__(self) -> rx.Component:
        active = self.route if self.active_nav is None else self.active_nav
        return page_layout(active, PAGES.navigation(), *self.content())

    def render_function(self) -> Callable[[], rx.Component]:
        """A function named after, and in the module of, its content: Reflex places a page's compiled code by
        the function's module, so each page keeps a script chunk of its own."""
        return functools.update_wrapper(lambda: self(), self.content)


class PageRegistry:
    def __init__(self) -> None:
        self._pages: dict[str, SitePage] = {}

    def add(self, page: SitePage) -> SitePage:
        if page.route in self._pages:
            raise ValueError(f"the route {page.route!r} is declared twice")
        self._pages[page.route] = page
        return page

    def pages(self) -> tuple[SitePage, ...]:
        """Every page: those in the navigation in its order, then the others as declared."""
        unlisted = len(self._pages)
        return tuple(sorted(self._pages.values(), key=lambda page: page.nav_position or unlisted))

    def navigation(self) -> tuple[NavItem, ...]:
        return tuple(
            NavItem(label=page.copy.short_name, route=page.route) for page in self.pages() if page.nav_position
        )

    def slashless_routes(self) -> frozenset[str]:
        """The routes served at their URL as declared, although Reflex writes them as ``route/index.html``."""
        served = (page.route for page in self._pages.values() if page.has_url and page.route != ROOT)
        return frozenset(route for route in served if not route.startswith(VARIANT_PREFIX))  # variants: 404

    def add_to(self, app: rx.App) -> None:
        for page in self.pages():
            app.add_page(
                page.render_function(),
                route=page.route,
                on_load=page.on_load,
                context={"sitemap": {} if page.in_sitemap else None},
                **seo.page_args(page),
            )


PAGES = PageRegistry()


def site_page(
    *, registry: PageRegistry = PAGES, **declaration: Any
) -> Callable[[Callable[[], Iterable[rx.Component]]], SitePage]:

    def declare(content: Callable[[], Iterable[rx.Component]]) -> SitePage:
        return registry.add(SitePage(content=content, **declaration))

    return declare
