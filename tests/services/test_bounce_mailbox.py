"""The bounce mailbox read from Dovecot, what comes back put in as real servers write it; on PostgreSQL too
where the SQL differs (ON CONFLICT, the lease, a NUL refused in text)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from datetime import datetime, timedelta

import pytest
import sqlalchemy

from publisher.config.settings import from_environ
from publisher.returns import bounce_mailbox
from publisher.returns.imap_client import MailboxClient
from publisher.rules import reports
from publisher.rules.list_rules import ListStatus
from publisher.storage import bounce_records, notice_records, tables
from publisher.storage.tables import JobLease, utc_now
from tests.databases import ON_BOTH_DATABASES
from tests.imap import DovecotServer
from tests.samples import bounce_sample
from tests.services.test_bounces import BOUNCE_ADDRESS, status_of
from tests.services.test_campaign import Clock, readers, sender_for, start_campaign
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import publisher_gateway, wait_until
from tests.unit.test_reports import dsn_naming


def env_for(smtp: SmtpServer, mailbox: DovecotServer, **extra: str) -> dict[str, str]:
    return smtp.mail_env(
        PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS,
        PUBLISHER_SEND_RATE="0",
        PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS,
        PUBLISHER_BOUNCE_MAILBOX=mailbox.url(),
        PUBLISHER_BOUNCE_CA_FILE=str(mailbox.ca_file),  # Dovecot offers STARTTLS, with the tests' own CA
        **extra,
    )


async def send_release(db_url: str, env: dict[str, str], smtp: SmtpServer, count: int) -> dict[str, tuple[str, str]]:
    """Each new confirmed reader's (Return-Path, Message-ID) as received."""
    mail = from_environ(env).mail
    readers(db_url, count)
    smtp.received.clear()
    start_campaign(db_url, mail)
    await sender_for(mail, db_url, Clock()).send_due()
    return {item.rcpt_tos[0]: (item.mail_from, item.message["Message-ID"]) for item in smtp.received}


def put(mailbox: DovecotServer, sample: str, sent: tuple[str, str], reader: str) -> bytes:
    verp, message_id = sent
    raw = bounce_sample(sample, verp=verp, reader=reader, message_id=message_id, sender="site@animals.example")
    mailbox.append(raw)
    return raw


def read(env: dict[str, str], db_url: str, **kwargs) -> bounce_mailbox.Reading | None:
    return bounce_mailbox.read_once(from_environ(env), db_url, **kwargs)


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_reports_and_a_complaint_are_recorded_once_and_moved_and_the_rest_is_left_untouched(
    db_url, smtp_server, mailbox
):
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 6)
    reader = [f"reader{n}@readers.example" for n in range(6)]
    put(mailbox, "dsn-postfix-hard", sent[reader[0]], reader[0])
    put(mailbox, "qmail-hard", sent[reader[1]], reader[1])
    # An Exim bounce that lost the token (sent to the plain address): matched by the quoted Message-ID.
    put(mailbox, "exim-hard", (BOUNCE_ADDRESS, sent[reader[2]][1]), reader[2])
    put(mailbox, "arf-complaint", sent[reader[3]], reader[3])
    put(mailbox, "dsn-gmail-soft", sent[reader[4]], reader[4])
    auto_reply = put(mailbox, "auto-reply", sent[reader[5]], reader[5])
    stranger = put(mailbox, "stranger", sent[reader[5]], reader[5])
    mailbox.append(b"Subject: read\r\nFrom: a@example.net\r\n\r\nalready read\r\n", flags=["\\Seen"])

    reading = read(env, db_url)
    assert (reading.bounces, reading.complaints, reading.auto_replies, reading.unclassified) == (4, 1, 1, 2)
    # One soft bounce (reader 4) is counted, not enough; an auto-reply (reader 5) changes nothing.
    statuses = [ListStatus.BOUNCED] * 3 + [ListStatus.UNSUBSCRIBED, ListStatus.CONFIRMED, ListStatus.CONFIRMED]
    assert [status_of(db_url, address) for address in reader] == statuses
    lines = sorted(bounce_records.list_bounces(db_url=db_url), key=lambda line: line.email)
    assert [(line.email, line.kind, line.source) for line in lines] == [
        (r, kind, "mailbox") for r, kind in zip(reader[:5], ["hard", "hard", "hard", "complaint", "soft"], strict=True)
    ]
    assert "550 5.1.1" in lines[0].reason
    # The auto-reply, the stranger's email and a read message stay where they were, flags unchanged.
    left = mailbox.messages("INBOX")
    unix = [raw.replace(b"\r\n", b"\n") for _flags, raw in left]  # the server stores lines with CRLF
    assert unix[:2] == [auto_reply.replace(b"\r\n", b"\n"), stranger.replace(b"\r\n", b"\n")]
    assert [flags for flags, _raw in left] == [frozenset(), frozenset(), frozenset({"\\Seen"})]
    assert len(mailbox.messages("Processed")) == 5

    # Read again: nothing is fetched again, counted twice or moved.
    again = read(env, db_url)
    assert (again.messages, again.already_met, again.bounces, again.complaints, again.moved) == (0, 3, 0, 0, 0)
    assert len(bounce_records.list_bounces(db_url=db_url)) == 5
    shown = publisher_gateway(db_url, "bounces").stdout
    assert "2 messages in the bounce mailbox were left where they are (2 could not be classified)" in shown


