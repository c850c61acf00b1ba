"""A release campaign: its rules, its email, and its sending against aiosmtpd, the clock and sleep injected.
On SQLite; batch claims, leases and the throttle row (PostgreSQL's own SQL) on both databases."""

from __future__ import annotations

import asyncio
import base64
import email
import email.policy
import logging
import re
import socket
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import aiosmtplib
import pytest
import sqlalchemy
import sqlmodel
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from publisher import returns
from publisher.config.settings import from_environ
from publisher.content import books, list_copy
from publisher.content.site import BRAND_NAME
from publisher.mail import announce, campaign, mailer, release_email
from publisher.rules import list_rules
from publisher.storage import campaigns, queue, subscribers, tables
from tests.databases import ON_BOTH_DATABASES
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import publisher_gateway

SITE = "https://animals.example"
BOOK = books.BOOKS[0]
T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


class Clock:
    """A clock that only moves when told, or when a sender sleeps."""

    def __init__(self, start: datetime | None = None):
        self.now = start or tables.utc_now()
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


def mail_for(server: SmtpServer, **extra: str):
    return from_environ(server.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, **extra)).mail


@pytest.fixture
def mail(smtp_server):
    """Mail settings without the throttle."""
    return mail_for(smtp_server, PUBLISHER_SEND_RATE="0")


def readers(db_url: str, count: int, status: str = "confirmed", start: int = 0) -> str:
    rows = [
        list_rules.ImportRow(n, f"reader{n}@readers.example", f"Reader {n}", status)
        for n in range(start, start + count)
    ]
    return subscribers.import_rows(rows, "test", db_url)


def jobs(db_url: str, status: str) -> list[tables.Delivery]:
    """Every outbox job with ``status``, a release's too (``list_deliveries`` lists the outbox's own)."""
    with tables.open_session(db_url) as session:
        statement = sqlmodel.select(tables.Delivery).where(tables.Delivery.status == status)
        return list(session.exec(statement.order_by(tables.Delivery.id)))


def start_campaign(db_url: str, mail, slug: str = BOOK.slug) -> tables.Campaign:
    return announce.start_campaign(mail, books.book_by_slug(slug), db_url)


def sender_for(mail, db_url: str, clock: Clock, worker: str | None = None, sleep=None) -> campaign.ReleaseSender:
    return campaign.ReleaseSender(mail, db_url, clock=clock, sleep=sleep or clock.sleep, site=SITE, worker=worker)


def recipients(server: SmtpServer) -> list[str]:
    return [address for received in server.received for address in received.rcpt_tos]


# --- The rules. ---


def test_slots_follow_each_other_at_the_rate_never_in_the_past_in_batches_of_a_few_seconds():
    assert campaign.reserve_slots(None, T0, 10, 5.0) == (T0, T0 + timedelta(seconds=2))
    # An idle site saves up no burst: a slot from long ago starts now.
    assert campaign.reserve_slots(T0 - timedelta(hours=1), T0, 5, 5.0) == (T0, T0 + timedelta(seconds=1))
    # Another sender's reservation ends later: this one starts where that one ends.
    later = T0 + timedelta(seconds=3)
    assert campaign.reserve_slots(later, T0, 5, 5.0) == (later, later + timedelta(seconds=1))
    assert campaign.slot_time(later, 3, 5.0) == later + timedelta(seconds=0.6)
    assert campaign.reserve_slots(later, T0, 50, 0) == (T0, T0)  # 0: no limit
    # A batch is a few seconds of sending; a dead sender holds at most fifty.
    assert [campaign.batch_size(rate) for rate in (10, 4, 2, 0.1, 0)] == [50, 20, 10, 1, 50]
    assert campaign.BATCH_MAX == 50


def test_only_leases_of_dead_processes_on_this_machine_are_freed():
    holders = ["here:100:aa", "here:200:bb", "there:100:cc", "odd"]
    assert campaign.dead_workers(holders, "here", alive=lambda pid: pid == 200) == ["here:100:aa"]


# --- The email. ---


