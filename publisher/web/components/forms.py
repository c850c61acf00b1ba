"""Form building blocks on plain elements. Inputs are uncontrolled: nothing travels while a visitor types,
and what was typed survives a failed submit. Each message has a reserved line: showing one moves nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any

import reflex as rx
from reflex.components.core.banner import has_connection_errors
from reflex.components.el.elements.base import BaseHTML
from reflex.utils.imports import ImportVar
from reflex.vars.base import VarData

from publisher.content import form_copy
from publisher.content.models import Book, PageCopy
from publisher.rules import list_rules
from publisher.rules.form_fields import HONEYPOT_FIELD, TICKED, WAITLIST, Form, FormField
from publisher.web.components.layout import page_heading
from publisher.web.page_html import ERROR_SUMMARY_ATTRIBUTE, FORM_ALERT_ATTRIBUTE, error_id
from publisher.web.submissions import error_var

if TYPE_CHECKING:
    from publisher.web.submissions import FormLifecycle


@dataclass(frozen=True)
class FormSection:
    """A form's region and the alert that replaces it once sent, alike on the form page and its sent page."""

    section_id: str
    label: str  # the region's accessible name
    panel_id: str
    title: str
    text: str
    again_label: str


_INPUT = (
    "mt-1 block rounded-md border border-stone-400 bg-white px-3 py-2 text-base text-stone-900 "
    "shadow-sm focus:border-amber-700 focus:outline-none focus:ring-2 focus:ring-amber-600 "
    "aria-invalid:border-red-700"
)
_LABEL = "block text-base font-semibold text-stone-900"
_ERROR = "mt-1 min-h-6 text-sm font-medium text-red-800"


def text_field(
    field_id: str,
    name: str,
    label: str | rx.Component,
    error: rx.Var[str],
    *,
    input_type: str = "text",
    autocomplete: str = "off",
    width_class: str = "w-full",
    **input_props,
) -> rx.Component:
    """A labelled control and its message line; ``label`` may be a ready <label> when its text is not fixed."""
    textarea = input_type == "textarea"
    control = rx.el.textarea if textarea else rx.el.input
    props: dict[str, Any] = {"rows": 6} if textarea else {"type": input_type, "auto_complete": autocomplete}
    if isinstance(label, str):
        label = rx.el.label(label, html_for=field_id, class_name=_LABEL)
    return rx.el.div(
        label,
        control(
            id=field_id,
            name=name,
            **props,
            class_name=f"{_INPUT} {width_class}",
            aria_invalid=rx.cond(error != "", "true", "false"),
            aria_describedby=error_id(field_id),  # the message line below, always there
            **input_props,
        ),
        rx.el.p(error, id=error_id(field_id), class_name=_ERROR),
    )


def declared_field(form: Form, declared: FormField, state: type[rx.State] | None) -> rx.Component:
    """``state`` None: a form whose messages only the server writes. A box is never wrong: no message line."""
    field_id = form.element_id(declared.name)
    if declared.input_type == "checkbox":
        return rx.el.div(
            rx.el.input(id=field_id, name=declared.name, type="checkbox", value=TICKED, class_name="mt-1 size-5"),
            rx.el.label(declared.label, html_for=field_id, class_name="text-base text-stone-900"),
            class_name="my-2 flex items-start gap-3 accent-amber-800",
        )
    email: dict[str, Any] = {"input_mode": "email", "spell_check": False} if declared.input_type == "email" else {}
    return text_field(
        field_id,
        declared.name,
        declared.label,
        rx.Var.create("") if state is None else getattr(state, error_var(declared.name)),
        input_type=declared.input_type,
        autocomplete=declared.autocomplete,
        **email,
    )


def declared_fields(form: Form, state: type[rx.State] | None) -> list[rx.Component]:
    """Consecutive half-width fields share a row on a wide screen."""
    shown: list[rx.Component] = []
    for half_width, group in groupby(form.fields, key=lambda declared: declared.half_width):
        fields = [declared_field(form, declared, state) for declared in group]
        shown.extend([rx.el.div(*fields, class_name="grid gap-x-4 sm:grid-cols-2")] if half_width else fields)
    return shown


