"""A forthcoming book's release: whether it is out at a moment, and its moment in words (the book's zone,
and UTC for the publisher). The clock is passed in: the server, the sender and the tests give theirs."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from publisher.content import admin_copy, books
from publisher.content.models import Book, Release


def is_out(book: Book, now: datetime) -> bool:
    """A book without a release moment always is."""
    return book.release is None or now >= book.release.utc


def forthcoming(catalogue: Iterable[Book], now: datetime) -> list[Book]:
    """Soonest first."""
    coming = [book for book in catalogue if book.release is not None and not is_out(book, now)]
    return sorted(coming, key=lambda book: book.release.utc if book.release else now)


def local_words(moment: datetime, zone: str) -> str:
    """``moment`` as the book's readers read it: "12 March 2027 at 09:00 GMT (Europe/London)"."""
    local = moment.astimezone(ZoneInfo(zone))
    return books.MOMENT.format(
        date=local.strftime(books.DATE_FORMAT), time=f"{local:%H:%M}", abbr=local.tzname(), zone=zone
    )


def coming_words(book: Book) -> str:
    """The line a forthcoming book's card and page carry until its moment."""
    assert book.release is not None, book.slug
    return books.COMING.format(moment=local_words(book.release.utc, book.release.zone))


def publisher_words(moment: datetime, zone: str) -> str:
    return books.MOMENT_AND_UTC.format(local=local_words(moment, zone), utc=f"{moment.astimezone(UTC):%Y-%m-%d %H:%M}")


def send_moment(text: str, zone: str, now: datetime) -> datetime:
    """The publisher's time for a send ("2027-03-12 10:00" in the book's zone, or "now"), checked as the
    content's release moment is (a time the zone skips or repeats is refused) and refused once past."""
    try:
        moment = (
            now if text.strip().lower() == "now" else Release(at=datetime.fromisoformat(text.strip()), zone=zone).utc
        )
    except ValidationError as invalid:  # the content's own refusal: a skipped or repeated time
        raise ValueError(str(invalid.errors()[0]["ctx"]["error"])) from None
    except ValueError:
        raise ValueError(admin_copy.NOT_A_TIME.format(text=text, zone=zone)) from None
    if moment < now:
        raise ValueError(admin_copy.PAST_TIME.format(text=text.strip(), zone=zone))
    return moment