def jo_bytes(mail, name: str = "Jo Reader", message_id: str | None = None, book=BOOK) -> bytes:
    return release_email.PreparedRelease(mail, book, site=SITE).message(
        name=name,
        email="jo@readers.example",
        unsubscribe_link=f"{SITE}/unsubscribe?t=abc&x=1",
        moment=T0,
        message_id=message_id or mailer.new_message_id(mail),
    )


def jo_email(mail, name: str = "Jo Reader", message_id: str | None = None, book=BOOK) -> EmailMessage:
    return email.message_from_bytes(jo_bytes(mail, name, message_id, book), policy=email.policy.default)


def body(message: EmailMessage, subtype: str) -> str:
    """A part's text with the wire's CRLF line ends read as newlines, as a mail client shows it."""
    return message.get_body((subtype,)).get_content().replace("\r\n", "\n")


def test_the_email_has_our_headers_and_a_text_and_an_html_part_that_say_the_same_with_absolute_links(mail):
    message = jo_email(mail, name="Jo Reader", message_id="<m1@animals.example>")
    assert message.get_content_type() == "multipart/alternative"
    text = body(message, "plain")
    html = body(message, "html")
    for part in (text, html):
        assert BOOK.subtitle in part and "Hello Jo Reader," in part
        assert list_copy.LIST_EMAIL_WHY.format(list_name=list_copy.LIST_NAME, site=SITE) in part
        assert "Get Your Copy Today" in part
    assert f"{BOOK.title}\n{BOOK.subtitle}\n\n{BOOK.description}" in text
    assert f"Get Your Copy Today: {BOOK.book_link}" in text
    assert f"{list_copy.RELEASE_PAGE_LINK}: {SITE}/books/{BOOK.slug}" in text
    assert f"Unsubscribe with one click: {SITE}/unsubscribe?t=abc&x=1" in text and POSTAL_ADDRESS in text
    assert POSTAL_ADDRESS in html
    links = re.findall(r'(?:href|src)="([^"]+)"', html)
    assert links and all(link.startswith(("https://", "http://")) for link in links), links
    assert f'href="{SITE}/unsubscribe?t=abc&amp;x=1"' in html and f'href="{BOOK.book_link}"' in html
    [cover] = re.findall(r"<img [^>]*>", html)
    assert re.search(rf'src="{SITE}/images/variants/[^"]+-share\.jpg"', cover)
    assert f'alt="{BOOK.image_alt}"' in cover
    # What mail clients need: CSS in the elements, tables at most 600 px wide, nothing remote or active.
    assert "<style" not in html and 'style="' in html
    assert "max-width: 600px" in html and 'role="presentation"' in html
    assert "<script" not in html.lower() and "@import" not in html and "fonts.g" not in html
    assert 'name="viewport" content="width=device-width' in html
    # A sane balance: the text part is a real letter, not a stub.
    assert len(text) > 0.25 * len(re.sub(r"<[^>]+>", "", html))
    assert message["From"] == "Animals We Confuse <site@animals.example>"
    assert message["To"] == "Jo Reader <jo@readers.example>"
    assert message["Subject"] == f"New from {BRAND_NAME}: {BOOK.title}"
    assert message["Subject"] != message["Subject"].upper()  # no shouting
    assert message["Date"] == "Mon, 23 Nov 2026 12:00:00 +0000"
    assert message["Message-ID"] == "<m1@animals.example>"  # as issued (its form: tests/unit/test_mailer.py)
    assert message["List-Unsubscribe"] == f"<{SITE}/unsubscribe?t=abc&x=1>"  # the rest: test_list_headers.py


