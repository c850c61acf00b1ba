"""``publisher-gateway``: the operator's command for the embedded gateway's database; where its output
goes and what its exit status says: ``EPILOG``."""

from __future__ import annotations

import argparse
import asyncio
import csv
import functools
import os
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy

from publisher.cli import visit_report
from publisher.config import secret_files, settings
from publisher.content.books import book_by_slug
from publisher.mail import announce, outbox
from publisher.returns import bounce_mailbox
from publisher.rules import admin_access, list_rules, release_rules
from publisher.rules.form_fields import for_terminal
from publisher.rules.list_rules import ListStatus
from publisher.storage import admins, bounce_records, dashboard, database, queue, subscribers, tables
from publisher.web import exports

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer whose reader went away

EPILOG = f"""\
Data (the CSV of `subscribers`, the listings of `messages`, `outbox`, `campaigns`,
`bounces`, `visits` and `schedule`, the outcome of each delivery of `outbox --retry`) goes to standard
output; messages (what `migrate`, `import`, `forget`, `announce`, `schedule` and `bounces --check` did,
progress, questions, warnings, errors) go to standard error. It runs from any directory:
it finds the project's alembic.ini beside the installed package (the image sets
ALEMBIC_CONFIG=/app/alembic.ini).

exit status:
  {EXIT_OK:<4} done (`announce`: sent, or announced before)
  {EXIT_FAILED:<4} it ran and failed: the database is unreachable or not migrated, a file cannot be
       read or is refused (`import`), an email was not sent, a campaign paused or was not
       started (nobody confirmed, or the answer was no), `outbox --retry` without SMTP,
       the bounce mailbox cannot be read (`bounces --check`), a send that started already
       (`schedule`)
  {EXIT_USAGE:<4} it cannot run as asked: a usage error, a setting missing or invalid, `announce`
       refused (unknown book, mail settings missing, no --yes where nobody can answer),
       `schedule` refused (not a forthcoming book; a time the zone skips or repeats, or past)
  {EXIT_INTERRUPTED:<4} interrupted (Ctrl-C); a transaction under way is rolled back
  {EXIT_BROKEN_PIPE:<4} its reader stopped early (`| head`): the rest was not written
"""


class Refused(Exception):
    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


def _say(message: str) -> None:
    print(f"publisher-gateway: {message}", file=sys.stderr)


def migrate(args: argparse.Namespace) -> None:
    database.check()
    database.migrate()
    _say(f"the database at {secret_files.redact_url(database.configured_url())} is up to date.")


