"""A form field declared once (rules/form_fields.py), and the recipe of docs/content.md that adds one.

The forms' pages, states, plain POST and gateway body are all made from the
declarations; a form declared with one more field gets that field everywhere, with
nothing else written for it. The product's own forms stay as they are.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

import httpx
import pytest
import reflex as rx

from publisher import gateway
from publisher.gateway.contract import contact_body
from publisher.rules import form_fields
from publisher.rules.form_fields import CONTACT, SUBSCRIBE, Form, FormField
from publisher.rules.validation import TextRule
from publisher.web import submissions
from publisher.web.components.forms import declared_fields
from publisher.web.states import contact as contact_state
from publisher.web.states import subscribe as subscribe_state
from publisher.web.states.contact import ContactState
from publisher.web.states.lifecycle import field_messages
from publisher.web.states.subscribe import SubscribeState

# The recipe's field: its copy would go to content/form_copy.py, its declaration to rules/form_fields.py.
COMPANY = FormField(
    "companyName",
    "Company",
    TextRule("Company", "Please enter your company", "Company must be at least 2 characters"),
    autocomplete="organization",
)
EXTENDED_SUBSCRIBE = Form("subscribe", (*SUBSCRIBE.fields, COMPANY))
EXTENDED_CONTACT = Form("contact", (*CONTACT.fields, COMPANY))


class ExtendedSubscribeState(field_messages(EXTENDED_SUBSCRIBE), rx.State):  # type: ignore[misc]
    """The subscribe form's state as the recipe makes it: its message vars come from the declaration."""


def rendered_inputs(form: Form, state) -> dict[str, str]:
    """Each <input> or <textarea> of the form's declared fields as compiled, by its id."""
    page = str(rx.fragment(*declared_fields(form, state)))
    controls = re.findall(r'jsx\("(?:input|textarea)",\{(.*?)\},?\)', page)
    return {re.search(r'\bid:"([^"]+)"', control).group(1): control for control in controls}


def test_the_forms_are_declared_once_with_the_product_s_names():
    assert SUBSCRIBE.names == ("name", "email")
    assert CONTACT.names == ("firstName", "lastName", "email", "message")


def test_ids_and_state_vars_are_derived_from_the_names_as_the_pages_have_them():
    """The ids the site's pages, tests and assets/site.js use, and the vars the app's events carry."""
    assert subscribe_state.FIELD_IDS == {"name": "subscribe-name", "email": "subscribe-email"}
    assert (subscribe_state.HONEYPOT_ID, subscribe_state.SUCCESS_ID) == ("subscribe-website", "subscribe-success")
    assert contact_state.FIELD_IDS == {
        "firstName": "contact-first-name",
        "lastName": "contact-last-name",
        "email": "contact-email",
        "message": "contact-message",
        "answer": "contact-answer",
    }
    assert (contact_state.QUESTION_ID, contact_state.TOKEN_ID) == ("contact-question", "contact-token")
    assert (contact_state.HONEYPOT_ID, contact_state.SUCCESS_ID) == ("contact-website", "contact-success")
    assert {"name_error", "email_error"} <= set(SubscribeState.base_vars)
    assert {"first_name_error", "last_name_error", "email_error", "message_error", "answer_error"} <= set(
        ContactState.base_vars
    )


def test_the_page_shows_each_declared_field_with_its_label_type_autocomplete_and_message():
    inputs = rendered_inputs(SUBSCRIBE, SubscribeState)
    assert list(inputs) == ["subscribe-name", "subscribe-email"]
    assert 'name:"name"' in inputs["subscribe-name"] and 'autoComplete:"name"' in inputs["subscribe-name"]
    email = inputs["subscribe-email"]
    assert all(part in email for part in ('type:"email"', 'autoComplete:"email"', 'inputMode:"email"'))
    contact = str(rx.fragment(*declared_fields(CONTACT, ContactState)))
    assert contact.count('jsx("textarea"') == 1 and 'name:"message"' in contact
    # The first and last names share one row on a wide screen.
    assert re.search(
        r'className:"grid gap-x-4 sm:grid-cols-2"\},jsx\(.*?"contact-first-name-error".*?"contact-last-name"', contact
    )


def test_a_field_added_to_the_declaration_is_on_the_page_with_its_message_line():
    inputs = rendered_inputs(EXTENDED_SUBSCRIBE, ExtendedSubscribeState)
    assert list(inputs) == ["subscribe-name", "subscribe-email", "subscribe-company-name"]
    company = inputs["subscribe-company-name"]
    assert 'name:"companyName"' in company
    assert 'autoComplete:"organization"' in company
    assert '"aria-describedby":"subscribe-company-name-error"' in company
    assert "company_name_error" in company  # aria-invalid follows the field's message var
    page = str(rx.fragment(*declared_fields(EXTENDED_SUBSCRIBE, ExtendedSubscribeState)))
    assert 'htmlFor:"subscribe-company-name"' in page and '"Company"' in page


def test_a_field_added_to_the_declaration_has_its_message_var_in_the_state():
    state = ExtendedSubscribeState(_reflex_internal_init=True)
    checked = EXTENDED_SUBSCRIBE.check({"name": "Jo Reader", "email": "jo@example.com", "companyName": "A"})
    state._show_errors(checked.errors)
    assert (state.name_error, state.email_error) == ("", "")
    assert state.company_name_error == "Company must be at least 2 characters"
    state._show_errors({})
    assert state.company_name_error == ""


def test_a_field_added_to_the_declaration_is_read_from_a_plain_post_and_shown_again():
    data = {name: values[0] for name, values in parse_qs("name=Jo&email=jo%40example.com&companyName=+Acme+").items()}
    assert EXTENDED_SUBSCRIBE.typed(data) == {"name": "Jo", "email": "jo@example.com", "companyName": " Acme "}
    assert EXTENDED_SUBSCRIBE.check(data).values["companyName"] == "Acme"
    assert EXTENDED_SUBSCRIBE.check({**data, "companyName": ""}).errors == {"companyName": "Please enter your company"}


@pytest.mark.asyncio
async def test_a_field_added_to_the_declaration_is_sent_in_the_gateway_s_body(monkeypatch):
    """The submit's judge (the app's and the plain POST's alike) and the gateway client, as the site runs them."""
    bodies: list[dict] = []

    def record(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={})

    monkeypatch.setattr(form_fields, "SUBSCRIBE", EXTENDED_SUBSCRIBE)
    gateway.shared_client.set(gateway.GatewayClient("https://gw.test", transport=httpx.MockTransport(record)))
    try:
        verdict = submissions.judge_subscribe({"name": " Jo ", "email": "jo@example.com", "companyName": " Acme "})
        assert verdict.request is not None
        assert await submissions.send(submissions.SUBSCRIBE, verdict.request)
    finally:
        gateway.shared_client.set(None)
    assert bodies == [{"name": "Jo", "email": "jo@example.com", "companyName": "Acme", "book_updates": "yes"}]


def test_a_contact_field_beyond_the_product_s_body_is_sent_by_its_name():
    values = EXTENDED_CONTACT.check(
        {
            "firstName": "Ada",
            "lastName": "Reader",
            "email": "ada@example.com",
            "message": "Hello there, books!",
            "companyName": "Acme",
        }
    ).values
    assert contact_body(values) == {
        "sender": {"name": "Ada Reader", "email": "ada@example.com"},
        "subject": "Contact Form Submission from Ada Reader",
        "message": "Hello there, books!",
        "companyName": "Acme",
    }