def test_the_books_and_readers_words_are_escaped_in_html_kept_in_text_and_every_copy_is_what_the_wire_allows(mail):
    book = BOOK.model_copy(update={"title": 'Toad <b>or</b> "Frog" & co', "description": "<script>x</script>"})
    message = jo_email(mail, name='Zoë <Jo> & "co"', book=book)
    text = body(message, "plain")
    html = body(message, "html")
    assert "&lt;b&gt;or&lt;/b&gt;" in html and "&amp; co" in html and "<script>" not in html
    assert "Hello Zoë &lt;Jo&gt; &amp; &#34;co&#34;," in html
    assert 'Toad <b>or</b> "Frog" & co' in text and 'Hello Zoë <Jo> & "co",' in text
    assert f'href="{SITE}/unsubscribe?t=abc&amp;x=1"' in html and f"{SITE}/unsubscribe?t=abc&x=1" in text
    for name in ('Zoë <Jo> & "co"', "Jo Reader", "", "Zoë Ŝmith, Jr.", "Ann-Marie O'Neil", "Reader 12"):
        data = jo_bytes(mail, name=name)
        assert b"\n" not in data.replace(b"\r\n", b"") and data.isascii()
        assert all(len(line) <= 78 for line in data.split(b"\r\n")), name
        message = email.message_from_bytes(data, policy=email.policy.default)
        assert message["To"].addresses[0].display_name == name
        assert body(message, "plain").startswith(f"Hello {name},\n" if name else "Hello,\n")