def import_file(args: argparse.Namespace) -> None:
    """The whole file or nothing, with every bad line named."""
    try:
        text = Path(args.file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read {args.file}: {exc}") from None
    try:
        rows = list_rules.read_import(text, args.status)
    except list_rules.ImportRefused as refused:
        for problem in refused.problems:
            print(f"{args.file}: {problem}", file=sys.stderr)
        raise Refused(f"nothing imported from {args.file}.") from None
    report = subscribers.import_rows(rows, f"import of {Path(args.file).name}"[: tables.SOURCE_MAX - 16])
    print(f"Imported {args.file}: {report} No email was sent.", file=sys.stderr)


def write_messages(args: argparse.Namespace) -> None:
    messages = tables.list_messages()
    if not messages:
        print("No messages.")
    for row in messages:
        sys.stdout.write(
            f"#{row.id}  {row.received_at.isoformat()}\n"
            f"From: {for_terminal(row.sender_name)} <{for_terminal(row.sender_email)}>\n"
            f"Subject: {for_terminal(row.subject)}\n\n{for_terminal(row.message, keep_lines=True)}\n\n"
        )


_WHAT = {
    tables.CONTACT: "contact message",
    tables.SUBSCRIBER: "new-subscriber notice",
    tables.CONFIRMATION: "confirmation email to subscriber",
    tables.WELCOME: "welcome email to subscriber",
}


def write_outbox(args: argparse.Namespace) -> int | None:
    if args.retry:
        return retry_failed()
    deliveries = queue.list_deliveries()
    if not deliveries:
        print("Outbox: nothing pending or failed.")
        return EXIT_OK
    for row in deliveries:
        tries = f"{row.attempts} attempt{'' if row.attempts == 1 else 's'}"
        state = f"pending, next attempt {row.next_attempt_at.isoformat()}" if row.status == tables.PENDING else "FAILED"
        print(
            f"#{row.id}  {state}  {_WHAT.get(row.kind, row.kind)} #{row.source_id}  "
            f"queued {row.created_at.isoformat()}  {tries}\n"
            f"    Message-ID: {for_terminal(row.message_id)}"
        )
        if row.last_error:
            print(f"    last error: {for_terminal(row.last_error)}")
    pending = sum(row.status == tables.PENDING for row in deliveries)
    failed = len(deliveries) - pending
    retry = " Send the failed ones again with `publisher-gateway outbox --retry`." if failed else ""
    print(f"{pending} pending, {failed} failed.{retry}")
    return EXIT_OK


_RETRIED = {tables.SENT: "sent", tables.PENDING: "not sent ({}); the site will retry it"}


def retry_failed() -> int:
    mail = settings.current().mail
    if mail is None:
        raise Refused("PUBLISHER_SMTP_URL is not set, so nothing can send the outbox.")
    ids = queue.requeue_failed(tables.utc_now(), outbox.RETRY_FOR)
    if not ids:
        print("Outbox: no failed deliveries to send again.", file=sys.stderr)
        return EXIT_OK
    outcomes = asyncio.run(outbox.Sender(mail).send_due(only_ids=ids))
    for outcome in outcomes:
        print(f"#{outcome.delivery_id}  {_RETRIED.get(outcome.status, 'FAILED again: {}').format(outcome.detail)}")
    taken = {outcome.delivery_id for outcome in outcomes}
    for left in sorted(set(ids) - taken):  # a running site's sender got there first
        print(f"#{left}  queued; the running site is sending it")
    return EXIT_FAILED if any(outcome.status == tables.FAILED for outcome in outcomes) else EXIT_OK


_PERIODS = {"d": "days", "h": "hours", "m": "minutes"}


def _since(text: str) -> datetime:
    """UTC unless it says."""
    value = text.strip()
    unit = _PERIODS.get(value[-1:].lower())
    if unit and value[:-1].isdigit():
        return tables.utc_now() - timedelta(**{unit: int(value[:-1])})
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (2026-11-01), a date and time (2026-11-01T09:00) or a period (7d, 24h, 30m)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


_LEFT_WHY = {
    bounce_records.UNCLASSIFIED: "could not be classified",
    bounce_records.UNPROVEN: "a report that names no email this site sent",
    bounce_records.TOO_LARGE: "too large to read",
    bounce_records.UNHANDLED: "could not be handled",
}


def write_bounces(args: argparse.Namespace) -> int | None:
    """Everything stored came from outside, so control characters are escaped."""
    if args.check:
        return check_bounce_mailbox()
    lines = bounce_records.list_bounces(args.since)
    for line in lines:
        campaign = f"  campaign {line.campaign}" if line.campaign else ""
        print(f"{line.at.isoformat()}  {for_terminal(line.email)}  {line.kind}  ({line.source}){campaign}")
        print(f"    {for_terminal(line.reason)}")
    kinds = Counter(line.kind for line in lines)
    period = f" since {args.since.isoformat()}" if args.since else ""
    print(
        f"{len(lines)} bounces and complaints{period}: {kinds['hard']} hard, {kinds['soft']} soft, "
        f"{kinds['complaint']} complaints."
    )
    left, counts = bounce_records.left_messages(args.since)
    total = sum(counts.values())
    if total:
        why = ", ".join(f"{counts[outcome]} {_LEFT_WHY[outcome]}" for outcome in _LEFT_WHY if counts.get(outcome))
        shown = "" if len(left) == total else f"; the latest {len(left)} below"
        print(
            f"{total} messages in the bounce mailbox were left where they are ({why}){shown}; "
            "read them there. None of them changed a reader:"
        )
        for message in left:
            note = message.note or _LEFT_WHY.get(message.outcome, message.outcome)
            print(
                f"    {message.seen_at.isoformat()}  from {for_terminal(message.sender) or '(no sender)'}  "
                f"{for_terminal(message.subject)!r}  ({for_terminal(note)})"
            )
    return EXIT_OK


def check_bounce_mailbox() -> int:
    values = settings.current()
    if values.mail is None or values.bounce_mailbox is None:
        raise Refused(
            "PUBLISHER_BOUNCE_MAILBOX is not set (and PUBLISHER_SMTP_URL with it), so there is no bounce mailbox "
            "to read.",
            EXIT_USAGE,
        )
    reading = bounce_mailbox.read_once(values)
    if reading is None:
        print(
            "Bounce mailbox: a running site's worker is reading it right now; its findings are in `bounces`.",
            file=sys.stderr,
        )
        return EXIT_OK
    print(f"Bounce mailbox {values.bounce_mailbox.describe()}: {reading}.", file=sys.stderr)
    return EXIT_FAILED if reading.troubles else EXIT_OK


def pause(args: argparse.Namespace) -> None:
    if not announce.pause(args.slug, "paused from the command line"):
        raise Refused(f"{for_terminal(args.slug)!r} has no campaign sending")
    _say(f"paused. `publisher-gateway announce {args.slug}` resumes it.")


def schedule(args: argparse.Namespace) -> None:
    steer = [option for option in ("at", "hold", "resume") if getattr(args, option)]
    if len(steer) > 1 or (steer and args.slug is None):
        raise Refused("give one book's SLUG and one of --at, --hold or --resume", EXIT_USAGE)
    now, book = tables.utc_now(), book_by_slug(args.slug or "")
    if not steer:
        sends = [send for send in dashboard.scheduled_sends(now) if args.slug in (None, send.book.slug)]
        for send in sends:
            print(f"{send.book.slug}: {send.words}")
        if not sends:
            print("No forthcoming book (docs/content.md says how to give one a release moment).")
    elif book is None or book.release is None:
        raise Refused(f"{for_terminal(args.slug)!r} is not a forthcoming book (see `schedule`)", EXIT_USAGE)
    else:
        try:
            moment = release_rules.send_moment(args.at, book.release.zone, now) if args.at else None
        except ValueError as refused:
            raise Refused(str(refused), EXIT_USAGE) from None
        changed, said = announce.steer(book.slug, moment, args.hold)
        if not changed:
            raise Refused(said)
        _say(said)


def _dashboard_kept_here() -> None:
    """``admin`` acts only where this site keeps the dashboard (server/admin_sign_in.py)."""
    if not settings.current().dashboard_on:
        raise Refused(
            "this site has no dashboard: PUBLISHER_GATEWAY_URL is set, so the cloud gateway keeps the list "
            "and this site stores nothing to show (/admin is 404).",
            EXIT_USAGE,
        )


def invite_admin(args: argparse.Namespace) -> None:
    _dashboard_kept_here()
    problem = admin_access.check_admin_name(args.name)
    if problem is not None:
        raise Refused(problem, EXIT_USAGE)
    name = args.name.strip()
    token = admin_access.new_token()
    invitation = admins.invite(name, admin_access.token_hash(token), admin_access.new_token())
    print(admin_access.enrolment_url(settings.site_url(), token))
    who = "a new admin" if invitation.created else "an admin already (their passkeys stay; earlier links end)"
    _say(
        f"{for_terminal(name)} is {who}. The link above works once, until "
        f"{invitation.expires_at:%Y-%m-%d %H:%M} UTC; open it on the device that will hold the passkey."
    )


def write_admins(args: argparse.Namespace) -> None:
    _dashboard_kept_here()
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["admin", "passkey", "created", "last_used"])
    for row in admins.list_admins():
        last_used = exports.iso_time(row.last_used_at) if row.last_used_at else "never" if row.passkey else ""
        writer.writerow([for_terminal(row.admin), row.passkey or "(none)", exports.iso_time(row.created_at), last_used])


