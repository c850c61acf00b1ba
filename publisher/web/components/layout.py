"""The shared page shell: the active navigation item is decided in Python, so it is right in the
prerendered HTML; the drawer is a native <dialog> opened by assets/site.js."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import reflex as rx
from reflex.utils.imports import ImportVar

from publisher.content import site
from publisher.content.models import PageCopy
from publisher.web.components.links import external_link, site_link

MOBILE_MENU_ID = "mobile-menu"
MOBILE_MENU_TITLE_ID = "mobile-menu-title"
MAIN_CONTENT_ID = "main-content"

_NAV_LINK = "rounded-md px-3 py-2 text-base font-semibold transition-colors "
_NAV_LINK_ACTIVE = "bg-amber-800 text-white"
_NAV_LINK_IDLE = "text-stone-800 hover:bg-amber-100 hover:text-amber-900"


@dataclass(frozen=True)
class NavItem:
    label: str
    route: str


def _nav(label: str, active_route: str, items: tuple[NavItem, ...], list_class: str, link_class: str = "", **props):
    links = [
        site_link(
            item.label,
            href=item.route,
            aria_current="page" if item.route == active_route else None,
            class_name=_NAV_LINK + (_NAV_LINK_ACTIVE if item.route == active_route else _NAV_LINK_IDLE) + link_class,
        )
        for item in items
    ]
    return rx.el.nav(rx.el.ul(*[rx.el.li(link) for link in links], class_name=list_class), aria_label=label, **props)


def _svg_icon(path_d: str) -> rx.Component:
    """A 24px stroke icon drawn inline, so the header needs no icon library."""
    return rx.el.svg(
        rx.el.path(d=path_d),
        view_box="0 0 24 24",
        aria_hidden="true",
        custom_attrs={
            "width": "24",
            "height": "24",
            "fill": "none",
            "stroke": "currentColor",
            "strokeWidth": "2",
            "strokeLinecap": "round",
            "strokeLinejoin": "round",
            "focusable": "false",
        },
    )


def mobile_drawer(active_route: str, nav_items: tuple[NavItem, ...]) -> rx.Component:
    return rx.el.dialog(
        rx.el.div(
            rx.el.div(
                rx.el.h2(site.MENU_TITLE, id=MOBILE_MENU_TITLE_ID, class_name="text-xl font-bold text-stone-900"),
                rx.el.button(
                    _svg_icon("M6 6l12 12M18 6L6 18"),  # a cross
                    type="button",
                    aria_label=site.CLOSE_MENU_LABEL,
                    custom_attrs={"data-drawer-close": ""},
                    class_name="rounded-md p-2 text-stone-800 hover:bg-amber-100",
                ),
                class_name="flex items-center justify-between border-b border-amber-200 px-4 py-3",
            ),
            _nav(site.DRAWER_NAV_LABEL, active_route, nav_items, "flex flex-col gap-1 p-3", " block"),
            class_name="drawer-panel",
        ),
        id=MOBILE_MENU_ID,
        aria_labelledby=MOBILE_MENU_TITLE_ID,
        custom_attrs={"data-drawer": ""},
        class_name="drawer",
    )


def site_header(active_route: str, nav_items: tuple[NavItem, ...]) -> rx.Component:
    return rx.el.header(
        rx.el.div(
            site_link(
                rx.el.img(
                    src=site.LOGO_IMAGE,
                    alt="",
                    custom_attrs={"width": "48", "height": "48"},
                    class_name="h-12 w-12",
                ),
                rx.el.span(
                    site.TAGLINE,
                    class_name="font-serif text-xl font-bold tracking-tight text-amber-900 sm:text-2xl",
                ),
                href="/",
                class_name="flex items-center gap-3 rounded-md",
            ),
            _nav(
                site.HEADER_NAV_LABEL, active_route, nav_items, "flex items-center gap-1", class_name="hidden md:block"
            ),
            rx.el.button(
                _svg_icon("M4 6h16M4 12h16M4 18h16"),  # three bars
                rx.el.span(site.MENU_TITLE, class_name="sr-only"),
                type="button",
                aria_haspopup="dialog",
                aria_controls=MOBILE_MENU_ID,
                custom_attrs={"data-drawer-open": MOBILE_MENU_ID},
                class_name="rounded-md p-2 text-stone-900 hover:bg-amber-100 md:hidden",
            ),
            class_name="mx-auto flex max-w-6xl items-center justify-between gap-4 px-4 py-3",
        ),
        mobile_drawer(active_route, nav_items),
        class_name="border-b border-amber-200 bg-amber-50",
    )


def site_footer() -> rx.Component:
    return rx.el.footer(
        rx.el.div(
            rx.el.div(
                rx.el.h2(site.FOLLOW_US, class_name="text-base font-bold text-white"),
                rx.el.ul(
                    *[
                        rx.el.li(
                            external_link(
                                link.name,
                                str(link.url),
                                "inline-block rounded-full border border-amber-200/60 px-4 py-2 "
                                "text-sm font-semibold text-amber-50 hover:bg-amber-50 hover:text-stone-900",
                            )
                        )
                        for link in site.SOCIAL_LINKS
                    ],
                    class_name="mt-3 flex flex-wrap gap-2",
                ),
            ),
            rx.el.p(
                site.COPYRIGHT_SIGN,
                rx.el.span(  # the browser's clock: a stale build never shows an old year
                    rx.Var("new Date().getFullYear()"),
                    custom_attrs={"data-current-year": "", "suppressHydrationWarning": True},
                ),
                site.COPYRIGHT_HOLDER,
                class_name="text-sm text-stone-200",
            ),
            rx.el.p(site.AFFILIATE_NOTE, class_name="text-sm text-stone-300"),
            class_name="mx-auto flex max-w-6xl flex-col gap-5 px-4 py-8",
        ),
        class_name="mt-16 bg-stone-900",
    )


SITE_ERROR_ID = "site-error"
logger = logging.getLogger(__name__)


def backend_exception_handler(exception: Exception):
    """An event handler's unexpected failure: logged (never the event's data), and a plain message in the
    page's error region (Reflex's default toast is a script the CSP blocks)."""
    logger.error("Event handler failed: %s", type(exception).__name__, exc_info=exception)
    return rx.set_value(SITE_ERROR_ID, site.UNEXPECTED_ERROR)


RENDERED_EVENT = "publisher:app-rendered"
RENDERED_ATTRIBUTE = "data-app-rendered"


class AppRendered(rx.Fragment):
    """Tells assets/site.js that the app has rendered the page: browser code that changes the document
    (the book search) must not run before, or React would find HTML it did not render."""

    def add_imports(self):
        return {"react": [ImportVar(tag="useEffect")]}

    def add_hooks(self) -> list[str]:
        return [
            "useEffect(() => {\n"
            f'  document.documentElement.setAttribute("{RENDERED_ATTRIBUTE}", "");\n'
            f'  document.dispatchEvent(new Event("{RENDERED_EVENT}"));\n'
            "}, []);"
        ]


def app_wrap(stateful: bool) -> rx.Component:
    return AppRendered.create()


def page_layout(active_route: str, nav_items: tuple[NavItem, ...], *children: rx.Component) -> rx.Component:
    return rx.el.div(
        site_header(active_route, nav_items),
        rx.el.main(
            *children,
            id=MAIN_CONTENT_ID,
            class_name="mx-auto w-full max-w-6xl flex-1 px-4 pt-8",
        ),
        site_footer(),
        rx.el.output(
            id=SITE_ERROR_ID,
            role="alert",
            class_name=(
                "fixed inset-x-4 bottom-4 z-50 mx-auto max-w-md rounded-md border border-red-300 bg-red-50 "
                "px-4 py-3 font-medium text-red-900 shadow-lg empty:hidden"
            ),
        ),
        class_name="flex min-h-screen flex-col bg-white text-stone-800",
    )


def page_heading(copy: PageCopy, intro: bool = True) -> rx.Component:
    return rx.el.div(
        rx.el.h1(copy.heading, class_name="font-serif text-3xl font-bold text-stone-900 sm:text-4xl"),
        rx.el.p(copy.intro, class_name="mt-3 max-w-3xl text-lg text-stone-700") if intro else rx.fragment(),
        class_name="mb-8" if intro else "mb-2",
    )
