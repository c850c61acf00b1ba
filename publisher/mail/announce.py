"""``publisher-gateway announce SLUG`` and ``campaigns``. The command sends too, so it works with no site
running; all it says goes to standard error (messages, not data for a file or pipe)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO
from urllib.parse import urlsplit

import email_validator

from publisher import returns
from publisher.config import mail_config, settings
from publisher.config.settings import Settings
from publisher.content import admin_copy, books
from publisher.content.models import Book
from publisher.mail import campaign, mailer, outbox, release_email
from publisher.rules import list_rules, release_rules
from publisher.rules.form_fields import for_terminal
from publisher.storage import bounce_records, campaigns, tables

FOLLOW_POLL_S = 0.5
# A test copy's unsubscribe link names no reader: it shows the "link not valid" page.
TEST_LINK_KEY = "test-copy"


class Refused(Exception):
    """The command will not send: the message says why and what to do."""


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def required_settings() -> Settings:
    mail = settings.current().mail
    if settings.current().gateway_url is not None:
        raise Refused(
            "PUBLISHER_GATEWAY_URL is set: the cloud gateway keeps the list and sends its emails, not this site."
        )
    if mail is None:
        raise Refused(
            "PUBLISHER_SMTP_URL is not set: release emails need an SMTP server "
            "(and PUBLISHER_MAIL_FROM, PUBLISHER_POSTAL_ADDRESS)."
        )
    if mail.postal_address is None:
        raise Refused(
            "PUBLISHER_POSTAL_ADDRESS is not set: every release email carries the sender's postal address "
            "(the US CAN-SPAM Act asks for it in commercial email). Nothing was sent."
        )
    return mail


def find_book(slug: str) -> Book:
    book = books.book_by_slug(slug)
    if book is None:
        known = ", ".join(sorted(item.slug for item in books.BOOKS))
        raise Refused(f"no book {slug!r} in the content. Known books: {known}.")
    return book


def start_campaign(mail: Settings, book: Book, db_url: str | None = None) -> tables.Campaign | None:
    """None: the book has its campaign."""
    subject = release_email.subject(book)
    return campaigns.create_campaign(
        book.slug, subject, lambda _reader: mailer.new_message_id(mail), tables.utc_now(), outbox.RETRY_FOR, db_url
    )


def describe_counts(campaign_id: int) -> str:
    counts = campaigns.campaign_counts(campaign_id)
    return (
        f"{counts[tables.SENT]} sent, {counts[tables.FAILED]} failed, "
        f"{counts[tables.SKIPPED]} skipped (left the list), {counts[tables.PENDING]} left"
    )


def _progress():
    from rich import console, progress  # noqa: PLC0415 - only `announce` shows progress; the site never loads rich's UI

    return progress.Progress(
        progress.TextColumn("[bold]{task.description}"),
        progress.BarColumn(),
        progress.MofNCompleteColumn(),
        progress.TextColumn("sent {task.fields[sent]}, failed {task.fields[failed]}, left {task.fields[pending]}"),
        progress.TextColumn("{task.fields[rate]:.1f}/s"),
        progress.TimeRemainingColumn(),
        console=console.Console(stderr=True),  # progress is a message: never on standard output
        transient=False,
    )


async def follow(item: tables.Campaign, mail: Settings, out: TextIO) -> int:
    """0 when the campaign finished, 1 when it paused."""
    assert item.id is not None  # a stored row has its id (the model's None is before the insert)
    sender = campaign.ReleaseSender(mail)
    sending = asyncio.create_task(_keep_sending(sender, item.id))
    started, first_done = time.monotonic(), None
    progress = _progress()
    task = progress.add_task(item.book_slug, total=item.recipients, sent=0, failed=0, pending=item.recipients, rate=0.0)
    try:
        with progress:
            while True:
                counts = await asyncio.to_thread(campaigns.campaign_counts, item.id)
                done = counts[tables.SENT] + counts[tables.FAILED] + counts[tables.SKIPPED]
                first_done = done if first_done is None else first_done
                elapsed = time.monotonic() - started
                rate = (done - first_done) / elapsed if elapsed > 0 else 0.0
                progress.update(task, completed=done, rate=rate, **counts)  # the columns name the counts' keys
                state = await asyncio.to_thread(campaigns.get_campaign, item.id)
                assert state is not None  # a campaign is never deleted
                if state.status != tables.SENDING or sending.done():
                    break
                await asyncio.sleep(FOLLOW_POLL_S)
    finally:
        sending.cancel()
        await asyncio.gather(sending, return_exceptions=True)
    if state.status == tables.PAUSED:
        out.write(
            f"Campaign #{item.id} ({item.book_slug}) is PAUSED: {for_terminal(state.paused_reason or '')}\n"
            f"{describe_counts(item.id)}. Fix the cause, then run `publisher-gateway announce {item.book_slug}` "
            "to resume it.\n"
        )
        return 1
    if sending.done() and not sending.cancelled() and (error := sending.exception()) is not None:
        raise error
    out.write(f"Campaign #{item.id} ({item.book_slug}) finished: {describe_counts(item.id)}.\n")
    return 0


async def _keep_sending(sender: campaign.ReleaseSender, campaign_id: int) -> None:
    """Until the campaign ends, jobs waiting for a retry included."""
    while True:
        await sender.send_due()
        state = await asyncio.to_thread(campaigns.get_campaign, campaign_id)
        assert state is not None  # a campaign is never deleted
        if state.status != tables.SENDING:
            return
        if await asyncio.to_thread(campaigns.finish_if_done, campaign_id, tables.utc_now()):
            return
        await asyncio.sleep(FOLLOW_POLL_S)


def ask_on_stderr(question: str) -> str:
    """``input`` writes the question to standard output."""
    sys.stderr.write(question)
    sys.stderr.flush()
    return input()


class Stopped(Exception):
    """``announce`` ends here, its words said: the argument is the command's exit status."""