@pytest.mark.asyncio
async def test_a_report_without_proof_changes_nobody_and_is_left_for_the_publisher(db_url, smtp_server, mailbox):
    """Issue 34: one forged report to bounces@ made confirmed readers bounced or unsubscribed."""
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 3)
    readers(db_url, 3, status="pending", start=3)
    everyone = [f"reader{n}@readers.example" for n in range(6)]
    before = {address: status_of(db_url, address) for address in everyone}
    verp, message_id = sent[everyone[0]]
    forged = verp.replace(verp.split("-")[-1].split("@")[0], "0" * 20)
    put(mailbox, "dsn-postfix-hard", (forged, "<forged@example.net>"), everyone[0])
    # A genuine Message-ID, but of an email to somebody else: a reader reporting another one.
    put(mailbox, "qmail-hard", (BOUNCE_ADDRESS, message_id), everyone[1])
    # No token, and a Message-ID the site never issued: it names the reader, and proves nothing.
    for n, address in enumerate(everyone):
        sample = ("dsn-postfix-hard", "arf-complaint", "qmail-hard")[n % 3]
        put(mailbox, sample, (BOUNCE_ADDRESS, f"<made-up-{n}@animals.example>"), address)
    # One DSN naming every reader at once, as a stranger would write it to the plain bounce address.
    mailbox.append(dsn_naming(len(everyone), to=BOUNCE_ADDRESS, newline="\r\n"))

    reading = read(env, db_url)
    assert (reading.messages, reading.unproven, reading.bounces, reading.complaints, reading.moved) == (9, 9, 0, 0, 0)
    assert {address: status_of(db_url, address) for address in everyone} == before
    assert set(before.values()) == {ListStatus.CONFIRMED, ListStatus.PENDING}
    assert bounce_records.list_bounces(db_url=db_url) == []
    assert len(mailbox.messages("INBOX")) == 9 and "Processed" not in mailbox.folders()  # kept, never deleted
    shown = publisher_gateway(db_url, "bounces").stdout
    assert "9 messages in the bounce mailbox were left where they are (9 a report that names no email" in shown
    assert shown.count("(names no email this site sent)") == 9


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_reader_stopped_between_recording_and_moving_never_counts_a_report_twice(
    db_url, smtp_server, mailbox, monkeypatch
):
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 1)
    put(mailbox, "dsn-postfix-hard", sent["reader0@readers.example"], "reader0@readers.example")
    real_move = MailboxClient.move

    def dies_before_moving(self, uid, folder):
        raise RuntimeError("the worker was stopped")

    monkeypatch.setattr(MailboxClient, "move", dies_before_moving)
    first = read(env, db_url)
    assert first.troubles == 1 and len(mailbox.messages("INBOX")) == 1
    monkeypatch.setattr(MailboxClient, "move", real_move)
    second = read(env, db_url)
    assert (second.bounces, second.moved) == (0, 1)
    assert len(bounce_records.list_bounces(db_url=db_url)) == 1
    assert mailbox.messages("INBOX") == [] and len(mailbox.messages("Processed")) == 1


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_two_workers_reading_at_once_process_each_report_once(db_url, smtp_server, mailbox):
    env = env_for(smtp_server, mailbox)
    count = 12
    sent = await send_release(db_url, env, smtp_server, count)
    for n in range(count):
        address = f"reader{n}@readers.example"
        put(mailbox, "qmail-hard" if n % 2 else "dsn-postfix-hard", sent[address], address)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        readings = list(pool.map(lambda worker: read(env, db_url, worker=worker), ["worker-a", "worker-b"]))
    done = [reading for reading in readings if reading is not None]
    assert sum(reading.bounces for reading in done) == count
    # Whichever read later (or found the lease held) found nothing left to do.
    while mailbox.messages("INBOX"):
        read(env, db_url)
    assert len(bounce_records.list_bounces(db_url=db_url)) == count
    assert len(mailbox.messages("Processed")) == count
    assert {status_of(db_url, f"reader{n}@readers.example") for n in range(count)} == {ListStatus.BOUNCED}


