"""Everything the site says, in one place: a title, a bio, a sentence or a link changes here and
nowhere else. The models check the content when it loads: an empty field or a malformed URL
stops the build."""

from publisher.content.authors import AUTHORS, author_by_name
from publisher.content.books import BOOKS
from publisher.content.models import Author, Book, PageCopy
from publisher.content.site import (
    AFFILIATE_NOTE,
    BRAND_NAME,
    LOGO_IMAGE,
    SHARE_IMAGE,
    SHARE_IMAGE_ALT,
    SHARE_IMAGE_HEIGHT,
    SHARE_IMAGE_WIDTH,
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
    "SHARE_IMAGE_HEIGHT",
    "SHARE_IMAGE_WIDTH",
    "SOCIAL_LINKS",
    "TAGLINE",
    "Author",
    "Book",
    "PageCopy",
    "author_by_name",
]
