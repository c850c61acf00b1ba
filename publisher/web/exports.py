"""The site's CSV files: the list (``publisher-gateway subscribers`` and the dashboard's Export,
one writer for both, so the two files never differ) and the dashboard's audit log.

Every value that came from outside is written so a spreadsheet never runs it as a formula.
"""

from __future__ import annotations

import csv
from datetime import datetime
from typing import TextIO

from publisher import storage
from publisher.storage.admins import AuditLine

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SUBSCRIBER_COLUMNS = ("email", "name", "book_updates", "subscribed_at", "status", "confirmed_at", "unsubscribed_at")
AUDIT_COLUMNS = ("at", "admin", "action", "target")


def csv_safe(value: str) -> str:
    """Keep spreadsheet programs from running a subscriber's name as a formula."""
    return "'" + value if value.startswith(_FORMULA_PREFIXES) else value


def iso_time(moment: datetime | None) -> str:
    return moment.isoformat() if moment else ""


def write_subscribers_csv(rows: list[storage.Subscriber], out: TextIO) -> None:
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
    writer.writerow(AUDIT_COLUMNS)
    for line in lines:
        writer.writerow([line.at.isoformat(), csv_safe(line.admin), line.action, csv_safe(line.target)])