def test_the_command_reads_the_mailbox_once_and_a_mailbox_it_cannot_reach_is_explained(db_url, smtp_server, mailbox):
    env = env_for(smtp_server, mailbox)
    mailbox.append(bounce_sample("stranger", verp=BOUNCE_ADDRESS, reader="r@example.org", message_id="<x@y>"))
    done = publisher_gateway(db_url, "bounces", "--check", env=env)
    assert done.stderr.startswith(
        f"Bounce mailbox imap://{mailbox.user}:***@127.0.0.1:{mailbox.port}/INBOX: 1 new messages"
    )
    assert "1 unclassified" in done.stderr
    read = notice_records.run_status(notice_records.BOUNCE_MAILBOX, db_url)  # for the dashboard and the notices
    assert read.last_success_at is not None and read.failing_since is None
    wrong = {**env, "PUBLISHER_BOUNCE_MAILBOX": mailbox.url().replace(mailbox.password, "not-the-password")}
    refused = publisher_gateway(db_url, "bounces", "--check", env=wrong, check=False)
    assert refused.returncode == 1 and "not-the-password" not in refused.stderr
    assert refused.stderr.startswith("publisher-gateway: ") and "***" in refused.stderr
    failing = notice_records.run_status(notice_records.BOUNCE_MAILBOX, db_url)
    assert failing.failing_since is not None and failing.last_success_at == read.last_success_at
    assert failing.last_error and "***" in failing.last_error and "not-the-password" not in failing.last_error
    unset = publisher_gateway(db_url, "bounces", "--check", env=smtp_server.mail_env(), check=False)
    assert unset.returncode == 2 and "PUBLISHER_BOUNCE_MAILBOX is not set" in unset.stderr


@pytest.mark.asyncio
async def test_the_sites_workers_read_the_mailbox_every_poll(db_url, smtp_server, mailbox, monkeypatch):
    env = env_for(smtp_server, mailbox, PUBLISHER_BOUNCE_POLL_S="1")
    sent = await send_release(db_url, env, smtp_server, 1)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    task = asyncio.create_task(bounce_mailbox.run_in_backend(db_url))
    try:
        put(mailbox, "dsn-postfix-hard", sent["reader0@readers.example"], "reader0@readers.example")
        async with asyncio.timeout(30):
            while status_of(db_url, "reader0@readers.example") != ListStatus.BOUNCED:
                await asyncio.sleep(0.1)
        assert not task.done()
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# --- A hostile message fails alone; the reader goes on ------------------------------------


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_nul_in_every_header_the_reader_stores_is_cleaned_and_the_bounce_behind_it_is_read(
    db_url, smtp_server, mailbox
):
    """Issue 34: a NUL in From: made PostgreSQL refuse the row, and the reader met the same
    oldest message on every poll, forever; a genuine bounce behind it was never read."""
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 2)
    first, second = "reader0@readers.example", "reader1@readers.example"
    poisoned = put(mailbox, "dsn-postfix-hard", sent[first], first)
    mailbox.empty()
    nul = "=?utf-8?q?=00?="  # an encoded-word: the only way a NUL survives IMAP, and decoded by the parser
    poisoned = (
        poisoned.replace(b"From: MAILER-DAEMON@mx.example.org (Mail Delivery System)", f"From: a{nul}b".encode())
        .replace(b"Subject: Undelivered Mail Returned to Sender", f"Subject: Undelivered{nul} Mail".encode())
        .replace(b"Diagnostic-Code: smtp;", f"Diagnostic-Code: smtp; {nul}".encode())
    )
    mailbox.append(poisoned)
    mailbox.append(f"From: Someone {nul} <x{nul}y@example.net>\r\nSubject: hi{nul}\r\n\r\nhello\r\n".encode())
    put(mailbox, "qmail-hard", sent[second], second)

    reading = read(env, db_url)
    assert (reading.bounces, reading.unclassified, reading.troubles) == (2, 1, 0)
    assert [status_of(db_url, first), status_of(db_url, second)] == [ListStatus.BOUNCED, ListStatus.BOUNCED]
    stored = [line.reason for line in bounce_records.list_bounces(db_url=db_url)]
    left, _counts = bounce_records.left_messages(db_url=db_url)
    texts = [*stored, *(text for message in left for text in (message.sender, message.subject))]
    assert texts and not any("\x00" in text for text in texts)


