"""The confirmation and unsubscribe pages' one panel: what the link led to, and the button.

Its prerendered form says the link is being checked; the app fills it in once it
has read the link. The panel keeps its space, so nothing below it moves.
"""

from __future__ import annotations

import reflex as rx

from publisher.content import list_copy
from publisher.web.components.forms import cannot_connect
from publisher.web.components.links import site_link

_TEXT = "mt-3 max-w-3xl text-lg text-stone-700"
_TITLE = "mt-2 font-serif text-2xl font-bold text-stone-900"
_LINK = "mt-4 inline-block font-semibold text-amber-900 underline underline-offset-4 hover:text-amber-700"


def with_address(template: str, address: rx.Var[str]) -> rx.Component:
    """A sentence from the copy with the (masked) address in bold where it says {address}."""
    before, _, after = template.format(address="\0", list_name=list_copy.LIST_NAME).partition("\0")
    return rx.el.p(before, rx.el.strong(address, class_name="font-semibold text-stone-900"), after, class_name=_TEXT)


def text(sentence: str) -> rx.Component:
    return rx.el.p(sentence, class_name=_TEXT)


def title(sentence: str) -> rx.Component:
    return rx.el.h2(sentence, class_name=_TITLE)


def subscribe_link(label: str, href: str) -> rx.Component:
    return site_link(label, href=href, class_name=_LINK)


def outcome_panel(stage: rx.Var[str], outcomes: dict[str, tuple[rx.Component, ...]]) -> rx.Component:
    """The children of the current ``stage``; the checking sentence before the app has read the link."""
    return rx.el.section(
        rx.match(
            stage,
            *[(name, rx.fragment(*children)) for name, children in outcomes.items()],
            rx.cond(cannot_connect, text(list_copy.LINK_UNAVAILABLE), text(list_copy.CONFIRM_CHECKING)),
        ),
        role="status",
        class_name="min-h-40",
    )
