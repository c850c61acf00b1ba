"""The link pages' one panel, declared as data (``Outcomes``), drawn alike by the app and by the server into a
slot React leaves as found (``dangerouslySetInnerHTML`` children are not compared on hydration)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

import reflex as rx

from publisher.content import list_copy
from publisher.web.components.forms import BUTTON_CLASS, app_connected, submit_button
from publisher.web.components.links import site_link
from publisher.web.states.list_link_state import ListLinkState

LINK_PANEL_ATTRIBUTE = "data-link-panel"
_TEXT = "mt-3 max-w-3xl text-lg text-stone-700"
_TITLE = "mt-2 font-serif text-2xl font-bold text-stone-900"
_LINK = "mt-4 inline-block font-semibold text-amber-900 underline underline-offset-4 hover:text-amber-700"
_STRONG = "font-semibold text-stone-900"


@dataclass(frozen=True)
class Title:
    sentence: str


@dataclass(frozen=True)
class Text:
    sentence: str


@dataclass(frozen=True)
class WithAddress:
    """A sentence from the copy with the (masked) address in bold where it says {address}."""

    template: str


@dataclass(frozen=True)
class SubscribeLink:
    label: str
    href: str


@dataclass(frozen=True)
class Press:
    label: str
    busy_label: str


Part = Title | Text | WithAddress | SubscribeLink | Press
Outcomes = Mapping[str, tuple[Part, ...]]  # stage -> what its panel shows, in order


def _around_address(template: str) -> tuple[str, str]:
    before, _, after = template.format(address="\0", list_name=list_copy.LIST_NAME).partition("\0")
    return before, after


def _part(part: Part, address: rx.Var[str], busy: rx.Var[bool], on_press) -> rx.Component:
    match part:
        case Title(sentence):
            return rx.el.h2(sentence, class_name=_TITLE)
        case Text(sentence):
            return rx.el.p(sentence, class_name=_TEXT)
        case WithAddress(template):
            before, after = _around_address(template)
            return rx.el.p(before, rx.el.strong(address, class_name=_STRONG), after, class_name=_TEXT)
        case SubscribeLink(label, href):
            return site_link(label, href=href, class_name=_LINK)
        case Press(label, busy_label):
            # No action: the browser posts to the page's own address, the link with its token.
            return rx.el.form(
                submit_button(label, busy_label, busy),
                on_submit=on_press,
                method="post",
                custom_attrs={"data-app-form": "", "data-connected": rx.cond(app_connected, "true", "false")},
            )


def _part_html(part: Part, address: str, action: str) -> str:
    match part:
        case Title(sentence):
            return f'<h2 class="{_TITLE}">{escape(sentence)}</h2>'
        case Text(sentence):
            return f'<p class="{_TEXT}">{escape(sentence)}</p>'
        case WithAddress(template):
            before, after = _around_address(template)
            strong = f'<strong class="{_STRONG}">{escape(address)}</strong>'
            return f'<p class="{_TEXT}">{escape(before)}{strong}{escape(after)}</p>'
        case SubscribeLink(label, href):
            return f'<a href="{escape(href)}" class="{_LINK}">{escape(label)}</a>'
        case Press(label, _busy_label):
            button = f'<button type="submit" aria-busy="false" class="{BUTTON_CLASS}">{escape(label)}</button>'
            return f'<form method="post" action="{escape(action)}">{button}</form>'


def outcome_html(outcomes: Outcomes, stage: str, address: str, action: str) -> str:
    return "".join(_part_html(part, address, action) for part in outcomes[stage])


def checking_html() -> str:
    """What the slot says where nothing wrote into it (the build; the development server)."""
    return _part_html(Text(list_copy.CONFIRM_CHECKING), "", "")


def outcome_panel(state: type[ListLinkState], on_press, outcomes: Outcomes) -> rx.Component:
    """Before the app has read the link, the slot that holds what the server wrote."""
    return rx.el.section(
        rx.match(
            state.stage,
            *[
                (name, rx.fragment(*[_part(part, state.address, state.working, on_press) for part in parts]))
                for name, parts in outcomes.items()
            ],
            rx.html(checking_html(), custom_attrs={LINK_PANEL_ATTRIBUTE: ""}),
        ),
        role="status",
        class_name="min-h-40",
    )
