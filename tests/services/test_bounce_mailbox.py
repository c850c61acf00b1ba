"""The bounce mailbox, read from a real IMAP server (Dovecot, tests/imap.py) on both databases.

A release goes out through aiosmtpd with VERP Return-Paths; what comes back is put into
the mailbox in the formats real servers write (tests/samples/bounces), addressed to the
Return-Path and quoting the Message-ID of the email each is about.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses

import pytest
import sqlalchemy

from publisher import content
from publisher.config.settings import bounce_settings, mail_settings
from publisher.mail import bounce_mailbox
from publisher.mail.bounce_mailbox_client import MailboxClient
from publisher.rules.list_rules import ListStatus
from publisher.storage import bounce_records
from publisher.storage import subscribers as mailing_list
from tests.imap import DovecotServer
from tests.samples import bounce_sample
from tests.services.test_campaign import Clock, readers, sender_for, start_campaign
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import publisher_gateway

BOUNCE_ADDRESS = "bounces@animals.example"
FROM = "site@animals.example"


@pytest.fixture
def smtp_server():
    server = SmtpServer().start()
    yield server
    server.stop()


def env_for(smtp: SmtpServer, mailbox: DovecotServer, **extra: str) -> dict[str, str]:
    return smtp.mail_env(
        PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS,
        PUBLISHER_SEND_RATE="0",
        PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS,
        PUBLISHER_BOUNCE_MAILBOX=mailbox.url(),
        PUBLISHER_BOUNCE_CA_FILE=str(mailbox.ca_file),  # Dovecot offers STARTTLS, with the tests' own CA
        **extra,
    )


def status_of(db_url: str, email: str) -> str:
    [row] = [row for row in mailing_list.list_subscribers(db_url=db_url) if row.email == email]
    return row.status


async def send_release(
    db_url: str, env: dict[str, str], smtp: SmtpServer, count: int = 0, slug: str | None = None
) -> dict[str, tuple[str, str]]:
    """A release to the confirmed readers (``count`` new ones first); each reader's (Return-Path,
    Message-ID) as the server received them."""
    mail = mail_settings(env)
    if count:
        readers(db_url, count)
    smtp.received.clear()
    start_campaign(db_url, mail, **({"slug": slug} if slug else {}))
    await sender_for(mail, db_url, Clock()).send_due()
    return {item.rcpt_tos[0]: (item.mail_from, item.message["Message-ID"]) for item in smtp.received}


def put(mailbox: DovecotServer, sample: str, sent: tuple[str, str], reader: str) -> bytes:
    verp, message_id = sent
    raw = bounce_sample(sample, verp=verp, reader=reader, message_id=message_id, sender=FROM)
    mailbox.append(raw)
    return raw


def read(env: dict[str, str], db_url: str, **kwargs) -> bounce_mailbox.Reading | None:
    return bounce_mailbox.read_once(bounce_settings(env), mail_settings(env), db_url, **kwargs)


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
    assert [status_of(db_url, address) for address in reader] == [
        ListStatus.BOUNCED,
        ListStatus.BOUNCED,
        ListStatus.BOUNCED,
        ListStatus.UNSUBSCRIBED,
        ListStatus.CONFIRMED,  # one soft bounce is counted, not enough
        ListStatus.CONFIRMED,  # an auto-reply changes nothing
    ]
    kinds = sorted((line.email, line.kind, line.source) for line in bounce_records.list_bounces(db_url=db_url))
    assert kinds == [
        (reader[0], "hard", "mailbox"),
        (reader[1], "hard", "mailbox"),
        (reader[2], "hard", "mailbox"),
        (reader[3], "complaint", "mailbox"),
        (reader[4], "soft", "mailbox"),
    ]
    assert "550 5.1.1" in next(
        line.reason for line in bounce_records.list_bounces(db_url=db_url) if line.email == reader[0]
    )
    # The auto-reply, the stranger's email and a read message stay where they were, flags unchanged.
    left = mailbox.messages("INBOX")
    unix = [raw.replace(b"\r\n", b"\n") for _flags, raw in left]  # the server stores lines with CRLF
    assert unix[:2] == [auto_reply.replace(b"\r\n", b"\n"), stranger.replace(b"\r\n", b"\n")]
    assert [flags for flags, _raw in left] == [frozenset(), frozenset(), frozenset({"\\Seen"})]
    assert len(mailbox.messages("Processed")) == 5

    # Read again: nothing is counted twice, nothing more is moved.
    again = read(env, db_url)
    assert (again.messages, again.bounces, again.complaints, again.moved) == (3, 0, 0, 0)
    assert len(bounce_records.list_bounces(db_url=db_url)) == 5
    shown = publisher_gateway(db_url, "bounces").stdout
    assert "2 messages in the bounce mailbox could not be classified and were left where they are" in shown

    # A second release reaches only the readers still confirmed.
    second = await send_release(db_url, env, smtp_server, slug=content.BOOKS[1].slug)
    assert sorted(second) == [reader[4], reader[5]]


@pytest.mark.asyncio
async def test_a_forged_token_suppresses_nobody_and_a_report_without_one_names_the_failed_address(
    db_url, smtp_server, mailbox
):
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 2)
    victim, other = "reader0@readers.example", "reader1@readers.example"
    verp, message_id = sent[victim]
    forged = verp.replace(verp.split("-")[-1].split("@")[0], "0" * 20)
    put(mailbox, "dsn-postfix-hard", (forged, "<forged@example.net>"), victim)
    put(mailbox, "dsn-postfix-hard", (BOUNCE_ADDRESS, "<unknown@example.net>"), other)
    reading = read(env, db_url)
    assert reading.bounces == 2 and reading.moved == 2
    assert status_of(db_url, victim) == ListStatus.CONFIRMED
    assert status_of(db_url, other) == ListStatus.BOUNCED


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
        f"Bounce mailbox imap://{mailbox.user}:***@127.0.0.1:{mailbox.port}/INBOX: 1 messages"
    )
    assert "1 unclassified left where they are" in done.stderr
    wrong = {**env, "PUBLISHER_BOUNCE_MAILBOX": mailbox.url().replace(mailbox.password, "not-the-password")}
    refused = publisher_gateway(db_url, "bounces", "--check", env=wrong, check=False)
    assert refused.returncode == 1 and "not-the-password" not in refused.stderr
    assert refused.stderr.startswith("publisher-gateway: ") and "***" in refused.stderr
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


def test_settings_in_the_tests_are_what_the_site_reads(mailbox, smtp_server):
    values = bounce_settings(env_for(smtp_server, mailbox))
    assert values.mailbox.port == mailbox.port and dataclasses.replace(values, mailbox=None).address == BOUNCE_ADDRESS


@pytest.mark.asyncio
async def test_the_database_away_ends_the_read_and_leaves_every_message_for_the_next(
    db_url, smtp_server, mailbox, monkeypatch
):
    env = env_for(smtp_server, mailbox)
    sent = await send_release(db_url, env, smtp_server, 3)
    for address, item in sent.items():
        put(mailbox, "dsn-postfix-hard", item, address)
    tried: list[str] = []

    def database_away(digest, *args, **kwargs):
        tried.append(digest)
        raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("connection refused"))

    monkeypatch.setattr(bounce_records, "record_message", database_away)
    with pytest.raises(sqlalchemy.exc.OperationalError):
        read(env, db_url)
    assert len(tried) == 1 and len(mailbox.messages("INBOX")) == 3  # not three failures in a row
    monkeypatch.undo()
    assert read(env, db_url).bounces == 3
