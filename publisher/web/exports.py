"""The site's CSV files: the list (one writer for the command and the dashboard's Export, so the two
never differ), the audit log and the visit counts. A value from outside is never a formula."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from datetime import date, datetime
from typing import NamedTuple, TextIO

from publisher.storage import tables
from publisher.storage.admins import AuditLine

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SUBSCRIBER_COLUMNS = ("email", "name", "book_updates", "subscribed_at", "status", "confirmed_at", "unsubscribed_at")


class VisitRow(NamedTuple):
    """One line of the visits CSV: a day's count (``day`` set) or a period's (``day`` None)."""

    section: str
    day: date | None
    key: str  # a route; or a source, a campaign, "slug store-host", which came from outside
    views: int
    visitors: int


def csv_safe(value: str) -> str:
    """Keep spreadsheet programs from running a subscriber's name as a formula."""
    return "'" + value if value.startswith(_FORMULA_PREFIXES) else value


def iso_time(moment: datetime | None) -> str:
    return moment.isoformat() if moment else ""


def write_subscribers_csv(rows: list[tables.Subscriber], out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SUBSCRIBER_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_safe(row.email),
                csv_safe(row.name),
                row.book_updates,
                row.subscribed_at.isoformat(),
                row.status,
                iso_time(row.confirmed_at),
                iso_time(row.unsubscribed_at),
            ]
        )


def write_audit_csv(lines: list[AuditLine], out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("at", "admin", "action", "target"))
    for line in lines:
        writer.writerow([line.at.isoformat(), csv_safe(line.admin), line.action, csv_safe(line.target)])


def write_visits_csv(rows: Iterable[VisitRow], out: TextIO) -> None:
    """The visit counts; a source or a campaign is whatever a Referer or a landing URL said."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("section", "day", "key", "views", "visitors"))
    for row in rows:
        day = row.day.isoformat() if row.day else ""
        writer.writerow([row.section, day, csv_safe(row.key), row.views, row.visitors])
