"""Contact Us: intro text and the contact form."""

import reflex as rx

from publisher.components.forms import (
    form_alert,
    form_section,
    honeypot_field,
    submit_button,
    success_panel,
    text_field,
    textarea_field,
    toast_announcer,
)
from publisher.components.layout import page_heading, page_layout
from publisher.forms.contact_state import (
    FIELD_IDS,
    HONEYPOT_FIELD,
    SUCCESS_ID,
    SUCCESS_TEXT,
    SUCCESS_TITLE,
    ContactState,
)

ROUTE = "/contact-us"


def security_question() -> rx.Component:
    """The math question; its line is reserved so the question arriving after load moves nothing."""
    field_id = FIELD_IDS["answer"]
    label = rx.el.label(
        "Security question: ",
        rx.el.span(ContactState.question, class_name="inline-block min-w-32"),
        html_for=field_id,
        class_name="block min-h-7 text-base font-semibold text-stone-900",
    )
    return text_field(field_id, "answer", label, ContactState.answer_error, input_mode="numeric", width_class="w-32")


def contact_form() -> rx.Component:
    return rx.el.form(
        rx.el.div(
            text_field(
                FIELD_IDS["first_name"], "first_name", "First name", ContactState.first_name_error,
                autocomplete="given-name",
            ),
            text_field(
                FIELD_IDS["last_name"], "last_name", "Last name", ContactState.last_name_error,
                autocomplete="family-name",
            ),
            class_name="grid gap-x-4 sm:grid-cols-2",
        ),
        text_field(
            FIELD_IDS["email"], "email", "Email", ContactState.email_error,
            input_type="email", autocomplete="email", input_mode="email", spell_check=False,
        ),
        textarea_field(FIELD_IDS["message"], "message", "Message", ContactState.message_error),
        security_question(),
        honeypot_field("contact-website", HONEYPOT_FIELD),
        form_alert(ContactState.form_error),
        rx.el.div(submit_button("Send Message", "Sending...", ContactState.submitting)),
        on_submit=ContactState.submit,
        no_validate=True,
        custom_attrs={"data-app-form": ""},
        aria_label="Send us a message",
        class_name="relative flex flex-col gap-2",
    )


def contact() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "Contact Us",
            "Questions about our books, a school or library visit, or a bulk order? "
            "Send us a message and we will get back to you, usually within 24-48 hours "
            "on business days.",
        ),
        form_section(
            "contact-form",
            "Contact form",
            rx.cond(
                ContactState.succeeded,
                success_panel(SUCCESS_ID, SUCCESS_TITLE, SUCCESS_TEXT, "Send another message", ContactState.start_over),
                contact_form(),
            ),
            toast_announcer(ContactState.notice_id, ContactState.notice_kind, ContactState.notice_text),
        ),
    )
