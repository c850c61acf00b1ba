"""The dashboard (/admin) and the invitation's page (/admin/enrol). The passkey buttons are ``assets/admin.js``'s:
a ceremony is HTTP, so the session's cookie is set by an answer no script can read."""

import reflex as rx

from publisher.content import admin_copy
from publisher.rules.admin_access import AUDIT_PATH, DASHBOARD_PATH, ENROL_PATH, EXPORT_PATH
from publisher.web import charts
from publisher.web.components.layout import page_heading
from publisher.web.pages.registry import site_page
from publisher.web.states.admin_state import TOP_DAYS, AdminState

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
_SECTION_HEADING = "font-serif text-xl font-bold text-stone-900 sm:text-2xl"


def _message() -> rx.Component:
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


# Open where the page is at least 640 px wide when drawn; on a phone a part made ``closed_on_a_phone`` starts closed.
_WIDE: rx.Var[bool] = rx.Var(
    "typeof window === 'undefined' || window.matchMedia('(min-width: 640px)').matches", _var_type=bool
)


def _section(section_id: str, heading: str, *children: rx.Component, closed_on_a_phone: bool = False) -> rx.Component:
    """On a phone, the parts read less often are a closed disclosure, so the page reads in four screens."""
    inline = " inline" if closed_on_a_phone else ""  # beside the disclosure's triangle
    part = rx.el.h2(heading, id=f"{section_id}-heading", class_name=_SECTION_HEADING + inline)
    if closed_on_a_phone:
        part, children = rx.el.details(rx.el.summary(part, class_name="cursor-pointer"), *children, open=_WIDE), ()
    return rx.el.section(
        part,
        *children,
        aria_labelledby=f"{section_id}-heading",
        id=section_id,
        class_name="mt-8 sm:mt-10",
    )


# A table's cell: under 640 px (``sm``) a row is a paragraph, each cell its heading (``data-label``) and
# its value, an empty cell nothing, so nothing scrolls sideways on a phone; the roles keep a screen reader's table.
_CELL = (
    "px-2 py-1 align-top [overflow-wrap:anywhere] max-sm:inline max-sm:p-0 max-sm:pr-3 max-sm:empty:hidden "
    "max-sm:before:pr-1 max-sm:before:font-semibold max-sm:before:text-stone-700 "
    "max-sm:before:content-[attr(data-label)]"
)
SHOWN_ROWS = 3  # a list's first rows; the rest behind "Show all N"
Columns = tuple[tuple[str, str], ...]  # a table's columns: (key in a row, heading)


def _rows_table(rows, columns: Columns, caption: str) -> rx.Component:
    return rx.el.table(
        rx.el.caption(caption, class_name="sr-only"),
        rx.el.thead(
            rx.el.tr(
                *(
                    rx.el.th(label, scope="col", role="columnheader", class_name="px-2 py-1 text-left")
                    for _, label in columns
                ),
                role="row",
            ),
            role="rowgroup",
            class_name="max-sm:sr-only",
        ),
        rx.el.tbody(
            rx.foreach(
                rows,
                lambda row: rx.el.tr(
                    *(rx.el.td(row[key], role="cell", data_label=label, class_name=_CELL) for key, label in columns),
                    role="row",
                    class_name="border-t border-stone-200 max-sm:block max-sm:px-2 max-sm:py-1.5",
                ),
            ),
            role="rowgroup",
            class_name="max-sm:block",
        ),
        role="table",
        class_name="mt-3 w-full rounded-md border border-stone-300 bg-white text-sm text-stone-900 max-sm:block",
    )


def _table(rows, columns: Columns, caption: str, empty: str = admin_copy.NOTHING_YET) -> rx.Component:
    """The first rows, the rest behind a disclosure; every cell is text (React escapes it)."""
    return rx.cond(
        rows.length() > 0,
        rx.fragment(
            _rows_table(rows[:SHOWN_ROWS], columns, caption),
            rx.cond(
                rows.length() > SHOWN_ROWS,
                rx.el.details(
                    rx.el.summary(
                        admin_copy.SHOW_ALL.format(count=rows.length()),
                        class_name="cursor-pointer py-2 font-semibold text-amber-900",
                    ),
                    _rows_table(rows[SHOWN_ROWS:], columns, caption),
                ),
            ),
        ),
        rx.el.p(empty, role="status", class_name="mt-3 text-stone-700"),
    )


def _part(name: str) -> rx.vars.ArrayVar:
    """Empty until it is read, as after a reload, when the tab's stored state has no parts yet."""
    return AdminState.parts.get(name, [])  # type: ignore[attr-defined]  # a dict field's var, typed as a list's


def _figures(rows, value_class: str, columns: str) -> rx.Component:
    return rx.el.dl(
        rx.foreach(
            rows,
            lambda row: rx.el.div(
                rx.el.dt(row["label"], class_name="text-sm font-medium text-stone-700"),
                rx.el.dd(row["value"], class_name=f"{value_class} text-stone-900"),
                class_name="rounded-md border border-stone-300 bg-white p-3",
            ),
        ),
        class_name=f"mt-3 grid gap-3 {columns}",
    )


