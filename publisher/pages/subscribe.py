"""Subscribe: intro text and the new-release email signup form."""

import reflex as rx

from publisher.components.forms import (
    form_alert,
    form_section,
    submit_button,
    success_panel,
    text_field,
    toast_announcer,
)
from publisher.components.layout import page_heading, page_layout
from publisher.forms.subscribe_state import FIELD_IDS, SUCCESS_ID, SUCCESS_TEXT, SUCCESS_TITLE, SubscribeState

ROUTE = "/subscribe"


def signup_form() -> rx.Component:
    return rx.el.form(
        text_field(FIELD_IDS["name"], "name", "Name", SubscribeState.name_error, autocomplete="name"),
        text_field(
            FIELD_IDS["email"],
            "email",
            "Email",
            SubscribeState.email_error,
            input_type="email",
            autocomplete="email",
            input_mode="email",
            spell_check=False,
        ),
        form_alert(SubscribeState.form_error),
        submit_button("Subscribe", "Subscribing...", SubscribeState.submitting),
        on_submit=SubscribeState.submit,
        no_validate=True,
        custom_attrs={"data-app-form": ""},
        aria_label="Join the email list",
        class_name="flex flex-col gap-2",
    )


def subscribe() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "Join Our Email List",
            "Be the first to know when a new book in the Animals We Confuse series comes "
            "out. We write only when there is something new to share, and you can leave "
            "the list at any time.",
        ),
        form_section(
            "subscribe-form",
            "Email signup",
            rx.cond(
                SubscribeState.succeeded,
                success_panel(SUCCESS_ID, SUCCESS_TITLE, SUCCESS_TEXT, "Subscribe another address", SubscribeState.start_over),
                signup_form(),
            ),
            toast_announcer(SubscribeState.notice_id, SubscribeState.notice_kind, SubscribeState.notice_text),
        ),
    )