def honeypot_field(form: Form) -> rx.Component:
    """A field people never see or reach; bots that fill every input give themselves away."""
    field_id = form.element_id(HONEYPOT_FIELD)
    return rx.el.div(
        rx.el.label(form_copy.HONEYPOT_LABEL, html_for=field_id),
        rx.el.input(id=field_id, name=HONEYPOT_FIELD, type="text", tab_index=-1, auto_complete="off"),
        aria_hidden="true",
        class_name="absolute -left-[10000px] top-auto h-px w-px overflow-hidden",
    )


BUTTON_CLASS = (
    "inline-flex min-w-40 items-center justify-center rounded-md bg-amber-800 px-6 py-3 text-base "
    "font-semibold text-white shadow-sm transition-colors hover:bg-amber-900 focus-visible:outline "
    "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-amber-800 "
    "disabled:cursor-wait disabled:opacity-80"
)


def submit_button(label: str, busy_label: str, busy: rx.Var[bool]) -> rx.Component:
    """Disabled only while a submit is in flight: before the app has started, the form posts itself."""
    return rx.el.button(
        rx.cond(busy, busy_label, label),
        type="submit",
        disabled=busy,
        aria_busy=rx.cond(busy, "true", "false"),
        class_name=BUTTON_CLASS,
    )


def form_alert(message: rx.Var[str] | str) -> rx.Component:
    """Always there, hidden while empty, so the server's answer to a plain POST fills the element the app does."""
    return rx.el.div(
        rx.el.p(
            message,
            hidden=message == "",
            class_name="rounded-md border border-red-300 bg-red-50 px-4 py-3 font-medium text-red-900",
            custom_attrs={FORM_ALERT_ATTRIBUTE: ""},
        ),
        role="alert",
        class_name="mb-4",
    )


def error_summary(section_id: str) -> rx.Component:
    """Filled by the server's answer to a plain POST; the app moves focus to the first invalid field instead."""
    return rx.el.div(
        rx.el.h2(form_copy.ERROR_SUMMARY_TITLE, class_name="font-serif text-xl font-bold text-red-900"),
        rx.el.ul(class_name="mt-2 list-disc pl-6 text-base text-red-900 [&_a]:font-semibold [&_a]:underline"),
        id=f"{section_id}-summary",
        hidden=True,
        tab_index=-1,
        custom_attrs={ERROR_SUMMARY_ATTRIBUTE: ""},
        class_name="mb-6 rounded-md border-2 border-red-700 bg-white px-4 py-3 focus:outline-none",
    )


_AGAIN = (
    "mt-4 inline-block rounded-md border border-emerald-800 px-4 py-2 font-semibold text-emerald-900 "
    "hover:bg-emerald-100"
)


def success_panel(section: FormSection, on_again, note: rx.Component | None = None) -> rx.Component:
    """Focus moves here so keyboard users are not lost. ``on_again``: the app's event, or the form page's address."""
    if isinstance(on_again, str):
        again = rx.el.a(section.again_label, href=on_again, class_name=_AGAIN)
    else:
        again = rx.el.button(section.again_label, type="button", on_click=on_again, class_name=_AGAIN)
    return rx.el.div(
        rx.el.h2(section.title, class_name="font-serif text-2xl font-bold text-emerald-900"),
        rx.el.p(section.text, class_name="mt-2 text-base text-emerald-950"),
        note if note is not None else rx.fragment(),
        again,
        id=section.panel_id,
        role="status",
        tab_index=-1,
        class_name="rounded-xl border border-emerald-300 bg-emerald-50 p-6 focus:outline-none",
    )


def toast_announcer(notice_id: rx.Var[str], kind: rx.Var[str], text: rx.Var[str]) -> rx.Component:
    """Once per notice; the id shown last is kept in the page's memory, never in the browser's storage."""
    effect = f"""
useEffect(() => {{
  const noticeId = {notice_id!s};
  if (!noticeId || window.publisherLastToast === noticeId) return;
  window.publisherLastToast = noticeId;
  const show = refs["__toast"]?.[{kind!s}] ?? refs["__toast"];
  show?.({text!s});
}}, [{notice_id!s}]);
"""
    hook_data = VarData.merge(
        notice_id._get_all_var_data(),
        kind._get_all_var_data(),
        text._get_all_var_data(),
        VarData(
            imports={"react": [ImportVar(tag="useEffect")], "$/utils/state": [ImportVar(tag="refs")]},
            hooks={effect: None},
        ),
    )
    marker: rx.Var[str] = rx.Var(json.dumps("toast"), _var_type=str, _var_data=hook_data)
    return rx.el.span(hidden=True, custom_attrs={"data-announces": marker})


