"""Subscribe: intro text and the new-release email signup form."""

import reflex as rx

from publisher.content import form_copy, list_copy, page_copy
from publisher.rules.antispam import HONEYPOT_FIELD
from publisher.web.components.forms import (
    SuccessCopy,
    app_form,
    email_field,
    form_page,
    honeypot_field,
    submit_button,
    text_field,
)
from publisher.web.pages.registry import site_page
from publisher.web.states.subscribe import FIELD_IDS, HONEYPOT_ID, SUCCESS_ID, SubscribeState


def signup_form() -> rx.Component:
    return app_form(
        SubscribeState,
        text_field(FIELD_IDS["name"], "name", form_copy.NAME_LABEL, SubscribeState.name_error, autocomplete="name"),
        email_field(FIELD_IDS["email"], SubscribeState.email_error),
        honeypot_field(HONEYPOT_ID, HONEYPOT_FIELD),
        label=form_copy.SUBSCRIBE_FORM_LABEL,
        submit=submit_button(form_copy.SUBSCRIBE_BUTTON, form_copy.SUBSCRIBE_BUSY, SubscribeState.submitting),
        class_name="relative flex flex-col gap-2",
    )


@site_page(route="/subscribe", copy=page_copy.SUBSCRIBE, nav_position=3, on_load=SubscribeState.start)
def subscribe():
    return form_page(
        page_copy.SUBSCRIBE,
        SubscribeState,
        section_id="subscribe-form",
        section_label=form_copy.SUBSCRIBE_SECTION_LABEL,
        success=SuccessCopy(
            SUCCESS_ID,
            form_copy.SUBSCRIBE_SUCCESS_TITLE,
            form_copy.SUBSCRIBE_SUCCESS_TEXT,
            form_copy.SUBSCRIBE_AGAIN,
        ),
        form=signup_form(),
        note=rx.cond(
            SubscribeState.asks_confirmation,
            rx.el.p(list_copy.CONFIRM_FROM_INBOX, class_name="mt-2 text-base text-emerald-950"),
        ),
    )
