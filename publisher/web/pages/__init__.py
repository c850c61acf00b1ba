"""The site's pages: one thin module per page, each declared once (registry.py).

Importing this package declares every page, so ``registry.PAGES`` is complete.
"""

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
