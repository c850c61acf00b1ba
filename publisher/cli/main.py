"""``publisher-gateway``: the operator's command for the embedded gateway's database, reading the
site's configuration; its commands are in its help (``command_line``), where its output goes and
what its exit status says in ``EPILOG``."""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy

from publisher.cli import visit_report
from publisher.config import settings
from publisher.mail import announce, outbox
from publisher.returns import bounce_mailbox
from publisher.rules import admin_access, list_rules
from publisher.rules.list_rules import ListStatus
from publisher.rules.validation import for_terminal
from publisher.storage import admins, bounce_records, database, queue, subscribers, tables
from publisher.web import exports


def import_file(path: str, status: str | None, messages) -> int:
    """``publisher-gateway import FILE``: the whole file or nothing; 1 with every bad line named."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"publisher-gateway: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    try:
        rows = list_rules.read_import(text, status)
    except list_rules.ImportRefused as refused:
        for problem in refused.problems:
            print(f"{path}: {problem}", file=sys.stderr)
        print(f"publisher-gateway: nothing imported from {path}.", file=sys.stderr)
        return 1
    report = subscribers.import_rows(rows, f"import of {Path(path).name}"[: tables.SOURCE_MAX - 16])
    messages.write(f"Imported {path}: {report} No email was sent.\n")
    return 0


def write_messages(messages: list[tables.ContactMessage], out) -> None:
    if not messages:
        out.write("No messages.\n")
    for row in messages:
        out.write(
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


def write_deliveries(deliveries: list[tables.Delivery], out) -> None:
    """One block per email not yet sent, then a count; failed ones say what to do."""
    if not deliveries:
        out.write("Outbox: nothing pending or failed.\n")
        return
    for row in deliveries:
        tries = f"{row.attempts} attempt{'' if row.attempts == 1 else 's'}"
        state = f"pending, next attempt {row.next_attempt_at.isoformat()}" if row.status == tables.PENDING else "FAILED"
        out.write(
            f"#{row.id}  {state}  {_WHAT.get(row.kind, row.kind)} #{row.source_id}  "
            f"queued {row.created_at.isoformat()}  {tries}\n"
            f"    Message-ID: {for_terminal(row.message_id)}\n"
        )
        if row.last_error:
            out.write(f"    last error: {for_terminal(row.last_error)}\n")
    pending = sum(row.status == tables.PENDING for row in deliveries)
    failed = len(deliveries) - pending
    out.write(f"{pending} pending, {failed} failed.")
    out.write(" Send the failed ones again with `publisher-gateway outbox --retry`.\n" if failed else "\n")


def retry_failed(out) -> int:
    """Requeue the failed jobs and send them from this process; 1 if any still failed."""
    mail = settings.mail_settings()
    if mail is None:
        print(
            f"publisher-gateway: {settings.SMTP_URL_VAR} is not set, so nothing can send the outbox.", file=sys.stderr
        )
        return 1
    ids = queue.requeue_failed(tables.utc_now(), outbox.RETRY_FOR)
    if not ids:
        print("Outbox: no failed deliveries to send again.", file=sys.stderr)
        return 0
    outcomes = asyncio.run(outbox.Sender(mail).send_due(only_ids=ids))
    for outcome in outcomes:
        if outcome.status == tables.SENT:
            out.write(f"#{outcome.delivery_id}  sent\n")
        elif outcome.status == tables.PENDING:
            out.write(f"#{outcome.delivery_id}  not sent ({outcome.detail}); the site will retry it\n")
        else:
            out.write(f"#{outcome.delivery_id}  FAILED again: {outcome.detail}\n")
    taken = {outcome.delivery_id for outcome in outcomes}
    for left in sorted(set(ids) - taken):  # a running site's sender got there first
        out.write(f"#{left}  queued; the running site is sending it\n")
    return 1 if any(outcome.status == tables.FAILED for outcome in outcomes) else 0


_PERIODS = {"d": "days", "h": "hours", "m": "minutes"}


def _since(text: str) -> datetime:
    """``--since``: a date, a date and time (UTC unless it says), or a period back from now."""
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


def write_bounces(since: datetime | None, out) -> int:
    """``publisher-gateway bounces``: newest first, then what the reader left in the mailbox, and why;
    everything stored came from outside, so control characters are escaped."""
    lines = bounce_records.list_bounces(since)
    for line in lines:
        campaign = f"  campaign {line.campaign}" if line.campaign else ""
        out.write(
            f"{line.at.isoformat()}  {for_terminal(line.email)}  {line.kind}  ({line.source}){campaign}\n"
            f"    {for_terminal(line.reason)}\n"
        )
    kinds = Counter(line.kind for line in lines)
    period = f" since {since.isoformat()}" if since else ""
    out.write(
        f"{len(lines)} bounces and complaints{period}: {kinds['hard']} hard, {kinds['soft']} soft, "
        f"{kinds['complaint']} complaints.\n"
    )
    left, counts = bounce_records.left_messages(since)
    total = sum(counts.values())
    if total:
        why = ", ".join(f"{counts[outcome]} {_LEFT_WHY[outcome]}" for outcome in _LEFT_WHY if counts.get(outcome))
        shown = "" if len(left) == total else f"; the latest {len(left)} below"
        out.write(
            f"{total} messages in the bounce mailbox were left where they are ({why}){shown}; "
            "read them there. None of them changed a reader:\n"
        )
        for message in left:
            note = message.note or _LEFT_WHY.get(message.outcome, message.outcome)
            out.write(
                f"    {message.seen_at.isoformat()}  from {for_terminal(message.sender) or '(no sender)'}  "
                f"{for_terminal(message.subject)!r}  ({for_terminal(note)})\n"
            )
    return EXIT_OK


def check_bounce_mailbox(messages) -> int:
    """``publisher-gateway bounces --check``: read the bounce mailbox once, now; 1 if it cannot be read."""
    values = settings.current()
    if values.mail is None or values.bounces.mailbox is None:
        print(
            f"publisher-gateway: {settings.BOUNCE_MAILBOX_VAR} is not set (and {settings.SMTP_URL_VAR} with it), "
            "so there is no bounce mailbox to read.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        reading = bounce_mailbox.read_once(values.bounces, values.mail)
    except bounce_mailbox.MailboxTrouble as trouble:
        print(f"publisher-gateway: {trouble}", file=sys.stderr)
        return EXIT_FAILED
    if reading is None:
        print(
            "Bounce mailbox: a running site's worker is reading it right now; its findings are in `bounces`.",
            file=messages,
        )
        return EXIT_OK
    print(f"Bounce mailbox {values.bounces.mailbox.describe()}: {reading}.", file=messages)
    return EXIT_FAILED if reading.troubles else EXIT_OK


EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer whose reader went away

EPILOG = f"""\
Data (the CSV of `subscribers`, the listings of `messages`, `outbox`, `campaigns`,
`bounces` and `visits`, the outcome of each delivery of `outbox --retry`) goes to standard output;
messages (what `migrate`, `import`, `forget`, `announce` and `bounces --check` did,
progress, questions, warnings, errors) go to standard error. It runs from any directory:
it finds the project's alembic.ini beside the installed package (the image sets
ALEMBIC_CONFIG=/app/alembic.ini).

