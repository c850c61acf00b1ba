"""The shapes of the site's content, checked when the content loads (docs/product.md, Content)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, field_validator, model_validator

NonEmpty = Field(min_length=1)


class _Content(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


def isbn13_problem(value: str) -> str | None:
    digits = value.replace("-", "").replace(" ", "")
    if len(digits) != 13 or not digits.isdigit():
        return "an ISBN-13 has 13 digits (hyphens allowed)"
    if not digits.startswith(("978", "979")):
        return "an ISBN-13 starts with 978 or 979"
    check = (10 - sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits[:12])) % 10) % 10
    if int(digits[12]) != check:
        return f"its check digit should be {check}, not {digits[12]}: a digit is mistyped"
    return None


Slug = Annotated[str, Field(min_length=1, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")]
BookFormat = Literal["Paperback", "Hardcover", "E-book", "Audiobook"]
BOOK_PAGES = "/books"  # each book's page is /books/<slug>
# Languages a book may be in: the code (BCP 47, for search engines) and the name the page shows.
LANGUAGES = {"en": "English"}


class Release(_Content):
    """A wall-clock time in a named (IANA) zone: one the zone skips or repeats is refused, never guessed."""

    at: datetime  # the local time, without an offset: 2027-03-12T09:00
    zone: str = NonEmpty  # "Europe/London"

    @model_validator(mode="after")
    def _one_real_moment(self) -> Release:
        if self.at.tzinfo is not None:
            raise ValueError(f"give {self.at} as the local time in {self.zone}, without an offset")
        try:
            zone = ZoneInfo(self.zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{self.zone!r} is not a time zone name (IANA, such as Europe/London)") from None
        local = self.at.replace(tzinfo=zone)
        if local.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != self.at:
            raise ValueError(f"{self.at:%Y-%m-%d %H:%M} does not exist in {self.zone} (the clocks skip it)")
        if local.utcoffset() != self.at.replace(tzinfo=zone, fold=1).utcoffset():
            raise ValueError(
                f"{self.at:%Y-%m-%d %H:%M} happens twice in {self.zone} (the clocks go back): pick another"
            )
        return self

    @property
    def utc(self) -> datetime:
        return self.at.replace(tzinfo=ZoneInfo(self.zone)).astimezone(UTC)


class Book(_Content):
    """A book: its card on Home and its own page; an edition detail not given is left out, never made up."""

    slug: Slug
    title: str = NonEmpty
    subtitle: str = NonEmpty
    caption: str = NonEmpty
    description: str = NonEmpty
    book_link: HttpUrl
    cover_image: str = NonEmpty  # under assets/: SVG, or a JPEG, PNG or WebP of any size
    image_alt: str = NonEmpty
    author_names: tuple[str, ...] = Field(min_length=1)
    # The edition, as far as the publisher has given it.
    format: BookFormat | None = None
    isbn13: str | None = None  # checked, kept as written ("978-1-...")
    page_count: int | None = Field(default=None, gt=0)
    age_range: str | None = Field(default=None, min_length=1)  # "5 and up"
    publication_date: date | None = None
    language: str = "en"
    # A forthcoming book: when it comes out; until then its pages say so and take names.
    release: Release | None = None
    preorder_link: HttpUrl | None = None  # the retailer's pre-order page, if there is one

    @model_validator(mode="after")
    def _release_fits(self) -> Book:
        if self.preorder_link is not None and self.release is None:
            raise ValueError(f"{self.slug}: a pre-order link needs a release moment")
        if self.release and self.publication_date and self.publication_date != self.release.at.date():
            raise ValueError(f"{self.slug}: the publication date is not the release moment's date")
        return self

    @field_validator("isbn13")
    @classmethod
    def _valid_isbn13(cls, value: str | None) -> str | None:
        if value is not None and (problem := isbn13_problem(value)):
            raise ValueError(f"{value!r} is not a valid ISBN-13: {problem}")
        return value

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"{value!r} is not one of the languages the site names: {', '.join(LANGUAGES)}")
        return value

    @property
    def page_path(self) -> str:
        return f"{BOOK_PAGES}/{self.slug}"

    @property
    def isbn13_digits(self) -> str | None:
        return None if self.isbn13 is None else self.isbn13.replace("-", "").replace(" ", "")


class Author(_Content):
    """An author card on About."""

    slug: Slug
    name: str = NonEmpty
    role: str = NonEmpty
    author_bio: tuple[str, ...] = Field(min_length=1)
    author_image: str = NonEmpty  # under assets/: SVG, or a JPEG, PNG or WebP of any size
    image_alt: str = NonEmpty
    amazon_url: HttpUrl


class SocialLink(_Content):
    name: str = NonEmpty
    url: HttpUrl


@dataclass(frozen=True)
class PageCopy:
    """What one page says: for search results and link previews, and on the page."""

    title: str  # the brand is added unless the title names it (seo.full_title)
    description: str
    keywords: tuple[str, ...]
    heading: str
    intro: str
    short_name: str  # in the navigation and breadcrumbs
