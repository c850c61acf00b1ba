"""Each page declared once: what the app, the navigation, the sitemap and the URL rule read."""

from __future__ import annotations

import pytest
import reflex as rx

from publisher.content import page_copy
from publisher.web.pages import PAGES
from publisher.web.pages.registry import PageRegistry, site_page

FAQ = page_copy.CONTACT


def faq_registry(**declaration) -> PageRegistry:
    """A site of two pages: Home in the navigation, and /faq, declared with ``declaration``."""
    registry = PageRegistry()
    site_page(route="/", copy=FAQ, nav_position=1, registry=registry)(lambda: (rx.el.p("home"),))
    site_page(route="/faq", copy=FAQ, registry=registry, **declaration)(lambda: (rx.el.p("faq"),))
    return registry


class RecordingApp:
    def __init__(self):
        self.pages: list[dict] = []

    def add_page(self, component, **page):
        self.pages.append({"component": component, **page})


def test_the_navigation_is_read_from_the_declarations_in_their_order_and_lists_only_its_pages():
    assert [(item.label, item.route) for item in PAGES.navigation()] == [
        ("Home", "/"),
        ("About", "/about"),
        ("Subscribe", "/subscribe"),
        ("Contact Us", "/contact-us"),
    ]
    assert [item.route for item in faq_registry().navigation()] == ["/"]  # /faq is outside it


def test_the_app_registers_every_page_with_its_metadata_its_place_in_the_sitemap_and_its_module():
    app = RecordingApp()
    faq_registry(in_sitemap=False).add_to(app)
    assert [page["route"] for page in app.pages] == ["/", "/faq"]
    assert [page["context"] for page in app.pages] == [{"sitemap": {}}, {"sitemap": None}]
    assert app.pages[1]["title"] == "Contact Us | Animals We Confuse"
    assert app.pages[1]["description"] == FAQ.description
    render = app.pages[1]["component"]
    assert render.__module__ == __name__  # Reflex places the page's compiled code by it
    assert "faq" in str(render().render())


def test_a_route_declared_twice_is_refused():
    registry = faq_registry()
    with pytest.raises(ValueError, match="the route '/faq' is declared twice"):
        site_page(route="/faq", copy=FAQ, registry=registry)(lambda: ())