exit status:
  {EXIT_OK:<4} done (`announce`: sent, or announced before)
  {EXIT_FAILED:<4} it ran and failed: the database is unreachable or not migrated, a file cannot be
       read or is refused (`import`), an email was not sent, a campaign paused or was not
       started (nobody confirmed, or the answer was no), `outbox --retry` without SMTP,
       the bounce mailbox cannot be read (`bounces --check`)
  {EXIT_USAGE:<4} it cannot run as asked: a usage error, a setting missing or invalid, `announce`
       refused (unknown book, mail settings missing, no --yes where nobody can answer)
  {EXIT_INTERRUPTED:<4} interrupted (Ctrl-C); a transaction under way is rolled back
  {EXIT_BROKEN_PIPE:<4} its reader stopped early (`| head`): the rest was not written
"""


def run_admin(args: argparse.Namespace, out, messages) -> int:
    """``admin invite|list|revoke``: the dashboard's admins (server/admin_sign_in.py)."""
    values = settings.current()
    if not values.dashboard_on:
        print(
            f"publisher-gateway: this site has no dashboard: {settings.GATEWAY_URL_VAR} is set, so the cloud "
            "gateway keeps the list and this site stores nothing to show (/admin is 404).",
            file=messages,
        )
        return EXIT_USAGE
    if args.admin_action == "invite":
        problem = admin_access.check_admin_name(args.name)
        if problem is not None:
            print(f"publisher-gateway: {problem}", file=messages)
            return EXIT_USAGE
        name = args.name.strip()
        token = admin_access.new_token()
        invitation = admins.invite(name, admin_access.token_hash(token), admin_access.new_user_handle())
        print(admin_access.enrolment_url(settings.site_url(), token), file=out)
        who = "a new admin" if invitation.created else "an admin already (their passkeys stay; earlier links end)"
        print(
            f"publisher-gateway: {for_terminal(name)} is {who}. The link above works once, until "
            f"{invitation.expires_at:%Y-%m-%d %H:%M} UTC; open it on the device that will hold the passkey.",
            file=messages,
        )
    elif args.admin_action == "list":
        write_admins(admins.list_admins(), out)
    else:
        try:
            revoked = admins.revoke(args.name.strip())
        except admins.UnknownAdmin:
            print(f"publisher-gateway: no admin is named {for_terminal(args.name)!r}", file=messages)
            return EXIT_FAILED
        print(
            f"publisher-gateway: {for_terminal(args.name.strip())}: {revoked.passkeys} passkey(s) removed, "
            f"{revoked.sessions} session(s) ended. `publisher-gateway admin invite NAME` lets them in again.",
            file=messages,
        )
    return EXIT_OK