def _chart(chart) -> rx.Component:
    return rx.el.figure(
        rx.el.img(
            src=chart["src"],
            alt=chart["alt"],
            class_name="h-auto w-full",
            width=str(charts.WIDTH),
            height=str(charts.HEIGHT),
        ),
        rx.el.figcaption(chart["alt"], class_name="mt-1 text-sm text-stone-700"),
        class_name="mt-4 rounded-md border border-stone-300 bg-white p-2",
    )


def _one_field_form(field_id, label, name: str, kind: str, button: str, on_submit, *hidden) -> rx.Component:
    return rx.el.form(
        *hidden,
        rx.el.label(label, html_for=field_id, class_name="block font-semibold"),
        rx.el.div(
            rx.el.input(
                id=field_id,
                name=name,
                type=kind,
                auto_complete="off",
                required=kind != "search",
                class_name="min-h-11 flex-1 rounded-md border border-stone-400 px-3 py-2",
            ),
            rx.el.button(button, type="submit", class_name=_QUIET_BUTTON),
            class_name="mt-1 flex gap-2",
        ),
        on_submit=on_submit,
        reset_on_submit=kind == "email",
        class_name="mt-6",
    )


def _readers() -> rx.Component:
    return _section(
        "readers",
        admin_copy.READERS,
        _figures(_part("readers"), "text-2xl font-bold", "grid-cols-2 sm:grid-cols-4"),
        rx.foreach(_part("charts"), _chart),
        _one_field_form(
            "admin-search", admin_copy.SEARCH_LABEL, "query", "search", admin_copy.SEARCH_BUTTON, AdminState.search
        ),
        rx.cond(
            AdminState.searched,
            _table(AdminState.found, _READER_COLUMNS, admin_copy.SEARCH_BUTTON, admin_copy.NO_READER_FOUND),
        ),
        *_titled("signups"),
        _one_field_form(
            "admin-forget", admin_copy.FORGET_LABEL, "address", "email", admin_copy.FORGET_BUTTON, AdminState.ask_forget
        ),
        _download(EXPORT_PATH, admin_copy.EXPORT_BUTTON),
    )


_READER_COLUMNS = (("email", "Address"), ("status", "Status"), ("joined_at", "Joined"))


def _subheading(text: str) -> rx.Component:
    return rx.el.h3(text, class_name="mt-6 font-serif text-xl font-bold text-stone-900")


def _top(key: str, views: str) -> Columns:
    return ("key", key), ("visitors", admin_copy.COLUMN_VISITORS), ("views", views)


_BOOK, _PEOPLE = ("book", admin_copy.COLUMN_BOOK), ("people", admin_copy.COLUMN_PRESSERS)
_DATE = ("at", "Date")
TABLES: dict[str, tuple[str, Columns]] = {
    # a list of ``AdminState.parts``: (heading, columns as (key, heading))
    "signups": (admin_copy.LATEST_SIGNUPS, _READER_COLUMNS),
    "visits_pages": (admin_copy.TOP_PAGES, _top(admin_copy.COLUMN_PAGE, admin_copy.COLUMN_PAGE_VIEWS)),
    "visits_sources": (admin_copy.TOP_SOURCES, _top(admin_copy.COLUMN_SOURCE, admin_copy.COLUMN_ARRIVALS)),
    "visits_campaigns": (admin_copy.TOP_CAMPAIGNS, _top(admin_copy.COLUMN_CAMPAIGN, admin_copy.COLUMN_ARRIVALS)),
    "visits_buys": (
        admin_copy.BUY_PRESSES,
        (_BOOK, ("store", admin_copy.COLUMN_STORE), ("presses", admin_copy.COLUMN_PRESSES), _PEOPLE),
    ),
    "visits_books": (
        admin_copy.BOOK_PAGES_TO_PRESSES,
        (_BOOK, ("visits", admin_copy.COLUMN_PAGE_VISITS), ("presses", admin_copy.COLUMN_BOOK_PRESSES), _PEOPLE),
    ),
    "messages": (
        admin_copy.MESSAGES,
        (
            ("received_at", "Date"),
            ("sender", "From"),
            ("email", "Address"),
            ("subject", "Subject"),
            ("delivery", "Email"),
            ("text", "Message"),
        ),
    ),
    "releases": (
        admin_copy.RELEASES,
        (
            ("title", "Book"),
            ("state", "State"),
            ("progress", "Sent"),
            ("hard", "Hard bounces"),
            ("soft", "Soft bounces"),
            ("complaints", "Complaints"),
            ("bounce_rate", "Bounce rate"),
            ("complaint_rate", "Complaint rate"),
            ("paused", "Why it paused"),
        ),
    ),
    "bounces": (
        admin_copy.BOUNCES,
        (_DATE, ("email", "Address"), ("kind", "Kind"), ("source", "Source"), ("reason", "Reason")),
    ),
    "left": (
        admin_copy.LEFT_IN_MAILBOX,
        (("date", "Date"), ("sender", "From"), ("subject", "Subject"), ("why", "Why it was left")),
    ),
    "audit": (admin_copy.AUDIT, (_DATE, ("admin", "Admin"), ("action", "Action"), ("target", "On"))),
}