def revoke_admin(args: argparse.Namespace) -> None:
    _dashboard_kept_here()
    try:
        revoked = admins.revoke(args.name.strip())
    except admins.UnknownAdmin:
        raise Refused(f"no admin is named {for_terminal(args.name)!r}") from None
    _say(
        f"{for_terminal(args.name.strip())}: {revoked.passkeys} passkey(s) removed, "
        f"{revoked.sessions} session(s) ended. `publisher-gateway admin invite NAME` lets them in again."
    )


def _days(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= visit_report.MAX_DAYS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of days from 1 to {visit_report.MAX_DAYS} (today counts as one)"
        )
    return int(text)


def write_visits(args: argparse.Namespace) -> None:
    values = settings.current()
    if not values.visits_on:
        why = (
            "PUBLISHER_VISITS=off"
            if not values.visits
            else "PUBLISHER_GATEWAY_URL is set: the cloud gateway keeps the list and this site no database"
        )
        _say(f"counting is off ({why}), so there are no visits to show.")
        return
    report = visit_report.read(args.days, tables.utc_now().date())
    if args.csv:
        exports.write_visits_csv(visit_report.csv_rows(report), sys.stdout)
    else:
        visit_report.write_text(report, sys.stdout)


Handler = Callable[[argparse.Namespace], "int | None"]
SUMMARIES = {
    "migrate": "create or update the tables (the release step; safe while other containers start or run)",
    "subscribers": "export the email list as CSV to standard output (the columns `import` reads)",
    "import": "add a CSV list (the columns `subscribers` writes) in one transaction; sends no email",
    "forget": "erase everything stored about an address (its place on the list, messages, emails)",
    "messages": "list the contact messages, oldest first",
    "outbox": "list the emails not yet sent (pending and failed)",
    "announce": "email a book to every confirmed reader, once (again: continues an unfinished campaign)",
    "campaigns": "list the announced books, with sent, failed and left, bounces and complaints",
    "pause": "pause a book's campaign while it sends (`announce SLUG` shows why and resumes it)",
    "schedule": "list each forthcoming book's send (in its zone and UTC), its state and who waits; move, hold or "
    "resume one",
    "bounces": "list the latest bounces and complaints, and the bounce mailbox's messages left unclassified",
    "admin": "the dashboard's admins (/admin): invite one, list them, revoke one's passkeys",
    "invite": "print a link, valid 24 hours and once, with which NAME creates a passkey (also the way back for an "
    "admin who lost every passkey)",
    "list": "list the admins and their passkeys (name, created, last used)",
    "revoke": "remove NAME's passkeys and end their sessions at once",
    "visits": "the site's visitors and page views per day, top pages, sources and campaigns, bots, buy presses per "
    "book and store (docs/privacy.md says what is counted)",
}
SLUG = "the book's slug, as in its page's address /books/SLUG"


