"""Subscribe: intro text and the new-release email signup form, and where its plain POST leads."""

import reflex as rx

from publisher.content import form_copy, list_copy, page_copy
from publisher.rules.form_fields import SUBSCRIBE
from publisher.web.components.forms import FormSection, app_form, form_page, sent_page, submit_button
from publisher.web.pages.registry import site_page
from publisher.web.submissions import SubscribeState

ROUTE = SUBSCRIBE.route
SENT_ROUTE = "/subscribe/thanks"
# The confirmation note, shown where the site keeps the list (server/plain_forms.py, or the app's state).
CONFIRM_NOTE_ATTRIBUTE = "data-confirm-note"
SECTION = FormSection(
    "subscribe-form",
    form_copy.SUBSCRIBE_SECTION_LABEL,
    SUBSCRIBE.element_id("success"),
    form_copy.SUBSCRIBE_SUCCESS_TITLE,
    form_copy.SUBSCRIBE_SUCCESS_TEXT,
    form_copy.SUBSCRIBE_AGAIN,
)


def signup_form() -> rx.Component:
    return app_form(
        SubscribeState,
        label=form_copy.SUBSCRIBE_FORM_LABEL,
        submit=submit_button(form_copy.SUBSCRIBE_BUTTON, form_copy.SUBSCRIBE_BUSY, SubscribeState.submitting),
    )


def confirm_note(hidden: bool | rx.Var[bool]) -> rx.Component:
    return rx.el.p(
        list_copy.CONFIRM_FROM_INBOX,
        hidden=hidden,
        custom_attrs={CONFIRM_NOTE_ATTRIBUTE: ""},
        class_name="mt-2 text-base text-emerald-950",
    )


@site_page(route=ROUTE, copy=page_copy.SUBSCRIBE, nav_position=3, on_load=SubscribeState.start)
def subscribe():
    note = rx.cond(SubscribeState.asks_confirmation, confirm_note(False))
    return form_page(page_copy.SUBSCRIBE, SubscribeState, SECTION, signup_form(), note)


@site_page(route=SENT_ROUTE, copy=page_copy.SUBSCRIBE_SENT, active_nav=ROUTE, in_sitemap=False, indexed=False)
def subscribe_sent():
    return sent_page(page_copy.SUBSCRIBE_SENT, SECTION, ROUTE, confirm_note(True))