# The app is connected: its state arrived and the event channel has no error since.
app_connected = rx.State.is_hydrated & ~has_connection_errors


def app_form(state: type[FormLifecycle], *more: rx.Component, label: str, submit: rx.Component) -> rx.Component:
    """A form that works two ways: a plain POST to its page the server answers alone, and, once the app is
    connected, ``state.submit``; assets/site.js lets a press post natively while ``data-connected`` is not "true"."""
    form = state._form
    return rx.el.form(
        *declared_fields(form, state),
        *more,
        honeypot_field(form),
        form_alert(state.form_error),
        submit,
        on_submit=state.submit,
        method="post",
        action=form.route,
        no_validate=True,
        custom_attrs={"data-app-form": "", "data-connected": rx.cond(app_connected, "true", "false")},
        aria_label=label,
        class_name="relative flex flex-col gap-2",
    )


def form_page(
    copy: PageCopy, state: type[FormLifecycle], section: FormSection, form: rx.Component, note=None
) -> tuple[rx.Component, ...]:
    return (
        page_heading(copy),
        rx.el.section(
            error_summary(section.section_id),
            rx.cond(state.succeeded, success_panel(section, state.start_over, note), form),
            toast_announcer(state.notice_id, state.notice_kind, state.notice_text),
            id=section.section_id,
            aria_label=section.label,
            custom_attrs={"data-hydrated": rx.cond(rx.State.is_hydrated, "true", "false")},
            class_name="max-w-xl",
        ),
    )


def sent_page(copy: PageCopy, section: FormSection, form_route: str, note=None) -> tuple[rx.Component, ...]:
    """Where a form's plain POST leads after a success: the success alert the app shows."""
    return (
        page_heading(copy),
        rx.el.section(
            success_panel(section, form_route, note),
            id=section.section_id,
            aria_label=section.label,
            class_name="max-w-xl",
        ),
    )


# The part of a forthcoming book's page its form's plain POST leads to (server/plain_forms.py): shown by
# CSS alone (:target) in place of the form, so the page stays static.
WAITLIST_THANKS_ID = WAITLIST.element_id("success")
WAITLIST_SECTION_ID = "waitlist-form"


class PostedForm(BaseHTML):
    """Reflex's own <form> always brings the app's submit handler."""

    tag = "form"
    action: rx.Var[str]
    method: rx.Var[str]
    no_validate: rx.Var[bool]


def waitlist_form(book: Book) -> rx.Component:
    """ "Tell me when it's out" on a forthcoming book's page: a plain form, no app (docs/mailing-list.md)."""
    thanks = rx.el.div(
        rx.el.h3(form_copy.WAITLIST_THANKS_TITLE, class_name="font-serif text-xl font-bold text-emerald-900"),
        rx.el.p(form_copy.WAITLIST_THANKS_TEXT, class_name="mt-2 text-base text-emerald-950"),
        rx.el.a(form_copy.WAITLIST_AGAIN, href=f"#{WAITLIST_SECTION_ID}", class_name=_AGAIN),
        id=WAITLIST_THANKS_ID,
        role="status",
        tab_index=-1,
        class_name="peer hidden rounded-xl border border-emerald-300 bg-emerald-50 p-6 target:block",
    )
    form = PostedForm.create(
        *declared_fields(WAITLIST, None),
        honeypot_field(WAITLIST),
        form_alert(""),
        rx.el.button(form_copy.WAITLIST_BUTTON, type="submit", class_name=BUTTON_CLASS),
        method="post",
        action=book.page_path,
        no_validate=True,
        aria_labelledby=f"{WAITLIST_SECTION_ID}-title",
        class_name="relative flex flex-col gap-2 peer-target:hidden",
    )
    promise = form_copy.WAITLIST_PROMISE.format(title=book.title, days=list_rules.WAITLIST_KEEP_DAYS)
    return rx.el.section(
        rx.el.h2(
            form_copy.WAITLIST_TITLE, id=f"{WAITLIST_SECTION_ID}-title", class_name="font-serif text-2xl font-bold"
        ),
        rx.el.p(promise, class_name="mt-2 mb-4 text-base text-stone-800"),
        error_summary(WAITLIST_SECTION_ID),
        thanks,
        form,
        id=WAITLIST_SECTION_ID,
        class_name="mt-10 max-w-xl",
    )
