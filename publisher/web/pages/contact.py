"""Contact Us: intro text and the contact form, and where its plain POST leads."""

import reflex as rx

from publisher.content import form_copy, page_copy
from publisher.rules import form_tokens
from publisher.rules.form_fields import ANSWER_FIELD, CONTACT
from publisher.web.components.forms import FormSection, app_form, form_page, sent_page, submit_button, text_field
from publisher.web.pages.registry import site_page
from publisher.web.submissions import QUESTION_ID, TOKEN_ID, ContactState

ROUTE = CONTACT.route
SENT_ROUTE = "/contact-us/thanks"
SECTION = FormSection(
    "contact-form",
    form_copy.CONTACT_SECTION_LABEL,
    CONTACT.element_id("success"),
    form_copy.CONTACT_SUCCESS_TITLE,
    form_copy.CONTACT_SUCCESS_TEXT,
    form_copy.CONTACT_AGAIN,
)


def security_question() -> rx.Component:
    """The server writes the question into the page (``suppressHydrationWarning``: hydration keeps its text)."""
    field_id = CONTACT.field_ids[ANSWER_FIELD]
    label = rx.el.label(
        form_copy.SECURITY_QUESTION_LABEL,
        rx.el.span(
            ContactState.question,
            id=QUESTION_ID,
            class_name="inline-block min-w-32",
            custom_attrs={"suppressHydrationWarning": True},
        ),
        html_for=field_id,
        class_name="block min-h-7 text-base font-semibold text-stone-900",
    )
    return rx.fragment(
        text_field(field_id, ANSWER_FIELD, label, ContactState.answer_error, input_mode="numeric", width_class="w-32"),
        rx.el.input(type="hidden", name=form_tokens.TOKEN_FIELD, id=TOKEN_ID),
    )


def contact_form() -> rx.Component:
    return app_form(
        ContactState,
        security_question(),
        label=form_copy.CONTACT_FORM_LABEL,
        submit=rx.el.div(submit_button(form_copy.CONTACT_BUTTON, form_copy.CONTACT_BUSY, ContactState.submitting)),
    )


@site_page(route=ROUTE, copy=page_copy.CONTACT, nav_position=4, on_load=ContactState.start)
def contact():
    return form_page(page_copy.CONTACT, ContactState, SECTION, contact_form())


@site_page(route=SENT_ROUTE, copy=page_copy.CONTACT_SENT, active_nav=ROUTE, in_sitemap=False, indexed=False)
def contact_sent():
    return sent_page(page_copy.CONTACT_SENT, SECTION, ROUTE)
