"""Which pages start the app: decided from the pages themselves when the site is compiled."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import VarData

from publisher.content import page_copy
from publisher.web import page_kinds
from publisher.web.components.layout import page_heading, page_layout
from publisher.web.pages import PAGES


class MaintainerState(rx.State):
    greeting: str = "Hello"

    @rx.event
    def wave(self):
        self.greeting = "Hi!"


@dataclass
class Page:
    route: str
    component: object
    on_load: object = None
    meta: list = field(default_factory=list)


def test_the_site_today_pages_without_a_form_are_static_and_the_form_pages_start_the_app():
    from publisher.publisher import app

    kinds = page_kinds.decide(app._unevaluated_pages.values())
    assert {route: kind.starts_app for route, kind in kinds.items()} == {
        "/": False,
        "/about": False,
        "/subscribe": True,
        "/contact-us": True,
        "/subscribe/thanks": False,  # where the forms' plain POST leads: the success alert, static
        "/contact-us/thanks": False,
        "/books/coloring-book": False,  # a book's page is static, like Home
        "/books/guinea-pig-or-hamster": False,
        "/books/word-search-book": False,
        "/subscribe/confirm": True,  # the app reads the link and answers the button
        "/unsubscribe": True,
        "/admin": True,  # the dashboard: its state checks the session on every event
        "/admin/enrol": False,  # an invitation's page: its passkey button is assets/admin.js, plain HTTP
        "404": False,
    }
    for route in ("/subscribe", "/contact-us"):  # told apart by its load event, its form and its state
        reasons = kinds[route].app_reasons
        assert "its route has on_load events" in reasons and "<form> handles on_submit" in reasons
        assert any(" reads state.is_hydrated" in reason for reason in reasons)


def temporary_page():  # a maintainer's page that shows state
    greeting = rx.el.p(MaintainerState.greeting, id="greeting")
    return page_layout("/temporary", PAGES.navigation(), page_heading(page_copy.ABOUT), greeting)


SEARCH_HOOK = rx.Var(
    "bookQuery",
    _var_type=str,
    _var_data=VarData(
        imports={"react": [ImportVar(tag="useState")]},
        hooks={'const [bookQuery, setBookQuery] = useState("");': None},
    ),
)


class Carousel(rx.Component):
    library = "some-carousel@2.1.0"
    tag = "Carousel"


NEEDS_THE_APP = {
    "a temporary page that shows state": (
        Page("temporary", temporary_page),
        ("<Bare> reads maintainer_state.greeting",),
    ),
    "an on_load event alone": (
        Page("about", lambda: page_layout("/about", PAGES.navigation()), on_load=MaintainerState.wave),
        ("its route has on_load events",),
    ),
    "React code": (
        Page("index", lambda: rx.el.p(SEARCH_HOOK)),
        ('it runs the React hook `const [bookQuery, setBookQuery] = useState("");`',),
    ),
    "a library's React component": (
        Page("index", lambda: rx.el.div(Carousel.create())),
        ("<Carousel> is the React component Carousel from some-carousel",),
    ),
    "a head component": (  # part of the page
        Page("index", lambda: rx.el.p("x"), meta=[{"name": "robots"}, rx.el.title(MaintainerState.greeting)]),
        ("<Bare> reads maintainer_state.greeting",),
    ),
}


@pytest.mark.parametrize(("page", "reasons"), NEEDS_THE_APP.values(), ids=NEEDS_THE_APP.keys())
def test_each_thing_that_needs_the_app_starts_it_and_is_named(page, reasons):
    [kind] = page_kinds.decide([page]).values()
    assert (kind.route, kind.app_reasons) == (page_kinds.page_route(page.route), reasons)


def test_what_renders_completely_at_build_time_stays_static():
    """Ids (Reflex declares a ref for each), links, icons, fragments and a condition known at build time."""

    def page():
        return page_layout(
            "/",
            PAGES.navigation(),
            rx.el.section(rx.el.h2("Heading", id="heading"), id="section"),
            rx.el.a("About", href="/about"),
            rx.icon("book-open"),
            rx.fragment(rx.el.p("text")),
            rx.cond(True, rx.el.p("yes"), rx.el.p("no")),
        )

    [kind] = page_kinds.decide([Page("index", page)]).values()
    assert kind.app_reasons == ()
    assert kind.describe() == "/: static (no app, no websocket)"


def test_a_long_list_of_reasons_is_shortened_when_described():
    kind = page_kinds.PageKind("/x", tuple(f"reason {n}" for n in range(7)))
    assert kind.describe(limit=2) == "/x: starts the app: reason 0; reason 1; and 5 more"


@pytest.mark.parametrize(
    ("name", "route"),
    [("/", "/"), ("/index.html", "/"), ("/about", "/about"), ("/about/", "/about"), ("/about.html", "/about")]
    + [("/about/index.html", "/about"), ("/contact-us/", "/contact-us"), ("/no/such/page", "/no/such/page")]
    + [("index", "/"), ("about", "/about"), ("contact-us", "/contact-us"), ("books/new", "/books/new")],
)
def test_a_request_path_or_a_reflex_route_key_names_the_page_the_site_serves(name, route):
    assert page_kinds.page_route(name) == route
    assert list(page_kinds.decide([Page("404", lambda: rx.el.p("x"))])) == ["404"]  # the not-found page's key


def test_the_manifest_round_trips_and_names_the_routes_that_start_the_app(tmp_path, monkeypatch):
    kinds = {"/": page_kinds.PageKind("/", ()), "/subscribe": page_kinds.PageKind("/subscribe", ("a", "b"))}
    monkeypatch.setattr(page_kinds, "MANIFEST", tmp_path / "backend" / "page_kinds.json")
    assert page_kinds.starts_app_by_route() is None  # before any build
    page_kinds.write_manifest(kinds)
    assert page_kinds.read_manifest() == kinds
    assert page_kinds.starts_app_by_route() == {"/": False, "/subscribe": True}