@pytest.mark.asyncio
async def test_the_database_away_ends_the_read_and_a_message_it_refuses_fails_alone_and_the_next_is_read(
    db_url, smtp_server, mailbox, monkeypatch
):
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 2)
    first, second = "reader0@readers.example", "reader1@readers.example"
    put(mailbox, "dsn-postfix-hard", sent[first], first)
    put(mailbox, "qmail-hard", sent[second], second)
    real = bounce_records.record_message
    tried: list[int] = []

    def database_away(place, uid, *args, **kwargs):
        tried.append(uid)
        raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("connection refused"))

    monkeypatch.setattr(bounce_records, "record_message", database_away)
    with pytest.raises(sqlalchemy.exc.OperationalError):
        read(env, db_url)
    assert len(tried) == 1 and len(mailbox.messages("INBOX")) == 2  # not a failure per message

    def refuses_the_first(place, uid, outcome, **kwargs):
        fetched = kwargs.get("fetched")
        if fetched is not None and fetched.subject == "Undelivered Mail Returned to Sender":
            raise sqlalchemy.exc.DataError("INSERT", {}, Exception("invalid byte sequence"))
        return real(place, uid, outcome, **kwargs)

    monkeypatch.setattr(bounce_records, "record_message", refuses_the_first)
    reading = read(env, db_url)
    assert (reading.bounces, reading.troubles) == (1, 1)
    assert [status_of(db_url, first), status_of(db_url, second)] == [ListStatus.CONFIRMED, ListStatus.BOUNCED]
    assert len(mailbox.messages("INBOX")) == 1  # left where it was
    monkeypatch.undo()
    again = read(env, db_url)
    assert (again.messages, again.troubles, again.already_met) == (0, 0, 1)  # failed once, not every poll
    shown = publisher_gateway(db_url, "bounces").stdout
    assert "(1 could not be handled)" in shown and "could not be handled (DataError)" in shown


@pytest.mark.asyncio
async def test_a_message_above_the_size_limit_is_never_downloaded_and_the_bounce_after_it_is_read(
    db_url, smtp_server, mailbox, monkeypatch
):
    env = env_for(smtp_server, mailbox, PUBLISHER_BOUNCE_MAX_BYTES="50000")
    sent = await send_release(db_url, env, smtp_server, 1)
    huge = dsn_naming(1000, to=BOUNCE_ADDRESS, newline="\r\n")
    assert len(huge) > 50_000
    mailbox.append(huge)
    put(mailbox, "dsn-postfix-hard", sent["reader0@readers.example"], "reader0@readers.example")
    fetched = count_fetches(monkeypatch)

    reading = read(env, db_url)
    assert (reading.too_large, reading.bounces, len(fetched)) == (1, 1, 1)
    assert status_of(db_url, "reader0@readers.example") == ListStatus.BOUNCED
    [(flags, _raw)] = mailbox.messages("INBOX")
    assert flags == frozenset()  # left unread
    shown = publisher_gateway(db_url, "bounces").stdout
    assert f"too large to read: {len(huge):,} bytes" in shown  # its lines end in CRLF, as IMAP counts them
    assert "above PUBLISHER_BOUNCE_MAX_BYTES (50,000)" in shown