def write_admins(rows: list[admins.PasskeyListing], out) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["admin", "passkey", "created", "last_used"])
    for row in rows:
        writer.writerow(
            [
                for_terminal(row.admin),
                row.passkey or "(none)",
                exports.iso_time(row.created_at),
                exports.iso_time(row.last_used_at) if row.last_used_at else "never" if row.passkey else "",
            ]
        )


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


def command_line() -> argparse.ArgumentParser:
    """The commands, their arguments and their help."""
    parser = argparse.ArgumentParser(
        prog="publisher-gateway",
        description="The embedded local gateway's database (REFLEX_DB_URL / rxconfig.py): "
        "bring its schema up to date, read what was stored, and look after the outbox.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_list_commands(commands)
    _add_campaign_commands(commands)
    _add_admin_commands(commands)
    _add_visits_command(commands)
    return parser


def _add_list_commands(commands) -> None:
    """The database, the list, the contact messages and the outbox."""
    commands.add_parser(
        "migrate",
        help="create or update the tables (the release step; safe while other containers start or run)",
    )
    subscribers_command = commands.add_parser(
        "subscribers", help="export the email list as CSV to standard output (the columns `import` reads)"
    )
    subscribers_command.add_argument("--status", choices=ListStatus.ALL, help="only the addresses with this status")
    importing = commands.add_parser(
        "import",
        help="add a CSV list (the columns `subscribers` writes) in one transaction; sends no email",
    )
    importing.add_argument("file", help="a CSV file with email and name columns, and status unless --status is given")
    importing.add_argument(
        "--status",
        choices=ListStatus.ALL,
        help="the status of every address in a file without a status column: with confirmed you vouch "
        "for consent given elsewhere",
    )
    forget = commands.add_parser(
        "forget", help="erase everything stored about an address (its place on the list, messages, emails)"
    )
    forget.add_argument("email")
    commands.add_parser("messages", help="list the contact messages, oldest first")
    outbox_command = commands.add_parser("outbox", help="list the emails not yet sent (pending and failed)")
    outbox_command.add_argument("--retry", action="store_true", help="send the failed ones again, now")


def _add_campaign_commands(commands) -> None:
    """A release's announcement, its campaign, and what bounced."""
    announcing = commands.add_parser(
        "announce",
        help="email a book to every confirmed reader, once (again: continues an unfinished campaign)",
    )
    announcing.add_argument("slug", help="the book's slug, as in its page's address /books/SLUG")
    announcing.add_argument("--yes", action="store_true", help="send without asking (for scripts)")
    announcing.add_argument(
        "--test-to",
        metavar="ADDRESS",
        help="send one test copy to ADDRESS only (need not be on the list; not recorded)",
    )
    commands.add_parser(
        "campaigns", help="list the announced books, with sent, failed and left, bounces and complaints"
    )
    pausing = commands.add_parser(
        "pause", help="pause a book's campaign while it sends (`announce SLUG` shows why and resumes it)"
    )
    pausing.add_argument("slug", help="the book's slug, as in its page's address /books/SLUG")
    bounces_command = commands.add_parser(
        "bounces",
        help="list the latest bounces and complaints, and the bounce mailbox's messages left unclassified",
    )
    bounces_command.add_argument(
        "--since",
        type=_since,
        metavar="WHEN",
        help="only those since WHEN: a date (2026-11-01), a date and time, or a period back from now (7d, 24h, 30m)",
    )
    bounces_command.add_argument(
        "--check", action="store_true", help="read the bounce mailbox (PUBLISHER_BOUNCE_MAILBOX) once, now"
    )


def _days(text: str) -> int:
    """``--days``: a whole number of days back from today, today included."""
    if not text.strip().isdigit() or not 1 <= int(text) <= visit_report.MAX_DAYS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of days from 1 to {visit_report.MAX_DAYS} (today counts as one)"
        )
    return int(text)


