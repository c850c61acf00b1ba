"""``publisher-gateway visits`` from the daily counts: a visitor is one person on one day, so a period's
visitors are its days' sum. Sources and campaigns came from outside: escaped as text, defused in CSV."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TextIO

from publisher.content.books import BOOKS, book_by_slug
from publisher.rules.form_fields import for_terminal
from publisher.rules.visit_rules import VisitKind
from publisher.storage import visit_counts
from publisher.storage.visit_counts import BookFunnel, DayCount, KeyCount
from publisher.web import exports

DEFAULT_DAYS = 30
MAX_DAYS = 730  # two years: what the site keeps by default (PUBLISHER_VISITS_KEEP_DAYS)
TOP = 10  # pages, sources and campaigns shown
ALL_BUYS = 1000  # every book at every store: a handful in practice
TOPS = {
    VisitKind.PAGE: "Top pages",
    VisitKind.SOURCE: "Top sources, the sites visits came from",
    VisitKind.CAMPAIGN: "Top campaigns, from utm_source / utm_medium / utm_campaign or ref",
}


@dataclass(frozen=True)
class VisitReport:
    since: date
    until: date  # the last day, included (today, still counting)
    daily: dict[str, list[DayCount]]  # site and bot: every day, quiet ones too
    tops: dict[str, list[KeyCount]]  # the TOPS, then the buy presses (key "slug store-host")
    books: list[BookFunnel]


def read(days: int, today: date, db_url: str | None = None) -> VisitReport:
    since = today - timedelta(days=days - 1)
    tops = {kind: visit_counts.top(kind, since, today, limit=TOP, db_url=db_url) for kind in TOPS}
    tops[VisitKind.BUY] = visit_counts.top(VisitKind.BUY, since, today, limit=ALL_BUYS, db_url=db_url)
    daily = {kind: visit_counts.daily(kind, since, today, db_url=db_url) for kind in (VisitKind.SITE, VisitKind.BOT)}
    books = visit_counts.book_funnels({b.slug: b.page_path for b in BOOKS}, tops[VisitKind.BUY], since, today, db_url)
    return VisitReport(since=since, until=today, daily=daily, tops=tops, books=books)


def _book(key: str) -> str:
    """A book's title (a book no longer on the site keeps its slug); a buy press's key adds its store."""
    slug, _, store = key.partition(" ")
    book = book_by_slug(slug)
    title = book.title if book is not None else slug
    return f"{title} at {store}" if store else title


def _counts(heading: str, counts: list[KeyCount], out: TextIO, label: Callable[[str], str] = str) -> None:
    out.write(f"\n{heading}:\n")
    if not counts:
        out.write("  none\n")
    for count in counts:
        out.write(f"  {count.views:>8}  {count.visitors:>8}  {for_terminal(label(count.key))}\n")


def write_text(report: VisitReport, out: TextIO) -> None:
    days = report.daily[VisitKind.SITE]
    out.write(
        f"Visits from {report.since} to {report.until} (UTC days; today is still counting): "
        f"{sum(day.visitors for day in days)} visitors (each counted once a day), "
        f"{sum(day.views for day in days)} page views.\n\n  {'day':<10}  {'visitors':>8}  {'views':>8}\n"
    )
    for day in days:
        out.write(f"  {day.day.isoformat():<10}  {day.visitors:>8}  {day.views:>8}\n")
    for kind, heading in TOPS.items():
        _counts(f"{heading} (views, visitors)", report.tops[kind], out)
    bots = sum(day.views for day in report.daily[VisitKind.BOT])
    out.write(f"\nBots (counted apart, never as visitors): {bots} requests.\n")
    _counts("Buy button presses per book and store (presses, people pressing)", report.tops[VisitKind.BUY], out, _book)
    out.write("\nVisits of each book's page; its buy presses (on Home and on its page):\n")
    for book in report.books:
        out.write(
            f"  {_book(book.slug)}: {book.page_visitors} visitors ({book.page_views} views); {book.presses} presses\n"
        )


def csv_rows(report: VisitReport) -> Iterator[exports.VisitRow]:
    """The per-day sections (site, bot) carry their day; the tops and each book's page (book_page) none."""
    for section, days in report.daily.items():
        for day in days:
            yield exports.VisitRow(section, day.day, "", day.views, day.visitors)
    for section, counts in report.tops.items():
        for count in counts:
            yield exports.VisitRow(section, None, count.key, count.views, count.visitors)
    for book in report.books:
        yield exports.VisitRow("book_page", None, book.slug, book.page_views, book.page_visitors)