def command_line() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="publisher-gateway",
        description="The embedded local gateway's database (REFLEX_DB_URL / rxconfig.py): "
        "bring its schema up to date, read what was stored, and look after the outbox.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _list_commands(functools.partial(_subcommand, commands))
    _release_commands(functools.partial(_subcommand, commands))
    return parser


def _subcommand(parent: Any, name: str, run: Handler | None) -> argparse.ArgumentParser:
    made = parent.add_parser(name, help=SUMMARIES[name])
    made.set_defaults(run=run)
    return made


def _list_commands(command: Callable[[str, Handler], argparse.ArgumentParser]) -> None:
    command("migrate", migrate)
    listed = command(
        "subscribers", lambda args: exports.write_subscribers_csv(subscribers.list_subscribers(args.status), sys.stdout)
    )
    listed.add_argument("--status", choices=ListStatus.ALL, help="only the addresses with this status")
    imported = command("import", import_file)
    imported.add_argument("file", help="a CSV file with email and name columns, and status unless --status is given")
    imported.add_argument(
        "--status",
        choices=ListStatus.ALL,
        help="the status of every address in a file without a status column: with confirmed you vouch "
        "for consent given elsewhere",
    )
    command(
        "forget", lambda args: print(f"{args.email}: {subscribers.forget(args.email)}", file=sys.stderr)
    ).add_argument("email")
    command("messages", write_messages)
    command("outbox", write_outbox).add_argument("--retry", action="store_true", help="send the failed ones again, now")