def _add_visits_command(commands) -> None:
    """The site's visits, sources and buy presses."""
    visits_command = commands.add_parser(
        "visits",
        help="the site's visitors and page views per day, top pages, sources and campaigns, bots, "
        "buy presses per book and store (docs/privacy.md says what is counted)",
    )
    visits_command.add_argument(
        "--days",
        type=_days,
        default=visit_report.DEFAULT_DAYS,
        metavar="N",
        help=f"the last N days, today included (1 to {visit_report.MAX_DAYS}; default {visit_report.DEFAULT_DAYS})",
    )
    visits_command.add_argument(
        "--csv", action="store_true", help="write CSV (section,day,key,views,visitors) instead of text"
    )


def write_visits(days: int, as_csv: bool, out, messages) -> int:
    """``publisher-gateway visits``: the report, or one line saying the site does not count."""
    values = settings.current()
    if not values.visits_on:
        why = (
            f"{settings.VISITS_VAR}=off"
            if not values.visits
            else f"{settings.GATEWAY_URL_VAR} is set: the cloud gateway keeps the list and this site no database"
        )
        print(f"publisher-gateway: counting is off ({why}), so there are no visits to show.", file=messages)
        return EXIT_OK
    report = visit_report.read(days, tables.utc_now().date())
    if as_csv:
        exports.write_visits_csv(visit_report.csv_rows(report), out)
    else:
        visit_report.write_text(report, out)
    return EXIT_OK


def _add_admin_commands(commands) -> None:
    """The dashboard's admins."""
    admin_command = commands.add_parser(
        "admin", help="the dashboard's admins (/admin): invite one, list them, revoke one's passkeys"
    )
    admin_actions = admin_command.add_subparsers(dest="admin_action", required=True)
    inviting = admin_actions.add_parser(
        "invite",
        help="print a link, valid 24 hours and once, with which NAME creates a passkey "
        "(also the way back for an admin who lost every passkey)",
    )
    inviting.add_argument("name", help="the admin's name, as the dashboard and the audit log show it")
    admin_actions.add_parser("list", help="list the admins and their passkeys (name, created, last used)")
    revoking = admin_actions.add_parser("revoke", help="remove NAME's passkeys and end their sessions at once")
    revoking.add_argument("name")


def run(argv: list[str] | None = None) -> int:
    """The command ``argv`` names; a failing configuration or database is one line, and an exit status."""
    args = command_line().parse_args(argv)
    try:
        return _carry_out(args)
    except settings.ConfigurationError as exc:
        print(f"publisher-gateway: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except database.DatabaseUnavailable as exc:
        print(f"publisher-gateway: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except sqlalchemy.exc.SQLAlchemyError as exc:
        print(
            f"publisher-gateway: cannot use the database: {exc.__class__.__name__}. "
            "Run `publisher-gateway migrate` first.",
            file=sys.stderr,
        )
        return EXIT_FAILED


def _carry_out(args: argparse.Namespace) -> int:
    """What the command does; its exit status."""
    if args.command == "migrate":
        database.check()
        database.migrate()
        print(
            f"publisher-gateway: the database at {settings.redact_url(database.configured_url())} is up to date.",
            file=sys.stderr,
        )
    elif args.command == "subscribers":
        exports.write_subscribers_csv(subscribers.list_subscribers(args.status), sys.stdout)
    elif args.command == "import":
        return import_file(args.file, args.status, sys.stderr)
    elif args.command == "forget":
        print(f"{args.email}: {subscribers.forget(args.email)}", file=sys.stderr)
    elif args.command == "announce":
        return announce.announce(args.slug, yes=args.yes, test_to=args.test_to, out=sys.stderr)
    elif args.command == "campaigns":
        announce.write_campaigns(sys.stdout)
    elif args.command == "pause":
        if not announce.pause(args.slug, "paused from the command line"):
            print(f"publisher-gateway: {for_terminal(args.slug)!r} has no campaign sending", file=sys.stderr)
            return EXIT_FAILED
        print(f"publisher-gateway: paused. `publisher-gateway announce {args.slug}` resumes it.", file=sys.stderr)
    elif args.command == "bounces":
        return check_bounce_mailbox(sys.stderr) if args.check else write_bounces(args.since, sys.stdout)
    elif args.command == "admin":
        return run_admin(args, sys.stdout, sys.stderr)
    elif args.command == "visits":
        return write_visits(args.days, args.csv, sys.stdout, sys.stderr)
    elif args.command == "messages":
        write_messages(tables.list_messages(), sys.stdout)
    elif args.retry:
        return retry_failed(sys.stdout)
    else:
        write_deliveries(queue.list_deliveries(), sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
