"""About: the two author cards."""

import reflex as rx

from publisher.components.authors import author_list
from publisher.components.layout import page_heading, page_layout

ROUTE = "/about"


def about() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "About the Authors",
            "Animals We Confuse is a small independent publisher run by a writer and an "
            "illustrator who love the animals people mix up. Meet the people behind the books.",
        ),
        author_list(),
    )