def count_fetches(monkeypatch) -> list[int]:
    fetched: list[int] = []
    real = MailboxClient.fetch

    def counting(self, uid):
        fetched.append(uid)
        return real(self, uid)

    monkeypatch.setattr(MailboxClient, "fetch", counting)
    return fetched


def test_a_poll_over_200_messages_it_left_fetches_no_body(db_url, smtp_server, mailbox, monkeypatch):
    """Issue 34: every poll downloaded every message left in the mailbox again."""
    env = env_for(smtp_server, mailbox)
    mailbox.append(
        *(
            f"From: person{n}@example.net\r\nSubject: hello {n}\r\n\r\nA letter, not a report.\r\n".encode()
            for n in range(200)
        )
    )
    assert read(env, db_url).unclassified == 200
    fetched = count_fetches(monkeypatch)
    again = read(env, db_url)
    assert (again.messages, again.already_met, fetched) == (0, 200, [])
    left, counts = bounce_records.left_messages(db_url=db_url, limit=50)
    assert (len(left), counts) == (50, {bounce_records.UNCLASSIFIED: 200})


def test_what_the_reader_remembers_of_a_message_gone_from_the_mailbox_is_pruned_after_90_days(
    db_url, smtp_server, mailbox
):
    env = env_for(smtp_server, mailbox)
    mailbox.append(b"From: a@example.net\r\nSubject: stays\r\n\r\nhello\r\n")
    mailbox.append(b"From: b@example.net\r\nSubject: goes\r\n\r\nhello\r\n")
    read(env, db_url)
    [(_flags, _raw), _] = mailbox.messages("INBOX")
    mailbox.empty()
    mailbox.append(b"From: a@example.net\r\nSubject: stays\r\n\r\nhello\r\n")  # a new UID: met anew
    later = utc_now() + timedelta(days=90)  # as docs/mailing-list.md states it
    read(env, db_url, clock=lambda: later - timedelta(days=1))
    assert bounce_records.left_messages(db_url=db_url)[1] == {bounce_records.UNCLASSIFIED: 3}
    read(env, db_url, clock=lambda: later + timedelta(days=1))
    left, counts = bounce_records.left_messages(db_url=db_url)
    assert counts == {bounce_records.UNCLASSIFIED: 1} and [message.subject for message in left] == ["stays"]


def lease_until(db_url: str) -> datetime:
    with tables.engine(db_url).connect() as connection:
        statement = sqlalchemy.select(JobLease.until).where(JobLease.name == bounce_mailbox.LEASE_NAME)
        return tables.as_utc(connection.execute(statement).scalar_one())


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_the_lease_is_renewed_while_one_message_takes_longer_than_it(db_url, smtp_server, mailbox, monkeypatch):
    """Issue 34: the lease was renewed only between messages, so one message handled for longer
    than the lease let a second worker start on the same mailbox."""
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 1)
    put(mailbox, "dsn-postfix-hard", sent["reader0@readers.example"], "reader0@readers.example")
    lease = timedelta(seconds=2)  # renewed every half second of real time
    monkeypatch.setattr(bounce_mailbox, "LEASE", lease)
    clock = Clock(utc_now())
    inside, done = threading.Event(), threading.Event()
    real_classify = reports.classify

    def slow_classify(raw: bytes):
        inside.set()
        assert done.wait(60)  # held until the other worker has tried
        return real_classify(raw)

    monkeypatch.setattr(reports, "classify", slow_classify)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        first = pool.submit(read, env, db_url, worker="worker-a", clock=clock)
        try:
            assert inside.wait(60)
            taken_until = lease_until(db_url)
            clock.now = taken_until + lease / 2  # the lease taken at the start has run out
            wait_until(lambda: lease_until(db_url) > clock.now, 30, "worker-a to renew its lease during the message")
            assert read(env, db_url, worker="worker-b", clock=clock) is None  # worker-a still holds it
        finally:
            done.set()
        assert first.result(timeout=60).bounces == 1
