"""Everything the site says, in one place; the models check it when it loads (an empty field or a
malformed URL stops the build)."""

from publisher.content.authors import AUTHORS
from publisher.content.books import BOOKS
from publisher.content.models import Author, Book, PageCopy
from publisher.content.site import (
    AFFILIATE_NOTE,
    BRAND_NAME,
    LOGO_IMAGE,
    SHARE_IMAGE,
    SHARE_IMAGE_ALT,
    SOCIAL_LINKS,
    TAGLINE,
)

__all__ = [
    "AFFILIATE_NOTE",
    "AUTHORS",
    "BOOKS",
    "BRAND_NAME",
    "LOGO_IMAGE",
    "SHARE_IMAGE",
    "SHARE_IMAGE_ALT",
    "SOCIAL_LINKS",
    "TAGLINE",
    "Author",
    "Book",
    "PageCopy",
]
