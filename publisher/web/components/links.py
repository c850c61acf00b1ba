"""Plain <a> links, so every page works as a document (``rx.el.a`` is React Router's Link, which
keeps the app); links that leave the site open a new tab, and screen readers are told so."""

from __future__ import annotations

import reflex as rx
from reflex_components_core.el.elements.inline import A

from publisher.content.site import NEW_TAB_NOTE

# On a buy button: the book's slug, which assets/site.js sends in its beacon (server/buy_beacon.py).
BUY_ATTRIBUTE = "data-buy"
BUTTON_CLASS = (
    "mt-5 inline-block rounded-lg bg-amber-800 px-5 py-3 text-base font-bold text-white shadow hover:bg-amber-900"
)


def external_link(label: str, href: str, class_name: str, context: str = "", **props) -> rx.Component:
    """A new-tab link; ``context`` (e.g. the book title) is added for screen readers only."""
    hidden_text = f": {context}{NEW_TAB_NOTE}" if context else NEW_TAB_NOTE
    return A.create(
        label,
        rx.el.span(hidden_text, class_name="sr-only"),
        href=href,
        target="_blank",
        rel="noopener noreferrer",
        class_name=class_name,
        **props,
    )


def external_button(label: str, href: str, context: str, buy: str = "") -> rx.Component:
    """A new-tab button; ``buy``: the book's slug, as ``data-buy`` (assets/site.js counts a press)."""
    return external_link(label, href, BUTTON_CLASS, context, **({"custom_attrs": {BUY_ATTRIBUTE: buy}} if buy else {}))


def site_link(*children: rx.Component | str, href: str, **props) -> rx.Component:
    return A.create(*children, href=href, **props)
