"""A form field declared once (rules/form_fields.py), and docs/content.md's recipe that adds one."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import reflex as rx
from bs4 import BeautifulSoup

from publisher.gateway import contact_body
from publisher.limits import submits
from publisher.rules.form_fields import CONTACT, SUBSCRIBE, WAITLIST, Form, FormField, TextRule
from publisher.server import plain_forms
from publisher.web import page_kinds, submissions
from publisher.web.components.forms import declared_fields, waitlist_form
from publisher.web.submissions import ContactState, SubscribeState, field_messages
from tests.release_book import test_book
from tests.unit.test_form_states import CONTACT_FIELDS, recording_gateway
from tests.unit.test_plain_forms import FORM_PARTS, SAME_SITE, client, field, page, write_build

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


def test_ids_and_state_vars_are_derived_from_the_product_s_names_as_the_pages_have_them():
    """The ids the site's pages, tests and assets/site.js use, and the vars the app's events carry."""
    assert (SUBSCRIBE.names, CONTACT.names) == (("name", "email"), ("firstName", "lastName", "email", "message"))
    assert SUBSCRIBE.field_ids == {"name": "subscribe-name", "email": "subscribe-email"}
    assert [SUBSCRIBE.element_id(name) for name in ("website", "success")] == ["subscribe-website", "subscribe-success"]
    assert CONTACT.field_ids == {
        "firstName": "contact-first-name",
        "lastName": "contact-last-name",
        "email": "contact-email",
        "message": "contact-message",
        "answer": "contact-answer",
    }
    assert (submissions.QUESTION_ID, submissions.TOKEN_ID) == ("contact-question", "contact-token")
    assert [CONTACT.element_id(name) for name in ("website", "success")] == ["contact-website", "contact-success"]
    assert {"name_error", "email_error"} <= set(SubscribeState.base_vars)
    contact_vars = {"first_name_error", "last_name_error", "email_error", "message_error", "answer_error"}
    assert contact_vars <= set(ContactState.base_vars)


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


def test_a_field_added_to_the_declaration_is_on_the_page_with_its_message_line_and_var_in_the_state():
    inputs = rendered_inputs(EXTENDED_SUBSCRIBE, ExtendedSubscribeState)
    assert list(inputs) == ["subscribe-name", "subscribe-email", "subscribe-company-name"]
    company = inputs["subscribe-company-name"]
    described_by = '"aria-describedby":"subscribe-company-name-error"'
    assert all(part in company for part in ('name:"companyName"', 'autoComplete:"organization"', described_by))
    assert "company_name_error" in company  # aria-invalid follows the field's message var
    page = str(rx.fragment(*declared_fields(EXTENDED_SUBSCRIBE, ExtendedSubscribeState)))
    assert 'htmlFor:"subscribe-company-name"' in page and '"Company"' in page
    state = ExtendedSubscribeState(_reflex_internal_init=True)  # and its message var is in the state
    checked = EXTENDED_SUBSCRIBE.check({"name": "Jo Reader", "email": "jo@example.com", "companyName": "A"})
    state._show_errors(checked.errors)
    assert (state.name_error, state.email_error) == ("", "")
    assert state.company_name_error == "Company must be at least 2 characters"
    state._show_errors({})
    assert state.company_name_error == ""


@pytest.fixture
def extended_subscribe(monkeypatch, tmp_path: Path):
    """The site's subscribe form declared with the recipe's field, a build whose page has it, the gateway's recorder."""
    plain = dataclasses.replace(plain_forms.FORMS["/subscribe"], declared=EXTENDED_SUBSCRIBE)
    monkeypatch.setitem(plain_forms.FORMS, "/subscribe", plain)
    write_build(tmp_path)
    fields = "".join(field(field_id, name) for name, field_id in EXTENDED_SUBSCRIBE.field_ids.items())
    (tmp_path / "subscribe" / "index.html").write_text(
        page(FORM_PARTS.format(section="subscribe-form", route="/subscribe", fields=fields))
    )
    submits.shared_limiter.set(submits.Limiter())
    with recording_gateway() as recorder:
        yield tmp_path, recorder
    submits.shared_limiter.set(None)


@pytest.mark.asyncio
async def test_a_plain_post_reads_an_added_field_shows_its_message_and_sends_it(extended_subscribe):
    build, recorder = extended_subscribe
    typed = {"name": "Jo Reader", "email": "jo@example.com", "companyName": "A"}
    async with client(build) as http:
        refused = await http.post("/subscribe", data=typed, headers=SAME_SITE)
        accepted = await http.post("/subscribe", data={**typed, "companyName": " Acme "}, headers=SAME_SITE)
    assert refused.status_code == 422
    answer = BeautifulSoup(refused.text, "html.parser")
    assert answer.find(id="subscribe-company-name")["value"] == "A"  # what was typed, kept
    assert answer.find(id="subscribe-company-name-error").text == "Company must be at least 2 characters"
    assert answer.find(id="subscribe-company-name")["aria-invalid"] == "true"
    assert accepted.status_code == 303
    assert recorder.bodies == [
        {"name": "Jo Reader", "email": "jo@example.com", "companyName": "Acme", "book_updates": "yes"}
    ]


def test_a_contact_field_beyond_the_product_s_body_is_sent_by_its_name():
    values = EXTENDED_CONTACT.check({**CONTACT_FIELDS, "companyName": "Acme"}).values
    assert contact_body(values) == {
        "sender": {"name": "Jo Reader", "email": "jo@example.com"},
        "subject": "Contact Form Submission from Jo Reader",
        "message": "When is the next book coming out?",
        "companyName": "Acme",
    }


def test_the_waitlist_is_its_declaration_in_a_plain_form_that_keeps_the_book_s_page_static():
    book = test_book()
    section = waitlist_form(book)
    rendered = str(section)
    assert WAITLIST.field_ids == {"email": "waitlist-email", "joinList": "waitlist-join-list"}
    assert page_kinds.app_reasons(section) == ()  # no state, no submit handler: the page needs no app
    assert f'jsx("form",{{action:"{book.page_path}"' in rendered and 'method:"post"' in rendered
    assert 'name:"joinList"' in rendered and 'type:"checkbox"' in rendered and 'name:"website"' in rendered
    assert f"one email when {book.title} is out" in rendered and "erase it 30 days after that email" in rendered
    ticked = {"email": "jo@example.com", "joinList": "yes"}
    assert WAITLIST.check(ticked).values == ticked
    assert WAITLIST.check({"email": "jo@example.com"}).values["joinList"] == ""  # a box is never wrong
