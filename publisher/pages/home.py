"""Home: a page header and the latest releases."""

import reflex as rx

from publisher.components.books import latest_releases
from publisher.components.layout import page_heading, page_layout

ROUTE = "/"


def home() -> rx.Component:
    return page_layout(
        ROUTE,
        page_heading(
            "Books about the animals we confuse",
            "Is it a guinea pig or a hamster? A crocodile or an alligator? Our picture "
            "books, coloring books and puzzle books help curious readers of every age "
            "tell look-alike animals apart, one giggle at a time.",
        ),
        latest_releases(),
    )