def _listed(name: str) -> rx.Component:
    heading, columns = TABLES[name]
    return _table(_part(name), columns, heading.format(days=TOP_DAYS))


def _titled(name: str) -> tuple[rx.Component, rx.Component]:
    return _subheading(TABLES[name][0].format(days=TOP_DAYS)), _listed(name)


def _visits() -> rx.Component:
    counted = rx.el.div(
        _figures(_part("visits_figures"), "text-2xl font-bold", "grid-cols-2 sm:grid-cols-3"),
        rx.foreach(_part("visits_chart"), _chart),
        *(part for name in TABLES if name.startswith("visits_") for part in _titled(name)),
        rx.el.p(admin_copy.NO_SCRIPT_NOTE, class_name="mt-6 text-sm text-stone-700"),
    )
    return _section(
        "visits",
        admin_copy.VISITS,
        rx.cond(
            _part("visits_off").length() > 0,
            rx.foreach(_part("visits_off"), lambda note: rx.el.p(note["text"], class_name="mt-3 text-stone-700")),
            counted,
        ),
        closed_on_a_phone=True,
    )


def _action(row) -> rx.Component:
    return rx.cond(
        row["action"] != "",
        rx.el.button(
            row["action_label"],
            type="button",
            on_click=AdminState.ask_release(row["slug"]),  # type: ignore[operator]  # rx.event is typed loosely
            class_name=_QUIET_BUTTON,
        ),
    )


def _steering(row) -> rx.Component:
    hidden_slug = rx.el.input(type="hidden", name="slug", value=row["slug"])
    return rx.el.li(
        _subheading(row["title"]),
        rx.el.p(row["line"], class_name="mt-1 text-stone-900"),
        _chart(row),
        rx.cond(
            row["action"] != "",
            _one_field_form(
                row["move_id"],
                row["move_label"],
                "at",
                "datetime-local",
                admin_copy.MOVE_BUTTON,
                AdminState.ask_move,
                hidden_slug,
            ),
        ),
        rx.el.div(_action(row), class_name="mt-3"),
    )


def _forthcoming() -> rx.Component:
    return rx.cond(
        _part("forthcoming").length() > 0,
        _section("forthcoming", admin_copy.FORTHCOMING, rx.el.ul(rx.foreach(_part("forthcoming"), _steering))),
    )


def _download(path: str, label: str) -> rx.Component:
    """A POST whose answer the browser saves, sent by ``assets/admin.js`` (the app's forms never post natively)."""
    return rx.el.div(
        rx.el.button(label, type="button", class_name=_QUIET_BUTTON, data_admin_download=path),
        class_name="mt-4",
    )


def _asking() -> rx.Component:
    return rx.el.div(
        rx.cond(
            AdminState.question != "",
            rx.el.div(
                rx.el.p(AdminState.question, id="admin-question", class_name="font-semibold text-stone-900"),
                rx.el.div(
                    rx.el.button(
                        admin_copy.CONFIRM_BUTTON, type="button", on_click=AdminState.confirm, class_name=_BUTTON
                    ),
                    rx.el.button(
                        admin_copy.CANCEL_BUTTON, type="button", on_click=AdminState.cancel, class_name=_QUIET_BUTTON
                    ),
                    class_name="mt-3 flex flex-wrap gap-2",
                ),
                role="alertdialog",
                aria_labelledby="admin-question",
                class_name="rounded-md border-2 border-amber-700 bg-amber-50 p-4",
            ),
        ),
        rx.cond(
            AdminState.notice != "",
            rx.el.p(AdminState.notice, role="status", class_name="mt-3 rounded-md bg-emerald-50 p-3 text-emerald-950"),
        ),
        class_name="sticky top-0 z-10 mt-4",
    )


def _dashboard() -> rx.Component:
    return rx.el.div(
        rx.el.div(
            rx.el.p(AdminState.admin_name, class_name="text-base text-stone-700"),
            rx.el.button(admin_copy.SIGN_OUT_BUTTON, type="button", class_name=_QUIET_BUTTON, data_admin_sign_out=""),
            class_name="flex flex-wrap items-center justify-between gap-3",
        ),
        _message(),
        _asking(),
        _forthcoming(),
        _readers(),
        _visits(),
        _section("messages", admin_copy.MESSAGES, _listed("messages"), closed_on_a_phone=True),
        _section(
            "releases",
            admin_copy.RELEASES,
            _listed("releases"),
            rx.el.div(rx.foreach(_part("releases"), _action), class_name="mt-3 flex flex-wrap gap-2"),
        ),
        _section("bounces", admin_copy.BOUNCES, _listed("bounces"), *_titled("left"), closed_on_a_phone=True),
        _section(
            "health",
            admin_copy.HEALTH,
            _figures(_part("health"), "text-sm font-semibold sm:text-base", "grid-cols-2 sm:grid-cols-3"),
        ),
        _section(
            "audit",
            admin_copy.AUDIT,
            _listed("audit"),
            _download(AUDIT_PATH, admin_copy.AUDIT_DOWNLOAD_BUTTON),
            closed_on_a_phone=True,
        ),
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
