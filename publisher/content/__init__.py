"""Everything the site says, in one place: books, authors, each page's copy, the forms' words.

A maintainer changes a title, a bio, a sentence or a link here and nowhere else;
pages, metadata, structured data, the sitemap and the forms all read from this
package. The models check the content when it loads (an empty field or a
malformed URL stops the build).

- models.py: the shapes (Book, Author, SocialLink, PageCopy);
- books.py, authors.py: the books and the authors, with the words of their cards;
- site.py: the brand, social links and the words of the shared layout;
- page_copy.py: each page's heading, introduction, title, description and keywords;
- form_copy.py: the forms' labels, buttons, validation messages, toasts and alerts.
"""

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