def dkim_pair(tmp_path) -> tuple[str, str]:
    """A private key file, and the public key as its DNS record's p= holds it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path / "dkim.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
    )
    public = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return str(path), base64.b64encode(public).decode()


def test_announce_refuses_with_why_and_a_test_copy_goes_to_one_address_recorded_nowhere(db_url, smtp_server):
    env = smtp_server.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, PUBLISHER_GATEWAY_URL="")
    readers(db_url, 3)
    no_postal = publisher_gateway(
        db_url, "announce", BOOK.slug, "--yes", check=False, env=smtp_server.mail_env(PUBLISHER_GATEWAY_URL="")
    )
    assert no_postal.returncode == 2
    assert "PUBLISHER_POSTAL_ADDRESS is not set" in no_postal.stderr and "Nothing was sent." in no_postal.stderr
    unknown = publisher_gateway(db_url, "announce", "no-such-book", "--yes", check=False, env=env)
    known = ", ".join(sorted(book.slug for book in books.BOOKS))
    assert unknown.returncode == 2 and f"no book 'no-such-book' in the content. Known books: {known}." in unknown.stderr
    unasked = publisher_gateway(db_url, "announce", BOOK.slug, check=False, env=env)  # no terminal, no --yes
    assert unasked.returncode == 2 and "add --yes to send" in unasked.stderr and "Recipients: 3" in unasked.stderr
    assert smtp_server.received == []

    test_copy = publisher_gateway(db_url, "announce", BOOK.slug, "--test-to", "editor@readers.example", env=env)
    subject = f"New from {BRAND_NAME}: {BOOK.title}"
    assert f"Sent a test copy of {subject!r} to editor@readers.example. Nothing was recorded." in test_copy.stderr
    [copy] = smtp_server.wait_for(1, timeout=10)
    assert copy.rcpt_tos == ["editor@readers.example"]
    assert "This is a test copy of a release email" in copy.message.get_body(("plain",)).get_content()
    assert "No campaigns yet." in publisher_gateway(db_url, "campaigns", env=env).stdout


# --- Sending, to aiosmtpd. ---


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_every_confirmed_reader_gets_one_email_over_one_connection_and_nobody_else(db_url, smtp_server, mail):
    readers(db_url, 60)
    readers(db_url, 3, "pending", start=100)
    readers(db_url, 2, "unsubscribed", start=200)
    item = start_campaign(db_url, mail)
    assert item.recipients == 60 and item.status == tables.SENDING
    assert start_campaign(db_url, mail) is None  # the book has its campaign: nobody is queued twice

    await sender_for(mail, db_url, Clock()).send_due()
    assert sorted(recipients(smtp_server)) == sorted(f"reader{n}@readers.example" for n in range(60))
    assert smtp_server.greetings == 1  # one SMTP connection carried all 60
    assert len(set(smtp_server.message_ids())) == 60
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 0, "sent": 60, "failed": 0, "skipped": 0}
    assert campaigns.get_campaign(item.id, db_url).status == tables.FINISHED
    assert queue.list_deliveries(db_url=db_url) == []  # the outbox's own listing stays about its own jobs


@pytest.mark.asyncio
async def test_every_email_is_recorded_before_the_next_goes_and_a_reader_leaving_meanwhile_gets_nothing(
    db_url, smtp_server, mail
):
    """The one-duplicate window, seen by the server; and the status is read at sending time, so a reader
    who leaves while the email before theirs is being taken gets nothing."""
    readers(db_url, 40)
    item = start_campaign(db_url, mail)
    leaving = next(r for r in subscribers.list_subscribers(db_url=db_url) if r.email == "reader10@readers.example")
    subscribers.forget("reader20@readers.example", db_url)  # forgotten after queueing: nothing either
    seen: list[tuple[int, int]] = []

    def taking(rcpt_tos: list[str]) -> None:
        seen.append((len(smtp_server.received), campaigns.campaign_counts(item.id, db_url)[tables.SENT]))
        if rcpt_tos == ["reader9@readers.example"]:
            subscribers.unsubscribe(leaving.link_key, "test", db_url)

    smtp_server.on_data = taking
    await sender_for(mail, db_url, Clock()).send_due()
    assert len(seen) == 38 and all(recorded == taken for taken, recorded in seen), seen
    assert {leaving.email, "reader20@readers.example"}.isdisjoint(recipients(smtp_server))
    assert len(recipients(smtp_server)) == 38
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 0, "sent": 38, "failed": 0, "skipped": 1}


@pytest.mark.asyncio
async def test_an_envelope_whose_connection_was_lost_is_retried_not_failed_for_the_reader(smtp_server, mail):
    session = mailer.SmtpSession(mail)
    await session.begin("jo@readers.example")
    session._client.close()  # the connection drops between the envelope and the data
    with pytest.raises(returns.DeliveryFailed) as failed:
        await session.finish(jo_bytes(mail))
    assert not failed.value.permanent and smtp_server.received == []
    await session.close()


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_the_throttle_paces_every_sender_together(db_url, smtp_server):
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="4")
    readers(db_url, 8)
    start_campaign(db_url, mail)
    clock = Clock()
    one, two = sender_for(mail, db_url, clock), sender_for(mail, db_url, clock)
    # Each sender reserves its slots in the one throttle row: the second's start where the first's end.
    first = campaigns.reserve_send_slots(3, lambda n, at: campaign.reserve_slots(n, at, 3, 4), clock(), db_url)
    second = campaigns.reserve_send_slots(3, lambda n, at: campaign.reserve_slots(n, at, 3, 4), clock(), db_url)
    assert (second - first).total_seconds() == pytest.approx(0.75)
    started = clock()
    await one.send_due()
    await two.send_due()
    assert len(smtp_server.received) == 8
    # 8 emails at 4 per second after the 6 slots reserved above: the last about 3.25 s later.
    assert (clock() - started).total_seconds() == pytest.approx(1.5 + 7 / 4, abs=0.05)


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_dead_senders_batch_goes_to_the_next_sender_and_nobody_is_doubled(db_url, smtp_server, mail):
    readers(db_url, 30)
    item = start_campaign(db_url, mail)
    clock = Clock()
    # A sender on another machine claimed 20 and died; one on this machine claimed 5 and died.
    campaigns.claim_release_batch("elsewhere:1:dead", clock(), campaign.LEASE, 20, db_url)
    campaigns.claim_release_batch(f"{socket.gethostname()}:999999999:dead", clock(), campaign.LEASE, 5, db_url)
    assert campaign.free_dead_leases(db_url) == 5  # this machine's dead process: freed at once
    await sender_for(mail, db_url, clock).send_due()
    assert len(smtp_server.received) == 10
    clock.now += campaign.LEASE + timedelta(seconds=1)  # the other machine's lease ran out
    await sender_for(mail, db_url, clock).send_due()
    assert sorted(recipients(smtp_server)) == sorted(f"reader{n}@readers.example" for n in range(30))
    assert campaigns.get_campaign(item.id, db_url).status == tables.FINISHED


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_two_senders_at_once_send_each_reader_once(db_url, smtp_server, mail):
    readers(db_url, 120)
    start_campaign(db_url, mail)
    await asyncio.gather(*(sender_for(mail, db_url, Clock()).send_due() for _ in range(2)))
    sent = recipients(smtp_server)
    assert len(sent) == 120 and len(set(sent)) == 120


@pytest.mark.asyncio
async def test_many_failures_in_a_row_pause_the_campaign_and_announce_resumes_it(db_url, smtp_server, caplog, mail):
    readers(db_url, 15)
    item = start_campaign(db_url, mail)
    smtp_server.replies.extend(["554 5.7.0 Daily sending quota exceeded"] * campaign.PAUSE_AFTER)
    clock = Clock()
    await sender_for(mail, db_url, clock).send_due()
    state = campaigns.get_campaign(item.id, db_url)
    assert state.status == tables.PAUSED and "Daily sending quota exceeded" in state.paused_reason
    [line] = [r for r in caplog.records if "paused" in r.getMessage()]
    assert f"publisher-gateway announce {BOOK.slug}` resumes it" in line.getMessage()
    # The refused ones were not the readers' fault: they wait, with the rest, for the resume.
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 15, "sent": 0, "failed": 0, "skipped": 0}
    assert smtp_server.received == []
    assert campaigns.set_campaign_status(item.id, tables.SENDING, now=clock(), db_url=db_url)
    await sender_for(mail, db_url, clock).send_due()
    assert len(smtp_server.received) == 15 and campaigns.get_campaign(item.id, db_url).status == tables.FINISHED


# --- One bad email never stops a campaign; a lease never outlives its batch. ---


@pytest.mark.asyncio
async def test_an_error_building_inside_the_smtp_client_or_in_the_headers_fails_that_reader_alone_and_pauses_nothing(
    db_url, smtp_server, monkeypatch, mail
):
    # More stray breaks in a row than the pause threshold: an email refused before it goes is no server fault.
    broken = range(4, campaign.PAUSE_AFTER + 5)
    readers(db_url, campaign.PAUSE_AFTER + 6)
    item = start_campaign(db_url, mail)
    real, real_rcpt, real_header = release_email.PreparedRelease.message, aiosmtplib.SMTP.rcpt, mailer.verbatim_header

    def message_that_breaks_for_reader_1(self, **kwargs):
        if kwargs["email"] == "reader1@readers.example":
            raise KeyError("greeting")
        return real(self, **kwargs)

    async def rcpt_that_breaks_for_reader_3(self, recipient, *args, **kwargs):
        if recipient == "reader3@readers.example":
            "\u00fc".encode("ascii")  # UnicodeEncodeError, as aiosmtplib raised for a Unicode domain
        return await real_rcpt(self, recipient, *args, **kwargs)

    def to_header_written_broken(name, value):
        # What Python 3.11.7's email package made of an encoded word in a name: header lines.
        written = real_header(name, value)
        if name == "To" and any(f"reader{n}@" in value for n in broken):
            return written + b"Bcc: victim@example.com\r\n"
        return written

    monkeypatch.setattr(release_email.PreparedRelease, "message", message_that_breaks_for_reader_1)
    monkeypatch.setattr(aiosmtplib.SMTP, "rcpt", rcpt_that_breaks_for_reader_3)
    monkeypatch.setattr(mailer, "verbatim_header", to_header_written_broken)
    await sender_for(mail, db_url, Clock()).send_due()
    last = campaign.PAUSE_AFTER + 5
    assert sorted(recipients(smtp_server)) == sorted(f"reader{n}@readers.example" for n in (0, 2, last))
    assert all(b"Bcc" not in received.data for received in smtp_server.received)
    failed = 2 + len(broken)
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 0, "sent": 3, "failed": failed, "skipped": 0}
    assert campaigns.get_campaign(item.id, db_url).status == tables.FINISHED
    assert {
        "could not be built or sent: KeyError: 'greeting'",
        "not sent, its headers are unsafe: it holds headers the site did not write: Bcc",
    } < {job.last_error for job in jobs(db_url, tables.FAILED)}


@pytest.mark.asyncio
async def test_a_campaign_whose_book_left_the_content_fails_each_email_with_why(
    db_url, smtp_server, monkeypatch, caplog, mail
):
    readers(db_url, 2)
    item = start_campaign(db_url, mail)
    monkeypatch.setattr(books, "book_by_slug", lambda slug: None)
    await sender_for(mail, db_url, Clock()).send_due()
    assert smtp_server.received == []
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 0, "sent": 0, "failed": 2, "skipped": 0}
    assert [job.last_error for job in jobs(db_url, tables.FAILED)] == ["the book is no longer in the content"] * 2
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []  # a reason per email, no error each


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_long_wait_for_the_throttle_keeps_the_batch_and_nobody_is_sent_twice(db_url, smtp_server):
    """Many senders sharing a low rate: the first slot lies beyond the batch's lease. The
    lease is renewed while the sender waits, so nobody else can take the batch meanwhile."""
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="1")
    readers(db_url, 3)
    start_campaign(db_url, mail)
    clock = Clock()
    # Other senders took the next 150 seconds of slots.
    campaigns.reserve_send_slots(150, lambda n, at: campaign.reserve_slots(n, at, 150, 1), clock(), db_url)
    taken_by_another: list[int] = []

    async def sleep_while_another_sender_looks(seconds: float) -> None:
        await clock.sleep(seconds)
        stolen = campaigns.claim_release_batch("another:1:x", clock(), campaign.LEASE, 50, db_url)
        taken_by_another.extend(job.id for job in stolen)

    sender = sender_for(mail, db_url, clock, "this:1:x", sleep=sleep_while_another_sender_looks)
    await sender.send_due()
    assert taken_by_another == []
    assert sorted(recipients(smtp_server)) == [f"reader{n}@readers.example" for n in range(3)]
    assert max(clock.slept) <= campaign.LEASE.total_seconds() / 2


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_batch_whose_lease_was_lost_stops_and_sends_nothing_more(db_url, smtp_server, caplog):
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="1")
    readers(db_url, 4)
    start_campaign(db_url, mail)
    clock = Clock()
    stole = []

    async def sleep_then_lose_the_lease(seconds: float) -> None:
        await clock.sleep(seconds)
        if not stole:  # another sender holds the rest now (say this one was stalled past its lease)
            with tables.engine(db_url).begin() as connection:
                connection.execute(
                    sqlalchemy.update(tables.Delivery)
                    .where(tables.Delivery.claimed_by == "this:1:x", tables.Delivery.status == tables.PENDING)
                    .values(claimed_by="another:1:x")
                )
            stole.append(True)
            clock.now += campaign.LEASE  # so this sender renews before its next email

    sender = sender_for(mail, db_url, clock, "this:1:x", sleep=sleep_then_lose_the_lease)
    await sender.send_batch()
    assert recipients(smtp_server) == ["reader0@readers.example"]  # sent before the lease was lost
    assert "batch stopped" in caplog.text
    await sender.session.close()


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_senders_that_die_mid_batch_count_only_the_email_they_were_sending(db_url, smtp_server, mail):
    """A batch holds 50 jobs, one of which is in flight: three crashes give up that one
    reader's email (claimed 3 times without an outcome), never the 49 it was not sending."""
    readers(db_url, 5)
    item = start_campaign(db_url, mail)
    clock = Clock()
    for n in range(3):  # a sender claims the batch, starts its first email, and is killed
        batch = campaigns.claim_release_batch(f"elsewhere:{n}:dead", clock(), campaign.LEASE, 50, db_url)
        assert queue.begin_sending(batch[0].id, batch[0].source.id, db_url) == "confirmed"
        clock.now += campaign.LEASE + timedelta(seconds=1)
    await sender_for(mail, db_url, clock).send_due()
    assert sorted(recipients(smtp_server)) == [f"reader{n}@readers.example" for n in (1, 2, 3, 4)]
    assert campaigns.campaign_counts(item.id, db_url) == {"pending": 0, "sent": 4, "failed": 1, "skipped": 0}


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_batch_stopped_before_its_next_email_takes_that_emails_mark_back(db_url, mail):
    readers(db_url, 3)
    start_campaign(db_url, mail)
    clock = Clock()
    batch = campaigns.claim_release_batch("this:1:x", clock(), campaign.LEASE, 50, db_url)
    queue.begin_sending(batch[0].id, batch[0].source.id, db_url)
    queue.release_leases([job.id for job in batch], "this:1:x", db_url, marked=batch[0].id)
    again = campaigns.claim_release_batch("this:1:y", clock(), campaign.LEASE, 50, db_url)
    assert [job.stalled_claims for job in again] == [0, 0, 0]