def _release_commands(command: Callable[[str, Handler | None], argparse.ArgumentParser]) -> None:
    announcing = command(
        "announce", lambda args: announce.announce(args.slug, yes=args.yes, test_to=args.test_to, out=sys.stderr)
    )
    announcing.add_argument("slug", help=SLUG)
    announcing.add_argument("--yes", action="store_true", help="send without asking (for scripts)")
    announcing.add_argument(
        "--test-to",
        metavar="ADDRESS",
        help="send one test copy to ADDRESS only (need not be on the list; not recorded)",
    )
    command("campaigns", lambda args: announce.write_campaigns(sys.stdout))
    command("pause", pause).add_argument("slug", help=SLUG)
    sends = command("schedule", schedule)
    sends.add_argument("slug", nargs="?", help="a forthcoming book's slug: only its send, or the one to change")
    sends.add_argument(
        "--at", metavar="WHEN", help='send at WHEN, "YYYY-MM-DD HH:MM" in the book\'s time zone (or now)'
    )
    sends.add_argument("--hold", action="store_true", help="hold the send: it does not start until --resume")
    sends.add_argument(
        "--resume", action="store_true", help="stop holding the send: it starts at its time (at once if past)"
    )
    bounces = command("bounces", write_bounces)
    bounces.add_argument(
        "--since",
        type=_since,
        metavar="WHEN",
        help="only those since WHEN: a date (2026-11-01), a date and time, or a period back from now (7d, 24h, 30m)",
    )
    bounces.add_argument(
        "--check", action="store_true", help="read the bounce mailbox (PUBLISHER_BOUNCE_MAILBOX) once, now"
    )
    admin = command("admin", None).add_subparsers(dest="admin_action", required=True)
    _subcommand(admin, "invite", invite_admin).add_argument(
        "name", help="the admin's name, as the dashboard and the audit log show it"
    )
    _subcommand(admin, "list", write_admins)
    _subcommand(admin, "revoke", revoke_admin).add_argument("name")
    visits = command("visits", write_visits)
    visits.add_argument(
        "--days",
        type=_days,
        default=visit_report.DEFAULT_DAYS,
        metavar="N",
        help=f"the last N days, today included (1 to {visit_report.MAX_DAYS}; default {visit_report.DEFAULT_DAYS})",
    )
    visits.add_argument("--csv", action="store_true", help="write CSV (section,day,key,views,visitors) instead of text")


def run(argv: list[str] | None = None) -> int:
    """The command ``argv`` names; every failure is one line on standard error, and an exit status."""
    args = command_line().parse_args(argv)
    try:
        return args.run(args) or EXIT_OK
    except Refused as refused:
        status, message = refused.status, str(refused)
    except settings.ConfigurationError as exc:
        status, message = EXIT_USAGE, str(exc)
    except (database.DatabaseUnavailable, bounce_mailbox.MailboxTrouble) as exc:
        status, message = EXIT_FAILED, str(exc)
    except sqlalchemy.exc.SQLAlchemyError as exc:
        status = EXIT_FAILED
        message = f"cannot use the database: {exc.__class__.__name__}. Run `publisher-gateway migrate` first."
    _say(message)
    return status


def main(argv: list[str] | None = None) -> int:
    """The command, with a reader that stops early and Ctrl-C ending it quietly, as Unix tools do."""
    try:
        status = run(argv)
        sys.stdout.flush()  # the last of the output: a reader that went away shows here too
    except BrokenPipeError:
        # Python's advice (signal module docs): what is left in the buffer goes to /dev/null,
        # so the flush at exit raises nothing either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(file=sys.stderr)  # after the terminal's ^C, the prompt on a line of its own
        return EXIT_INTERRUPTED
    return status


if __name__ == "__main__":
    raise SystemExit(main())
