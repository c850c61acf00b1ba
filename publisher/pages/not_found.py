"""The not-found page, served for every unknown path."""

import reflex as rx

from publisher.components.layout import page_layout
from publisher.components.links import site_link

TIPS = (
    "Check the URL for typos.",
    "Use the navigation menu to find what you need.",
    "Visit the homepage to see our latest books.",
)

_BUTTON = "inline-flex items-center rounded-lg border-2 px-5 py-3 text-base leading-6 font-bold"


def not_found() -> rx.Component:
    return page_layout(
        None,
        rx.el.div(
            rx.el.p("404", class_name="font-serif text-7xl font-bold text-amber-800"),
            rx.el.h1("Oops! Page Not Found", class_name="mt-2 font-serif text-3xl font-bold text-stone-900"),
            rx.el.p(
                "We looked under every hay pile and in every burrow, but this page is not "
                "here. It may have moved, or the link may be mistyped.",
                class_name="mt-4 text-lg text-stone-700",
            ),
            rx.el.div(
                site_link("Go Home", href="/", class_name=f"{_BUTTON} border-amber-800 bg-amber-800 text-white hover:bg-amber-900"),
                rx.el.button(
                    "Go Back",
                    type="button",
                    custom_attrs={"data-history-back": ""},
                    class_name=f"{_BUTTON} border-amber-800 bg-white text-amber-900 hover:bg-amber-50",
                ),
                class_name="mt-6 flex flex-wrap gap-3",
            ),
            rx.el.h2("Here are some tips:", class_name="mt-10 text-xl font-bold text-stone-900"),
            rx.el.ul(
                *[rx.el.li(tip) for tip in TIPS],
                class_name="mt-3 list-disc space-y-1 pl-6 text-stone-700",
            ),
            class_name="mx-auto max-w-2xl py-8 text-left",
        ),
    )
