"""The site's pages, one thin module each: importing this package declares every page (registry.py)."""

from publisher.web.pages import (  # noqa: F401 (each declares its page)
    about,
    admin,
    book,
    confirm,
    contact,
    home,
    not_found,
    subscribe,
    unsubscribe,
)
from publisher.web.pages.registry import PAGES

__all__ = ["PAGES"]
