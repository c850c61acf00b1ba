"""The not-found page, served for every unknown path."""

import reflex as rx

from publisher.content import page_copy
from publisher.web.components.links import site_link
from publisher.web.page_kinds import NOT_FOUND_ROUTE
from publisher.web.pages.registry import ROOT, site_page

_BUTTON = "inline-flex items-center rounded-lg border-2 px-5 py-3 text-base leading-6 font-bold"


@site_page(route=NOT_FOUND_ROUTE, copy=page_copy.NOT_FOUND, in_sitemap=False, indexed=False)
def not_found():
    return (
        rx.el.div(
            rx.el.p(page_copy.NOT_FOUND_CODE, class_name="font-serif text-7xl font-bold text-amber-800"),
            rx.el.h1(page_copy.NOT_FOUND.heading, class_name="mt-2 font-serif text-3xl font-bold text-stone-900"),
            rx.el.p(page_copy.NOT_FOUND.intro, class_name="mt-4 text-lg text-stone-700"),
            rx.el.div(
                site_link(
                    page_copy.GO_HOME,
                    href=ROOT,
                    class_name=f"{_BUTTON} border-amber-800 bg-amber-800 text-white hover:bg-amber-900",
                ),
                rx.el.button(
                    page_copy.GO_BACK,
                    type="button",
                    custom_attrs={"data-history-back": ""},
                    class_name=f"{_BUTTON} border-amber-800 bg-white text-amber-900 hover:bg-amber-50",
                ),
                class_name="mt-6 flex flex-wrap gap-3",
            ),
            rx.el.h2(page_copy.TIPS_HEADING, class_name="mt-10 text-xl font-bold text-stone-900"),
            rx.el.ul(
                *[rx.el.li(tip) for tip in page_copy.TIPS],
                class_name="mt-3 list-disc space-y-1 pl-6 text-stone-700",
            ),
            class_name="mx-auto max-w-2xl py-8 text-left",
        ),
    )
