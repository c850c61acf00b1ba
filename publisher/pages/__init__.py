"""The site's pages: one thin module per page, each declared once (registry.py).

Importing this package declares every page, so ``registry.PAGES`` is complete.
"""

from publisher.pages import (  # noqa: F401 (each declares its page)
    about,
    book,
    confirm,
    contact,
    home,
    not_found,
    subscribe,
    unsubscribe,
)
from publisher.pages.registry import PAGES

__all__ = ["PAGES"]
