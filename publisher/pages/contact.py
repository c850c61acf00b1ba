"""Contact Us: intro text and the contact form."""

import reflex as rx

from publisher.components.layout import page_heading, page_layout

ROUTE = "/contact-us"


def contact() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "Contact Us",
            "Questions about our books, a school or library visit, or a bulk order? "
            "Send us a message and we will get back to you, usually within 24-48 hours "
            "on business days.",
        ),
        rx.el.section(
            # The contact form (spec sections 4, 5, 7, 8) is built by the forms issue.
            id="contact-form",
            aria_label="Contact form",
            class_name="max-w-xl",
        ),
    )
