"""The publisher's dashboard (/admin) and the page an invitation opens (/admin/enrol).

Neither is part of the public site: never indexed, never in the sitemap or the feed, never
cached (server/middleware.py), and 404 where the cloud gateway keeps the list
(server/admin_sign_in.py). The passkey buttons are handled by ``assets/admin.js``, which
``assets/site.js`` loads only on these pages: a ceremony is HTTP, so the session's cookie is
set by an answer no script can read. Everything the dashboard shows comes from its state
(web/states/admin.py), which checks the session on every event.
"""

import reflex as rx

from publisher.content import admin_copy
from publisher.rules.admin_access import DASHBOARD_PATH, ENROL_PATH
from publisher.web.components.layout import page_heading
from publisher.web.pages.registry import site_page
from publisher.web.states.admin import AdminState

_BUTTON = (
    "inline-flex min-h-11 items-center justify-center rounded-md bg-amber-800 px-5 py-2 text-base "
    "font-semibold text-white shadow-sm hover:bg-amber-900 focus-visible:outline-2 "
    "focus-visible:outline-offset-2 focus-visible:outline-amber-700 disabled:opacity-60"
)
_QUIET_BUTTON = (
    "inline-flex min-h-11 items-center justify-center rounded-md border border-stone-400 bg-white px-4 py-2 "
    "text-base font-semibold text-stone-900 hover:bg-stone-100 focus-visible:outline-2 "
    "focus-visible:outline-offset-2 focus-visible:outline-amber-700"
)
_SECTION_HEADING = "font-serif text-2xl font-bold text-stone-900"


def _message() -> rx.Component:
    """Where admin.js says what went wrong (or that it waits for the passkey)."""
    return rx.el.p(
        "", role="status", aria_live="polite", class_name="mt-4 min-h-6 font-medium text-red-900", data_admin_message=""
    )


def _passkey_button(label: str, action: str) -> rx.Component:
    texts = {
        "data_working": admin_copy.WORKING,
        "data_cancelled": admin_copy.CANCELLED,
        "data_unsupported": admin_copy.NO_PASSKEY_SUPPORT,
    }
    return rx.el.button(label, type="button", class_name=_BUTTON, **{f"data_admin_{action}": ""}, **texts)


def _sign_in() -> rx.Component:
    return rx.el.div(
        rx.el.p(admin_copy.DASHBOARD_PAGE.intro, class_name="mb-6 max-w-3xl text-lg text-stone-700"),
        _passkey_button(admin_copy.SIGN_IN_BUTTON, "sign_in"),
        _message(),
        rx.cond(AdminState.problem != "", rx.el.p(AdminState.problem, role="alert", class_name="mt-4 text-red-900")),
    )


def _readers() -> rx.Component:
    return rx.el.section(
        rx.el.h2("Readers", class_name=_SECTION_HEADING),
        rx.el.dl(
            rx.foreach(
                AdminState.readers,
                lambda row: rx.el.div(
                    rx.el.dt(row["label"], class_name="text-sm font-medium text-stone-700"),
                    rx.el.dd(row["count"], class_name="text-2xl font-bold text-stone-900"),
                    class_name="rounded-md border border-stone-300 bg-white p-3",
                ),
            ),
            class_name="mt-3 grid grid-cols-2 gap-3 sm:grid-cols-4",
        ),
        aria_labelledby="readers",
        id="readers",
        class_name="mt-8",
    )


def _dashboard() -> rx.Component:
    return rx.el.div(
        rx.el.div(
            rx.el.p(AdminState.admin_name, class_name="text-base text-stone-700"),
            rx.el.button(admin_copy.SIGN_OUT_BUTTON, type="button", class_name=_QUIET_BUTTON, data_admin_sign_out=""),
            class_name="flex flex-wrap items-center justify-between gap-3",
        ),
        _message(),
        _readers(),
    )


@site_page(
    route=DASHBOARD_PATH,
    copy=admin_copy.DASHBOARD_PAGE,
    on_load=AdminState.open,
    in_sitemap=False,
    indexed=False,
)
def dashboard():
    return (
        rx.el.div(
            page_heading(admin_copy.DASHBOARD_PAGE, intro=False),
            rx.cond(AdminState.signed_in, _dashboard(), _sign_in()),
            data_admin_page="",
        ),
    )


@site_page(route=ENROL_PATH, copy=admin_copy.ENROL_PAGE, in_sitemap=False, indexed=False)
def enrol():
    return (
        rx.el.div(
            page_heading(admin_copy.ENROL_PAGE),
            _passkey_button(admin_copy.CREATE_PASSKEY_BUTTON, "enrol"),
            _message(),
            data_admin_page="",
        ),
    )
