"""``publisher-gateway visits``: the last days' visits, sources and buy presses as text or CSV, from
the daily counts (a visitor is one person on one day, so a period's visitors are its days' sum).
Sources and campaigns came from outside: the text escapes them, the CSV defuses them (web/exports.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TextIO

from publisher.content.books import BOOKS, book_by_slug
from publisher.rules.validation import for_terminal
from publisher.rules.visit_rules import VisitKind
from publisher.storage import visit_counts
from publisher.storage.visit_counts import DayCount, KeyCount
from publisher.web import exports

DEFAULT_DAYS = 30
MAX_DAYS = 730  # two years: what the site keeps by default (PUBLISHER_VISITS_KEEP_DAYS)
TOP = 10  # pages, sources and campaigns shown
ALL_BUYS = 1000  # every book at every store: a handful in practice


@dataclass(frozen=True)
class BookFunnel:
    """One book over the period: its page's visits, and the presses of its buy buttons (Home and its page)."""

    slug: str
    title: str
    page_visitors: int
    page_views: int
    presses: int

    def rate(self) -> str:
        return f"{100 * self.presses / self.page_visitors:.1f} %" if self.page_visitors else "-"


@dataclass(frozen=True)
class VisitReport:
    since: date
    until: date  # the last day, included (today, still counting)
    days: list[DayCount]
    bots: list[DayCount]
    pages: list[KeyCount]
    sources: list[KeyCount]
    campaigns: list[KeyCount]
    buys: list[KeyCount]  # key "slug store-host"
    books: list[BookFunnel]


def read(days: int, today: date, db_url: str | None = None) -> VisitReport:
    """The last ``days`` days up to ``today``, read from the daily counts."""
    since = today - timedelta(days=days - 1)
    buys = visit_counts.top(VisitKind.BUY, since, today, limit=ALL_BUYS, db_url=db_url)
    books = []
    for book in BOOKS:
        page = visit_counts.daily(VisitKind.PAGE, since, today, key=book.page_path, db_url=db_url)
        presses = sum(buy.views for buy in buys if buy.key.partition(" ")[0] == book.slug)
        books.append(
            BookFunnel(
                book.slug,
                book.title,
                sum(day.visitors for day in page),
                sum(day.views for day in page),
                presses,
            )
        )
    return VisitReport(
        since=since,
        until=today,
        days=visit_counts.daily(VisitKind.SITE, since, today, db_url=db_url),
        bots=visit_counts.daily(VisitKind.BOT, since, today, db_url=db_url),
        pages=visit_counts.top(VisitKind.PAGE, since, today, limit=TOP, db_url=db_url),
        sources=visit_counts.top(VisitKind.SOURCE, since, today, limit=TOP, db_url=db_url),
        campaigns=visit_counts.top(VisitKind.CAMPAIGN, since, today, limit=TOP, db_url=db_url),
        buys=buys,
        books=books,
    )


def _title(slug: str) -> str:
    """A book's title; a book no longer on the site keeps its slug."""
    book = book_by_slug(slug)
    return book.title if book is not None else slug


def _keys(heading: str, counts: list[KeyCount], out: TextIO) -> None:
    out.write(f"\n{heading} (views, visitors):\n")
    if not counts:
        out.write("  none\n")
    for count in counts:
        out.write(f"  {count.views:>8}  {count.visitors:>8}  {for_terminal(count.key)}\n")


def write_text(report: VisitReport, out: TextIO) -> None:
    """The report for a terminal: each day, then the tops, bots, buy presses and each book's funnel."""
    visitors = sum(day.visitors for day in report.days)
    views = sum(day.views for day in report.days)
    out.write(
        f"Visits from {report.since} to {report.until} (UTC days; today is still counting): "
        f"{visitors} visitors (each counted once a day), {views} page views.\n\n"
        f"  {'day':<10}  {'visitors':>8}  {'views':>8}\n"
    )
    for day in report.days:
        out.write(f"  {day.day.isoformat():<10}  {day.visitors:>8}  {day.views:>8}\n")
    _keys("Top pages", report.pages, out)
    _keys("Top sources, the sites visits came from", report.sources, out)
    _keys("Top campaigns, from utm_source / utm_medium / utm_campaign or ref", report.campaigns, out)
    out.write(f"\nBots (counted apart, never as visitors): {sum(day.views for day in report.bots)} requests.\n")
    out.write("\nBuy button presses per book and store (presses, people pressing):\n")
    if not report.buys:
        out.write("  none\n")
    for buy in report.buys:
        slug, _, store = buy.key.partition(" ")
        out.write(f"  {buy.views:>8}  {buy.visitors:>8}  {for_terminal(_title(slug))} at {for_terminal(store)}\n")
    out.write("\nVisits of each book's page -> buy presses (on Home and on its page):\n")
    for book in report.books:
        out.write(
            f"  {book.title}: {book.page_visitors} visitors ({book.page_views} views) -> "
            f"{book.presses} presses ({book.rate()})\n"
        )


def csv_rows(report: VisitReport) -> Iterator[exports.VisitRow]:
    """Rows of ``section,day,key,views,visitors``: the per-day sections (site, bot) carry their day; the
    period's tops and each book's page (book_page, keyed by its slug) carry none."""
    for section, days in ((VisitKind.SITE, report.days), (VisitKind.BOT, report.bots)):
        for day in days:
            yield exports.VisitRow(section, day.day, "", day.views, day.visitors)
    for section, counts in (
        (VisitKind.PAGE, report.pages),
        (VisitKind.SOURCE, report.sources),
        (VisitKind.CAMPAIGN, report.campaigns),
        (VisitKind.BUY, report.buys),
    ):
        for count in counts:
            yield exports.VisitRow(section, None, count.key, count.views, count.visitors)
    for book in report.books:
        yield exports.VisitRow("book_page", None, book.slug, book.page_views, book.page_visitors)
