"""Contact Us: intro text and the contact form."""

import reflex as rx

from publisher.content import form_copy, page_copy
from publisher.web.components.forms import (
    SuccessCopy,
    app_form,
    email_field,
    form_page,
    honeypot_field,
    submit_button,
    text_field,
    textarea_field,
)
from publisher.web.pages.registry import site_page
from publisher.web.states.contact import FIELD_IDS, HONEYPOT_FIELD, SUCCESS_ID, ContactState


def security_question() -> rx.Component:
    """The math question; its line is reserved so the question arriving after load moves nothing."""
    field_id = FIELD_IDS["answer"]
    label = rx.el.label(
        form_copy.SECURITY_QUESTION_LABEL,
        rx.el.span(ContactState.question, class_name="inline-block min-w-32"),
        html_for=field_id,
        class_name="block min-h-7 text-base font-semibold text-stone-900",
    )
    return text_field(field_id, "answer", label, ContactState.answer_error, input_mode="numeric", width_class="w-32")


def contact_form() -> rx.Component:
    return app_form(
        ContactState,
        rx.el.div(
            text_field(
                FIELD_IDS["first_name"],
                "first_name",
                form_copy.FIRST_NAME_LABEL,
                ContactState.first_name_error,
                autocomplete="given-name",
            ),
            text_field(
                FIELD_IDS["last_name"],
                "last_name",
                form_copy.LAST_NAME_LABEL,
                ContactState.last_name_error,
                autocomplete="family-name",
            ),
            class_name="grid gap-x-4 sm:grid-cols-2",
        ),
        email_field(FIELD_IDS["email"], ContactState.email_error),
        textarea_field(FIELD_IDS["message"], "message", form_copy.MESSAGE_LABEL, ContactState.message_error),
        security_question(),
        honeypot_field("contact-website", HONEYPOT_FIELD),
        label=form_copy.CONTACT_FORM_LABEL,
        submit=rx.el.div(submit_button(form_copy.CONTACT_BUTTON, form_copy.CONTACT_BUSY, ContactState.submitting)),
        class_name="relative flex flex-col gap-2",
    )


@site_page(route="/contact-us", copy=page_copy.CONTACT, nav_position=4, on_load=ContactState.start)
def contact():
    return form_page(
        page_copy.CONTACT,
        ContactState,
        section_id="contact-form",
        section_label=form_copy.CONTACT_SECTION_LABEL,
        success=SuccessCopy(
            SUCCESS_ID,
            form_copy.CONTACT_SUCCESS_TITLE,
            form_copy.CONTACT_SUCCESS_TEXT,
            form_copy.CONTACT_AGAIN,
        ),
        form=contact_form(),
    )
