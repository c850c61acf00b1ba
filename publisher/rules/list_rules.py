"""The new-release list's rules, without a database and with the clock passed in: where an address stands,
what a sign-up does to it, which confirmation link counts, and how an imported file is read."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from publisher.rules import validation


class ListStatus:
    """Where an address stands on the list: pending, then confirmed, then possibly unsubscribed
    (the reader left, or complained) or bounced (the address stopped taking mail)."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    UNSUBSCRIBED = "unsubscribed"
    BOUNCED = "bounced"
    ALL = (PENDING, CONFIRMED, UNSUBSCRIBED, BOUNCED)
    # The import never brings these back: only the reader, through the form, can (a fresh consent).
    GONE = (UNSUBSCRIBED, BOUNCED)


CONFIRMATION_EVERY = timedelta(hours=24)


def link_second(moment: datetime) -> int:
    """``moment`` to the second, as a confirmation link carries its date (a stored time without
    a zone is UTC): a link and the row it confirms are compared on this."""
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def confirmation_due(last_confirmation_at: datetime | None, now: datetime) -> bool:
    """One confirmation per mailbox a day: whether one may go now, the last having gone at
    ``last_confirmation_at`` to any spelling of the mailbox (None: never)."""
    return last_confirmation_at is None or now - last_confirmation_at >= CONFIRMATION_EVERY


def is_latest_confirmation(issued_at: datetime, sent_at: datetime | None, subscribed_at: datetime) -> bool:
    """Whether a confirmation issued at ``issued_at`` is the latest sent to its row, for its latest sign-up
    (an older sign-up's consent is not this one's); compared to the second, as the link carries it."""
    if sent_at is None:
        return False
    issued = link_second(issued_at)
    return issued == link_second(sent_at) and issued >= link_second(subscribed_at)


@dataclass(frozen=True)
class Step:
    """What a subscribe request does to an address."""

    status: str
    send_confirmation: bool
    joins: bool  # new to the list, or back after leaving: a new subscription on record


def on_subscribe(current: str | None, last_confirmation_at: datetime | None, now: datetime, emails_on: bool) -> Step:
    """The rule for the subscribe form (``current`` None: never seen). One that left or bounced joins afresh,
    pending, so its consent is given again and the address proves it takes mail."""
    if current == ListStatus.CONFIRMED:
        return Step(ListStatus.CONFIRMED, send_confirmation=False, joins=False)
    joins = current is None or current in ListStatus.GONE
    return Step(
        ListStatus.PENDING, send_confirmation=emails_on and confirmation_due(last_confirmation_at, now), joins=joins
    )


# --- Import: a list gathered elsewhere. ---


class ImportRefused(Exception):
    """The file cannot be imported; ``problems`` name each line and why. Nothing was imported."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ImportRow:
    line: int
    email: str
    name: str
    status: str


# An address seen twice in one file keeps the strongest word on consent: someone who
# left (or whose address bounced) stays gone, a confirmation outweighs a pending request.
_STRENGTH = {ListStatus.PENDING: 0, ListStatus.CONFIRMED: 1, ListStatus.UNSUBSCRIBED: 2, ListStatus.BOUNCED: 2}


def import_step(current: str | None, imported: str) -> str | None:
    """The status an imported row gives an address the list has as ``current`` (None: new), or None to
    leave it: a file never brings back one that left or bounced (only the reader can, by the form)."""
    if current is None:
        return imported
    if current in ListStatus.GONE or imported == current:
        return None
    if imported in ListStatus.GONE or (imported == ListStatus.CONFIRMED and current == ListStatus.PENDING):
        return imported
    return None


def read_import(text: str, status: str | None = None) -> list[ImportRow]:
    """The rows of a CSV file with the columns ``subscribers`` writes (``status``: for a file without that
    column); an address repeated in the file is one row. Raises ImportRefused."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))
    columns = [name.strip().lower() for name in reader.fieldnames or ()]
    missing = [name for name in ("email", "name") if name not in columns]
    if missing:
        raise ImportRefused([f"line 1: the header has no {' and no '.join(missing)} column"])
    has_status = "status" in columns
    if has_status and status is not None:
        raise ImportRefused(["line 1: the file has a status column; --status is only for a file without one"])
    if not has_status and status is None:
        raise ImportRefused(["line 1: the file has no status column: say which with --status confirmed (or pending)"])
    problems: list[str] = []
    rows: dict[str, ImportRow] = {}
    for raw in reader:
        line = reader.line_num
        fields = {key.strip().lower(): (value or "").strip() for key, value in raw.items() if key is not None}
        if None in raw:
            problems.append(f"line {line}: more fields than the header names")
            continue
        row, problem = _import_row(line, fields, status)
        if row is None:  # not a row: its problem
            problems.append(f"line {line}: {problem}")
            continue
        earlier = rows.get(row.email.lower())
        if earlier is None:
            rows[row.email.lower()] = row
        elif _STRENGTH[row.status] > _STRENGTH[earlier.status]:
            rows[row.email.lower()] = ImportRow(earlier.line, earlier.email, earlier.name, row.status)
    if problems:
        raise ImportRefused(problems)
    return list(rows.values())


def _import_row(line: int, fields: dict[str, str], status: str | None) -> tuple[ImportRow | None, str | None]:
    email, name = fields.get("email", ""), fields.get("name", "")
    row_status = (fields.get("status") if status is None else status) or ""
    if not email:
        return None, "no email address"
    if len(email) > validation.EMAIL_MAX:
        return None, f"the email address is longer than {validation.EMAIL_MAX} characters"
    try:
        email = validation.sendable_address(email)
    except validation.NotSendable as exc:
        return None, str(exc)
    if not name:
        return None, "no name"
    if len(name) > validation.NAME_MAX:
        return None, f"the name is longer than {validation.NAME_MAX} characters"
    if validation.has_control_characters(name):
        return None, "the name holds a line break or control character"
    if row_status not in ListStatus.ALL:
        return None, f"unknown status {row_status!r} (one of {', '.join(ListStatus.ALL)})"
    return ImportRow(line, email, name, row_status), None
