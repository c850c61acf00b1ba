"""The release feed (``/releases.atom``, written at build time): new releases without an email address."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from publisher.content import books, images
from publisher.content.models import Book
from publisher.content.site import BRAND_NAME, LOGO_IMAGE
from publisher.rules import release_rules
from publisher.web.page_kinds import ALL_OUT

FEED_PATH = "/releases.atom"
CONTENT_TYPE = "application/atom+xml"


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=UTC)


def _moment(book: Book) -> datetime:
    return book.release.utc if book.release else _midnight(book.publication_date or books.CATALOGUE_UPDATED)


def release_feed(site_url: str, now: datetime = ALL_OUT) -> str:
    """One entry per book out at ``now``, newest first, dated by its release moment, else its publication
    date, else ``CATALOGUE_UPDATED``."""
    from feedgen.feed import FeedGenerator  # noqa: PLC0415 - build-only dependency, absent from the image

    feed = FeedGenerator()
    feed.id(f"{site_url}{FEED_PATH}")
    feed.title(books.FEED_TITLE)
    feed.subtitle(books.FEED_SUBTITLE)
    feed.link(href=f"{site_url}{FEED_PATH}", rel="self", type=CONTENT_TYPE)
    feed.link(href=f"{site_url}/", rel="alternate", type="text/html")
    feed.author({"name": BRAND_NAME, "uri": f"{site_url}/"})
    feed.logo(f"{site_url}{LOGO_IMAGE}")
    feed.language("en")
    latest = [book for book in books.latest_first(books.BOOKS) if release_rules.is_out(book, now)]
    dates = {book.slug: _moment(book) for book in latest}
    feed.updated(max(dates.values(), default=_midnight(books.CATALOGUE_UPDATED)))
    for book in reversed(latest):  # feedgen puts the last added first
        entry = feed.add_entry()
        url = f"{site_url}{book.page_path}"
        entry.id(url)
        entry.title(book.title)
        entry.link(href=url, rel="alternate", type="text/html")
        entry.summary(f"{book.subtitle}. {book.description}")
        cover = images.largest_url(book.cover_image)
        mime = images.MIME.get(cover.rsplit(".", 1)[-1], "image/svg+xml")
        entry.link(href=f"{site_url}{cover}", rel="enclosure", type=mime, title=book.image_alt)
        for name in book.author_names:
            entry.author({"name": name})
        entry.updated(dates[book.slug])
        if book.publication_date or book.release:
            entry.published(dates[book.slug])
    return feed.atom_str(pretty=True).decode("utf-8")
