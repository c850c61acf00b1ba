"""Release day's storage and send: the waitlist's sign-up in each case, its erasure after its days, the
send scheduled, moved, held, started once at its minute and one email per reader (aiosmtpd). On SQLite,
and on PostgreSQL where the SQL differs (ON CONFLICT, FOR UPDATE, the claim of two replicas at once)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy

from publisher.content import books, list_copy
from publisher.content.models import Release
from publisher.mail import campaign, mailer, outbox, release_email
from publisher.rules import list_rules
from publisher.storage import campaigns, dashboard, subscribers, tables
from publisher.storage.subscribers import SignUp
from tests.databases import ON_BOTH_DATABASES
from tests.services.test_campaign import SITE, Clock, jobs, mail_for, sender_for
from tests.services.test_new_release_list import events, job, kinds, row
from tests.support import publisher_gateway
from tests.unit.test_list_links import MAIL_ENV

BOOK = books.BOOKS[0]
T0 = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
DUE = T0 + timedelta(days=10)
YES, NO, ASKED = tables.ON_LIST, tables.WAITLIST_ONLY, tables.ASKED_TO_JOIN
PENDING, CONFIRMED, UNSUBSCRIBED = "pending", "confirmed", "unsubscribed"


def wait(db_url: str, email: str = "jo@example.com", join: bool = False, at: datetime = T0, slug: str = BOOK.slug):
    return subscribers.wait(SignUp(email, ""), slug, join, job(), db_url, now=at)


def imported(db_url: str, status: str, email: str = "jo@example.com") -> None:
    subscribers.import_rows([list_rules.ImportRow(1, email, "Jo", status)], "test", db_url, now=T0 - timedelta(days=9))


def confirmed_waiter(db_url: str, email: str = "jo@example.com", slug: str = BOOK.slug) -> None:
    wait(db_url, email, at=T0 - timedelta(days=9), slug=slug)
    subscribers.confirm(row(db_url, email).link_key, job(), None, db_url, now=T0 - timedelta(days=9))


SETUPS = {
    "new": lambda db_url: None,
    "pending an hour ago": lambda db_url: wait(db_url, at=T0 - timedelta(hours=1)),
    "on the list": lambda db_url: imported(db_url, CONFIRMED),
    "confirmed, off the list": confirmed_waiter,
    "left the list": lambda db_url: imported(db_url, UNSUBSCRIBED),
}


@pytest.mark.parametrize(
    ("before", "join", "status", "book_updates", "new_confirmations"),
    [
        ("new", False, PENDING, NO, 1),
        ("new", True, PENDING, YES, 1),
        ("pending an hour ago", False, PENDING, NO, 0),  # one confirmation per mailbox a day
        ("pending an hour ago", True, PENDING, YES, 0),
        ("on the list", False, CONFIRMED, YES, 0),
        ("on the list", True, CONFIRMED, YES, 0),
        ("confirmed, off the list", False, CONFIRMED, NO, 0),  # not asked again for a book
        ("confirmed, off the list", True, CONFIRMED, ASKED, 1),
        ("left the list", False, PENDING, NO, 1),
    ],
)
def test_a_waitlist_sign_up_in_each_case(db_url, before, join, status, book_updates, new_confirmations):
    SETUPS[before](db_url)
    confirmations = kinds(db_url).count(tables.CONFIRMATION)
    wait(db_url, join=join)
    wait(db_url, join=join, at=T0 + timedelta(minutes=1))  # twice, as from one tab: nothing more
    reader = row(db_url)
    assert (reader.status, reader.book_updates) == (status, book_updates)
    assert kinds(db_url).count(tables.CONFIRMATION) - confirmations == new_confirmations
    assert subscribers.waited_books(reader.id, db_url) == [BOOK.slug]
    assert events(db_url)[-1] == (subscribers.WAITING, subscribers.FROM_THE_WAITLIST)


@ON_BOTH_DATABASES
def test_waiting_for_two_books_records_both_and_the_list_counts_only_its_readers(db_url):
    wait(db_url)
    wait(db_url, slug="another-book", at=T0 + timedelta(days=2))
    assert subscribers.waited_books(row(db_url).id, db_url) == [BOOK.slug, "another-book"]
    assert kinds(db_url) == [tables.CONFIRMATION, tables.CONFIRMATION]
    imported(db_url, CONFIRMED, "list@example.com")
    subscribers.subscribe(SignUp("new@example.com", "New"), job(), db_url, now=T0)
    assert subscribers.status_counts(db_url)[PENDING] == 1 and campaigns.confirmed_count(db_url) == 1
    assert [line.email for line in dashboard.latest_signups(db_url=db_url)] == ["new@example.com", "list@example.com"]
    assert [day.signups for day in dashboard.list_days(T0.date() + timedelta(days=2), 3, db_url)] == [1, 0, 0]
    reader_id = row(db_url).id
    erased = subscribers.forget("jo@example.com", db_url)
    assert erased.waits == 2 and "2 waits for a book" in str(erased)
    assert subscribers.waited_books(reader_id, db_url) == []


def test_asked_to_join_then_pressed_is_on_the_list_with_a_welcome_and_a_waiter_alone_gets_none(db_url):
    wait(db_url, at=T0 - timedelta(days=2))
    result = subscribers.confirm(row(db_url).link_key, job(), job(), db_url, now=T0 - timedelta(days=2))
    assert (result.outcome, row(db_url).book_updates) == ("confirmed", NO)
    assert tables.WELCOME not in kinds(db_url)
    assert subscribers.subscribe(SignUp("jo@example.com", "Jo"), job(), db_url, now=T0) == CONFIRMED
    assert (row(db_url).book_updates, kinds(db_url)) == (ASKED, [tables.CONFIRMATION] * 2)
    reader = row(db_url)
    issued = reader.confirmation_sent_at
    assert subscribers.confirm(reader.link_key, job(), None, db_url, issued_at=issued).outcome == "confirmed"
    assert (row(db_url).status, row(db_url).book_updates) == (CONFIRMED, YES)
    assert kinds(db_url) == [tables.CONFIRMATION, tables.CONFIRMATION, tables.WELCOME]
    assert subscribers.confirm(reader.link_key, job(), None, db_url).outcome == "already confirmed"


def finished(db_url: str, slug: str, at: datetime) -> None:
    with tables.engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.update(tables.Campaign)
            .where(tables.Campaign.book_slug == slug)
            .values(status=tables.FINISHED, finished_at=at)
        )


@ON_BOTH_DATABASES
def test_waiters_alone_are_erased_their_days_after_the_send_and_list_readers_stay(db_url):
    confirmed_waiter(db_url, "waiter@example.com")
    confirmed_waiter(db_url, "asked@example.com")
    wait(db_url, "asked@example.com", join=True)
    confirmed_waiter(db_url, "both@example.com")
    confirmed_waiter(db_url, "later@example.com", slug="a-later-book")
    wait(db_url, "later@example.com")
    imported(db_url, CONFIRMED, "list@example.com")
    wait(db_url, "list@example.com")
    wait(db_url, "unconfirmed@example.com")
    campaigns.ensure_scheduled(BOOK.slug, "New", DUE, db_url)
    campaigns.ensure_scheduled("a-later-book", "New", DUE + timedelta(days=90), db_url)
    finished(db_url, BOOK.slug, DUE)
    days = timedelta(days=list_rules.WAITLIST_KEEP_DAYS)
    assert subscribers.erase_waitlist_only(T0 + days - timedelta(seconds=1), db_url) == 0
    assert subscribers.erase_waitlist_only(T0 + days + timedelta(seconds=1), db_url) == 1  # never confirmed
    assert subscribers.erase_waitlist_only(DUE + days - timedelta(seconds=1), db_url) == 0
    assert subscribers.erase_waitlist_only(DUE + days + timedelta(seconds=1), db_url) == 3
    kept = {reader.email for reader in subscribers.list_subscribers(db_url=db_url)}
    assert kept == {"later@example.com", "list@example.com"}
    assert events(db_url, "waiter@example.com") == []  # erased as forget erases: the consent record too


# --- The send: scheduled, moved, held, started once. ---


def test_a_scheduled_send_follows_the_content_until_moved_or_held_and_nothing_changes_once_started(db_url):
    campaigns.ensure_scheduled(BOOK.slug, "New", DUE, db_url)
    campaigns.ensure_scheduled(BOOK.slug, "New", DUE, db_url)
    env = {**MAIL_ENV, "PUBLISHER_GATEWAY_URL": "", "PUBLISHER_POSTAL_ADDRESS": "1 Printing Lane"}
    refused = publisher_gateway(db_url, "announce", BOOK.slug, "--yes", check=False, env=env)
    assert refused.returncode == 2 and f"`publisher-gateway schedule {BOOK.slug} --at now`" in refused.stderr
    campaigns.ensure_scheduled(BOOK.slug, "Newer", DUE + timedelta(hours=1), db_url)  # the content changed
    item = campaigns.find_campaign(BOOK.slug, db_url)
    assert (item.status, tables.as_utc(item.due_at), item.subject) == (
        tables.SCHEDULED,
        DUE + timedelta(hours=1),
        "Newer",
    )
    assert campaigns.steer(BOOK.slug, DUE + timedelta(hours=2), db_url=db_url)
    campaigns.ensure_scheduled(BOOK.slug, "Newer", DUE, db_url)  # moved: the publisher's time stays
    assert campaigns.steer(BOOK.slug, None, True, db_url) and campaigns.steer(BOOK.slug, DUE, db_url=db_url)
    item = campaigns.find_campaign(BOOK.slug, db_url)
    assert (item.status, tables.as_utc(item.due_at)) == (tables.HELD, DUE)
    assert campaigns.start_due(DUE + timedelta(days=1), str, outbox.RETRY_FOR, db_url) == []  # held
    assert campaigns.steer(BOOK.slug, None, False, db_url)
    assert campaigns.start_due(DUE - timedelta(seconds=1), str, outbox.RETRY_FOR, db_url) == []
    assert [c.book_slug for c in campaigns.start_due(DUE, str, outbox.RETRY_FOR, db_url)] == [BOOK.slug]
    assert not campaigns.steer(BOOK.slug, DUE + timedelta(days=1), db_url=db_url)
    assert not campaigns.steer(BOOK.slug, None, True, db_url)
    assert campaigns.find_campaign(BOOK.slug, db_url).status == tables.FINISHED  # nobody to send to


def readers_of_every_kind(db_url: str) -> None:
    for n in (1, 2):
        imported(db_url, CONFIRMED, f"list{n}@example.com")
    imported(db_url, PENDING, "list-pending@example.com")
    confirmed_waiter(db_url, "waiter@example.com")
    wait(db_url, "waiter-pending@example.com")
    imported(db_url, CONFIRMED, "both@example.com")
    wait(db_url, "both@example.com")
    confirmed_waiter(db_url, "other-book@example.com", slug="a-later-book")


@ON_BOTH_DATABASES
def test_a_send_due_at_once_in_two_replicas_starts_once_for_list_and_confirmed_waiters(db_url):
    readers_of_every_kind(db_url)
    campaigns.ensure_scheduled(BOOK.slug, "New", DUE, db_url)
    barrier, started, errors = threading.Barrier(2), [], []

    def start(replica: int) -> None:
        barrier.wait()
        try:
            started.extend(campaigns.start_due(DUE, lambda reader: f"<{reader}.{replica}@t>", outbox.RETRY_FOR, db_url))
        except sqlalchemy.exc.SQLAlchemyError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(replica,)) for replica in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # SQLite's one writer may refuse the other replica (its next tick finds the send started): never both.
    assert all(isinstance(error, sqlalchemy.exc.OperationalError) for error in errors) and len(errors) < 2
    assert [(item.status, item.recipients) for item in started] == [(tables.SENDING, 4)]
    emails = {reader.id: reader.email for reader in subscribers.list_subscribers(db_url=db_url)}
    queued = [emails[job.source_id] for job in jobs(db_url, tables.PENDING) if job.campaign_id == started[0].id]
    assert sorted(queued) == ["both@example.com", "list1@example.com", "list2@example.com", "waiter@example.com"]


@pytest.mark.asyncio
async def test_at_the_minute_each_reader_gets_one_email_and_a_waiter_alone_gets_its_own(db_url, smtp_server):
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="0")
    readers_of_every_kind(db_url)
    book = BOOK.model_copy(update={"release": Release(at=datetime(2027, 3, 11, 9, 0), zone="Europe/London")})
    clock = Clock(book.release.utc - timedelta(minutes=1))
    day = campaign.ReleaseDay(mail, db_url, clock=clock, catalogue=[book])
    day.step()
    assert campaigns.find_campaign(BOOK.slug, db_url).status == tables.SCHEDULED
    clock.advance(minutes=1)
    day.step()
    await sender_for(mail, db_url, clock).send_due()
    got = {received.rcpt_tos[0]: received.message for received in smtp_server.received}
    assert sorted(got) == ["both@example.com", "list1@example.com", "list2@example.com", "waiter@example.com"]
    assert len(smtp_server.received) == 4
    waiter, both = got.pop("waiter@example.com"), got["both@example.com"]
    assert waiter["Subject"] == list_copy.WAITLIST_SUBJECT.format(title=BOOK.title)
    text = " ".join(waiter.get_body(("plain",)).get_content().split())
    why = list_copy.WAITLIST_WHY.format(site=SITE, title=BOOK.title, days=list_rules.WAITLIST_KEEP_DAYS)
    assert why in text and BOOK.book_link.unicode_string() in text
    assert waiter["List-Unsubscribe"] and waiter["List-Unsubscribe-Post"] == mailer.ONE_CLICK
    assert {message["Subject"] for message in got.values()} == {release_email.subject(BOOK)}
    assert list_copy.WAITLIST_INTRO not in both.get_body(("plain",)).get_content()
    clock.advance(days=list_rules.WAITLIST_KEEP_DAYS, seconds=1)  # the send finished at the minute
    day.step()
    kept = {reader.email for reader in subscribers.list_subscribers(db_url=db_url)}
    assert "waiter@example.com" not in kept and {"both@example.com", "other-book@example.com"} <= kept