@dataclass(frozen=True)
class Asking:
    """``--yes``, or an answer to ``ask`` on a terminal (``interactive``)."""

    yes: bool
    ask: Callable[[str], str]
    interactive: bool | None

    def agree(self, question: str, to: str, declined: str, out: TextIO) -> None:
        """Returns when they said yes; else Stopped (2: nobody can answer; 1: they said no)."""
        if self.yes:
            return
        if not (sys.stdin.isatty() if self.interactive is None else self.interactive):
            print(f"publisher-gateway: not a terminal, so nobody can answer: add --yes to {to}.", file=sys.stderr)
            raise Stopped(2)
        if self.ask(question).strip().lower() not in ("y", "yes"):
            out.write(declined)
            raise Stopped(1)


def announce(
    slug: str,
    *,
    yes: bool,
    test_to: str | None,
    out: TextIO | None = None,
    ask: Callable[[str], str] = ask_on_stderr,
    interactive: bool | None = None,
) -> int:
    """The command: 0 sent (or already announced), 1 not sent or paused, 2 refused; 130 Ctrl-C while following."""
    out = sys.stderr if out is None else out
    try:
        mail = required_settings()
        book = find_book(slug)
    except Refused as refused:
        print(f"publisher-gateway: {refused}", file=sys.stderr)
        return 2
    site = settings.site_url()
    if mail_config.is_loopback(urlsplit(site).hostname or ""):
        out.write(f"Note: REFLEX_DEPLOY_URL is {site}: the links in these emails lead to this machine.\n")
    if test_to is not None:
        return send_test_copy(mail, book, test_to, out)
    try:
        item = _campaign_to_follow(slug, mail, book, out, Asking(yes, ask, interactive))
    except Stopped as stopped:
        return stopped.args[0]
    campaign.free_dead_leases()
    try:
        return asyncio.run(follow(item, mail, out))
    except KeyboardInterrupt:
        out.write(
            "\nStopped following. The campaign goes on: running sites send the rest, and "
            f"`publisher-gateway announce {slug}` continues and follows it.\n"
        )
        return 130


def send_test_copy(mail: Settings, book: Book, test_to: str, out: TextIO) -> int:
    """``--test-to``: nothing recorded."""
    try:
        address = email_validator.validate_email(test_to, check_deliverability=False).normalized
    except email_validator.EmailNotValidError as exc:
        print(f"publisher-gateway: --test-to {test_to!r} is not an email address ({exc})", file=sys.stderr)
        return 2
    site = settings.site_url()
    try:
        message = release_email.PreparedRelease(mail, book, site=site, test=True).message(
            name="",
            email=address,
            unsubscribe_link=list_rules.unsubscribe_url(site, mail.list_secrets[0], TEST_LINK_KEY),
            moment=tables.utc_now(),
            message_id=mailer.new_message_id(mail),
        )
        asyncio.run(mailer.send(message, mail, (address,)))
    except returns.DeliveryFailed as failure:
        print(f"publisher-gateway: the test copy was not sent: {failure.reason}", file=sys.stderr)
        return 1
    except mailer.UnsafeHeaders as unsafe:
        print(f"publisher-gateway: the test copy was {unsafe}", file=sys.stderr)
        return 1
    out.write(f"Sent a test copy of {release_email.subject(book)!r} to {address}. Nothing was recorded.\n")
    return 0


