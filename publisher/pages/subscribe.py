"""Subscribe: intro text and the new-release email signup form."""

import reflex as rx

from publisher.components.layout import page_heading, page_layout

ROUTE = "/subscribe"


def subscribe() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "Join Our Email List",
            "Be the first to know when a new book in the Animals We Confuse series comes "
            "out. We write only when there is something new to share, and you can leave "
            "the list at any time.",
        ),
        rx.el.section(
            # The signup form (spec sections 4, 5, 7, 8) is built by the forms issue.
            id="subscribe-form",
            aria_label="Email signup",
            class_name="max-w-xl",
        ),
    )
