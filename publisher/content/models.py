"""The shapes of the site's content, checked when the content loads (docs/product.md, Content)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, HttpUrl

NonEmpty = Field(min_length=1)


class _Content(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class Book(_Content):
    """A book: its card on Home."""

    slug: str = NonEmpty
    title: str = NonEmpty
    subtitle: str = NonEmpty
    caption: str = NonEmpty
    description: str = NonEmpty
    book_link: HttpUrl
    cover_image: str = NonEmpty  # path under assets/, served from the site root
    image_alt: str = NonEmpty
    cover_width: int = 400
    cover_height: int = 600
    author_names: tuple[str, ...] = Field(min_length=1)


class Author(_Content):
    """An author card on About."""

    slug: str = NonEmpty
    name: str = NonEmpty
    role: str = NonEmpty
    author_bio: tuple[str, ...] = Field(min_length=1)
    author_image: str = NonEmpty
    image_alt: str = NonEmpty
    amazon_url: HttpUrl
    image_width: int = 400
    image_height: int = 400


class SocialLink(_Content):
    name: str = NonEmpty
    url: HttpUrl


@dataclass(frozen=True)
class PageCopy:
    """What one page says: its title and description for search results and link previews,
    its keywords, and its heading and introduction on the page."""

    title: str  # the brand is added unless the title names it (seo.full_title)
    description: str
    keywords: tuple[str, ...]
    heading: str
    intro: str
    # The page's name in the navigation and in breadcrumbs ("Home > About").
    short_name: str