def _campaign_to_follow(slug: str, mail: Settings, book: Book, out: TextIO, asking: Asking) -> tables.Campaign:
    """The book's campaign, new or resumed (asked first) or going on; Stopped: nothing to follow."""
    item = campaigns.find_campaign(slug)
    if (item is not None and item.status in tables.NOT_STARTED) or not release_rules.is_out(book, tables.utc_now()):
        print(
            f"publisher-gateway: {book.title}'s email is scheduled and goes by itself: `publisher-gateway "
            f"schedule` shows when, and `publisher-gateway schedule {slug} --at now` sends it now.",
            file=sys.stderr,
        )
        raise Stopped(2)
    if item is None:
        return _new_campaign(slug, mail, book, out, asking)
    if item.status == tables.FINISHED:
        sent = campaigns.campaign_counts(_id(item))[tables.SENT]
        out.write(
            f"{book.title} was already announced on {_when(item.created_at)} "
            f"(finished {_when(item.finished_at)}): {sent} emails went out. Nothing was sent.\n"
        )
        raise Stopped(0)
    if item.status == tables.PAUSED:
        out.write(
            f"Campaign #{item.id} is PAUSED: {for_terminal(item.paused_reason or '')}\n"
            f"    {describe_counts(_id(item))}; {describe_returns(_id(item))}\n"
        )
        asking.agree("Resume it? [y/N] ", "resume it", "It stays paused. Nothing was sent.\n", out)
        resume(slug)
        out.write(f"Campaign #{item.id} resumed (it was paused: {for_terminal(item.paused_reason or '')}).\n")
    out.write(f"Continuing campaign #{item.id} of {_when(item.created_at)}: {describe_counts(_id(item))}.\n")
    return item


def _new_campaign(slug: str, mail: Settings, book: Book, out: TextIO, asking: Asking) -> tables.Campaign:
    readers = campaigns.confirmed_count()
    out.write(
        f"Book:       {book.title}: {book.subtitle}\n"
        f"Subject:    {release_email.subject(book)}\n"
        f"Recipients: {readers} confirmed readers\n"
    )
    if readers == 0:
        out.write("Nobody has confirmed a subscription yet: nothing to send, and nothing was recorded.\n")
        raise Stopped(1)
    asking.agree(f"Send it to {readers} readers? [y/N] ", "send", "Nothing was sent.\n", out)
    created = start_campaign(mail, book)
    if created is None:  # another run created it a moment ago: follow that one
        item = campaigns.find_campaign(slug)
        assert item is not None  # its insert, which ours found, is committed
        out.write(f"Continuing campaign #{item.id}, which another run has just started.\n")
        return item
    out.write(f"Campaign #{created.id}: {created.recipients} emails queued.\n")
    return created


def _id(item: tables.Campaign) -> int:
    assert item.id is not None  # a stored row has its id (the model's None is before the insert)
    return item.id


def rate(count: int, sent: int) -> str:
    """In % of the emails sent ("-" before any was sent)."""
    return f"{100 * count / sent:.2f} %" if sent else "-"


def describe_returns(campaign_id: int) -> str:
    came_back = bounce_records.campaign_returns(campaign_id)
    hard, complaints, sent = came_back.hard, came_back.complaints, came_back.sent
    return (
        f"{hard} hard bounces, {came_back.soft} soft bounces, {complaints} complaints "
        f"(bounce rate {rate(hard, sent)}, complaint rate {rate(complaints, sent)})"
    )


def write_campaigns(out: TextIO) -> None:
    items = campaigns.list_campaigns()
    if not items:
        out.write("No campaigns yet. `publisher-gateway announce SLUG` announces a book.\n")
        return
    for item in items:
        finished = f", finished {_when(item.finished_at)}" if item.finished_at else ""
        out.write(
            f"#{item.id}  {item.book_slug}  {item.status.upper()}  started {_when(item.created_at)}{finished}\n"
            f"    {item.recipients} recipients: {describe_counts(_id(item))}\n"
            f"    {describe_returns(_id(item))}\n"
        )
        if item.status == tables.PAUSED:
            out.write(f"    paused: {for_terminal(item.paused_reason or '')}\n")


def pause(slug: str, reason: str) -> bool:
    item = campaigns.find_campaign(slug)
    return item is not None and campaigns.set_campaign_status(_id(item), tables.PAUSED, reason)


def steer(slug: str, moved_to: datetime | None, held: bool = False) -> tuple[bool, str]:
    """``campaigns.steer``, and what happened in the dashboard's and the command line's words."""
    book = books.book_by_slug(slug)
    title = book.title if book is not None else slug
    if not campaigns.steer(slug, moved_to, held):
        return False, admin_copy.NOT_CHANGED.format(title=title)
    if moved_to is None:
        return True, (admin_copy.HELD_SEND if held else admin_copy.UNHELD_SEND).format(title=title)
    zone = book.release.zone if book is not None and book.release is not None else "UTC"
    return True, admin_copy.MOVED_SEND.format(title=title, when=release_rules.publisher_words(moved_to, zone))


def resume(slug: str) -> bool:
    item = campaigns.find_campaign(slug)
    return item is not None and campaigns.set_campaign_status(_id(item), tables.SENDING)
