"""The durable outbox against aiosmtpd, its clock injected (retries tested by moving it, not by waiting).
On SQLite; its claims (FOR UPDATE SKIP LOCKED: leases, stalls, two workers) on PostgreSQL too."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import aiosmtplib
import pytest
import sqlalchemy

from publisher import mailing_list, returns
from publisher.config.settings import current, from_environ
from publisher.mail import mailer, outbox
from publisher.storage import queue, subscribers, tables
from publisher.storage.subscribers import SignUp
from tests.databases import ON_BOTH_DATABASES
from tests.services.test_campaign import Clock
from tests.services.test_embedded_gateway import CONTACT, MESSAGE, SUBSCRIPTION, count_rows, embedded_for
from tests.support import publisher_gateway
from tests.unit.test_list_links import MAIL_ENV


@pytest.fixture
def mail(smtp_server):
    return from_environ(smtp_server.mail_env()).mail


def contact_request(n: int = 0) -> tables.ContactMessage:
    return MESSAGE.model_copy(update={"message": f"Message number {n}"})


def enqueue(db_url: str, mail, count: int = 1) -> list[int]:
    return [tables.store_message(contact_request(n), db_url, outbox.job_for(mail)) for n in range(count)]


def only(db_url: str) -> tables.Delivery:
    [delivery] = queue.list_deliveries((tables.PENDING, tables.SENT, tables.FAILED), db_url)
    return delivery


# --- Pure rules. ---


def test_retries_start_within_a_minute_and_end_after_three_days():
    start = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    give_up = start + outbox.RETRY_FOR
    assert outbox.next_attempt(1, start, give_up) == start + timedelta(seconds=15)
    delays = [(outbox.next_attempt(n, start, give_up) - start).total_seconds() for n in range(1, 10)]
    assert delays == [15, 60, 300, 900, 1800, 3600, 7200, 7200, 7200]
    # Attempts at those delays, each after the previous one: the last falls exactly on the deadline.
    moment, attempts = start, 0
    while moment is not None:
        attempts += 1
        last, moment = moment, outbox.next_attempt(attempts, moment, give_up)
    assert last == give_up and timedelta(days=3) == outbox.RETRY_FOR
    assert 30 < attempts < 50


# --- Storage: one transaction. ---


@pytest.mark.asyncio
async def test_the_gateway_queues_an_email_with_each_stored_message_only_when_smtp_is_set(db_url, smtp_server, mail):
    await embedded_for(db_url).send_email(CONTACT)  # no mail settings: stored only
    await embedded_for(db_url).subscribe(SUBSCRIPTION)  # pending, and no confirmation is owed
    assert count_rows(db_url, "contact_message") == 1 and count_rows(db_url, "outbox_delivery") == 0
    [pending] = subscribers.list_subscribers(db_url=db_url)
    assert (pending.status, pending.confirmation_sent_at) == ("pending", None)

    local = embedded_for(db_url, mail)
    await local.send_email(CONTACT)
    await local.subscribe(SUBSCRIPTION)  # a confirmation email; no notice before that
    delivery, confirmation = queue.list_deliveries(db_url=db_url)
    assert (delivery.kind, delivery.status, delivery.attempts) == ("contact", "pending", 0)
    assert delivery.source_id == tables.list_messages(db_url)[-1].id
    assert delivery.message_id.endswith("@animals.example>")
    assert (confirmation.kind, confirmation.source_id) == (
        "confirmation",
        subscribers.list_subscribers(db_url=db_url)[0].id,
    )
    assert smtp_server.received == []  # storing never waits for SMTP


def test_a_message_is_never_stored_without_its_delivery(db_url, mail):
    [first] = enqueue(db_url, mail)
    duplicate_id = tables.Job(message_id=only(db_url).message_id, retry_for=outbox.RETRY_FOR)
    with pytest.raises(sqlalchemy.exc.IntegrityError):
        tables.store_message(contact_request(), db_url, duplicate_id)  # the job's insert fails...
    assert [m.id for m in tables.list_messages(db_url)] == [first]  # ...so the message is not stored either


async def confirmed_subscriber(db_url: str, mail) -> tables.Subscriber:
    subscribers.subscribe(SignUp(**SUBSCRIPTION), outbox.job_for(mail), db_url)
    [subscriber] = subscribers.list_subscribers(db_url=db_url)
    assert [d.kind for d in queue.list_deliveries(db_url=db_url)] == ["confirmation"]  # no notice at sign-up
    await mailing_list.confirm(subscriber.link_key, None, mail, db_url)
    return subscriber


@pytest.mark.parametrize("asked", [True, False], ids=["notices-on", "notices-off"])
@pytest.mark.asyncio
async def test_the_publishers_new_subscriber_notice_comes_with_the_confirmation_and_only_when_asked(
    db_url, smtp_server, asked
):
    mail = from_environ(smtp_server.mail_env(PUBLISHER_NOTIFY_SUBSCRIBERS="1" if asked else "0")).mail
    subscriber = await confirmed_subscriber(db_url, mail)
    kinds = [(d.kind, d.source_id) for d in queue.list_deliveries(db_url=db_url)]
    expected = [("confirmation", subscriber.id), ("welcome", subscriber.id)]
    assert kinds == expected + ([("subscriber", subscriber.id)] if asked else [])


# --- The sender. ---


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_due_messages_are_sent_once_and_marked_sent(db_url, smtp_server):
    mail = from_environ(smtp_server.mail_env(PUBLISHER_NOTIFY_SUBSCRIBERS="1")).mail
    enqueue(db_url, mail, 2)
    subscribers.subscribe(SignUp(**SUBSCRIPTION), outbox.job_for(mail), db_url)
    sender = outbox.Sender(mail, db_url)
    outcomes = await sender.send_due()
    assert [o.status for o in outcomes] == ["sent"] * 3
    received = smtp_server.wait_for(3, timeout=10)
    assert [r.message["Subject"] for r in received] == [
        "Contact Form Submission from Jo Reader",
        "Contact Form Submission from Jo Reader",
        "Please confirm your subscription to Animals We Confuse",
    ]
    assert [r.rcpt_tos for r in received] == [["books@animals.example"]] * 2 + [["jo@example.com"]]
    assert [r.message.get_content().splitlines()[-1] for r in received[:2]] == ["Message number 0", "Message number 1"]
    assert await sender.send_due() == []
    assert queue.list_deliveries(db_url=db_url) == []  # nothing pending or failed
    assert len(smtp_server.received) == 3


@pytest.mark.asyncio
async def test_a_4xx_or_a_server_down_is_retried_after_15_seconds_and_delivered_once_even_by_a_new_process(
    db_url, smtp_server, mail
):
    enqueue(db_url, mail, 3)
    clock = Clock()
    smtp_server.replies.append("451 4.7.1 Greylisted, try again later")
    outcome = await outbox.Sender(mail, db_url, clock=clock).send_next()
    delivery = queue.list_deliveries(db_url=db_url)[0]
    assert (outcome.status, delivery.status, delivery.attempts) == ("pending", "pending", 1)
    assert delivery.last_error == "451 4.7.1 Greylisted, try again later"
    assert delivery.next_attempt_at == clock.now + timedelta(seconds=15)
    smtp_server.stop()
    down = await outbox.Sender(mail, db_url, clock=clock).send_due()
    assert [o.status for o in down] == ["pending"] * 2 and "connect" in down[0].detail.lower()
    listed = publisher_gateway(db_url, "outbox").stdout
    assert "pending, next attempt" in listed and "3 pending, 0 failed." in listed
    smtp_server.start()
    clock.advance(seconds=14)
    restarted = outbox.Sender(mail, db_url, clock=clock)
    assert await restarted.send_due() == []  # not yet due
    clock.advance(seconds=1)
    assert [o.status for o in await restarted.send_due()] == ["sent"] * 3
    clock.advance(days=1)
    assert await restarted.send_due() == []
    assert len(smtp_server.wait_for(3, timeout=10)) == 3
    assert {d.status for d in queue.list_deliveries((tables.PENDING, tables.SENT, tables.FAILED), db_url)} == {"sent"}


@pytest.mark.asyncio
async def test_a_5xx_stops_retries_is_reported_and_the_operator_can_send_it_again(db_url, smtp_server, caplog, mail):
    enqueue(db_url, mail)
    clock = Clock()
    sender = outbox.Sender(mail, db_url, clock=clock)
    smtp_server.replies.append("550 5.1.1 <books@animals.example>: Recipient address rejected")
    with caplog.at_level(logging.ERROR, logger="publisher.mail.outbox"):
        [outcome] = await sender.send_due()
    assert outcome.status == "failed"
    assert "will not be retried: 550 5.1.1" in caplog.text and "publisher-gateway outbox --retry" in caplog.text
    clock.advance(days=10)
    assert await sender.send_due() == []
    assert smtp_server.received == []

    listed = publisher_gateway(db_url, "outbox")
    delivery = only(db_url)
    assert listed.stdout.splitlines() == [
        f"#{delivery.id}  FAILED  contact message #{delivery.source_id}  "
        f"queued {delivery.created_at.isoformat()}  1 attempt",
        f"    Message-ID: {delivery.message_id}",
        "    last error: 550 5.1.1 <books@animals.example>: Recipient address rejected",
        "0 pending, 1 failed. Send the failed ones again with `publisher-gateway outbox --retry`.",
    ]
    without_smtp = publisher_gateway(db_url, "outbox", "--retry", check=False)
    assert (without_smtp.returncode, without_smtp.stderr) == (
        1,
        "publisher-gateway: PUBLISHER_SMTP_URL is not set, so nothing can send the outbox.\n",
    )
    retried = publisher_gateway(db_url, "outbox", "--retry", env=smtp_server.mail_env())
    assert retried.stdout == f"#{delivery.id}  sent\n"
    [received] = smtp_server.wait_for(1, timeout=10)
    assert received.message["Message-ID"] == delivery.message_id
    assert publisher_gateway(db_url, "outbox").stdout == "Outbox: nothing pending or failed.\n"


@pytest.mark.asyncio
async def test_smtp_down_for_three_days_gives_up_and_reports(db_url, smtp_server, caplog, mail):
    enqueue(db_url, mail)
    smtp_server.stop()
    clock = Clock()
    sender = outbox.Sender(mail, db_url, clock=clock)
    attempts = 0
    with caplog.at_level(logging.WARNING, logger="publisher.mail.outbox"):
        while only(db_url).status == "pending":
            clock.now = max(clock.now, only(db_url).next_attempt_at)
            await sender.send_due()
            attempts += 1
    delivery = only(db_url)
    assert delivery.status == "failed" and delivery.attempts == attempts
    assert delivery.last_error.startswith(f"gave up after {attempts} attempts over 3 days: ")
    assert clock.now == delivery.created_at + timedelta(days=3)
    listed = publisher_gateway(db_url, "outbox").stdout
    assert f"{attempts} attempts" in listed and "gave up after" in listed


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_two_workers_sending_at_once_send_each_message_once(db_url, smtp_server, mail):
    enqueue(db_url, mail, 20)
    workers = [outbox.Sender(mail, db_url, worker=name) for name in ("worker-a", "worker-b")]
    results = await asyncio.gather(*(worker.send_due() for worker in workers))
    assert sum(len(r) for r in results) == 20
    received = smtp_server.wait_for(20, timeout=30)
    assert len(received) == 20 and len(set(smtp_server.message_ids())) == 20
    assert queue.list_deliveries((tables.PENDING, tables.FAILED), db_url) == []


def test_on_postgresql_a_claim_skips_a_job_another_worker_has_locked(postgres, postgres_template, mail):
    name = postgres.create_database(template=postgres_template)
    postgres.execute(f"ALTER DATABASE {name} SET lock_timeout = '5s'")  # waiting would fail, not hang
    url = postgres.url(name)
    first, second = enqueue(url, mail, 2)
    engine = sqlalchemy.create_engine(url)
    with engine.connect() as other_worker:  # mid-claim: holds the first job's row lock
        other_worker.execute(sqlalchemy.text("SELECT id FROM outbox_delivery ORDER BY id LIMIT 1 FOR UPDATE"))
        claimed = queue.claim_due("worker-b", tables.utc_now(), outbox.LEASE, url)
        assert claimed is not None and claimed.source.id == second  # skipped, not waited for
        other_worker.rollback()
    engine.dispose()
    assert queue.claim_due("worker-b", tables.utc_now(), outbox.LEASE, url).source.id == first


@pytest.mark.asyncio
async def test_the_backends_sender_sends_a_new_message_at_once_not_at_the_next_poll(db_url, smtp_server, monkeypatch):
    for name, value in smtp_server.mail_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    sender = asyncio.create_task(outbox.run_in_backend(db_url))
    try:
        await embedded_for(db_url, current().mail).send_email(CONTACT)
        # Woken by the store: well inside the 5 s poll interval.
        await asyncio.to_thread(smtp_server.wait_for, 1, outbox.POLL_INTERVAL_S - 2)
    finally:
        sender.cancel()
        stopped, _ = await asyncio.wait([sender], timeout=5)  # as the backend's shutdown does
    assert sender in stopped and sender.cancelled()
    assert outbox.running_sender.peek() is None


@pytest.mark.asyncio
async def test_no_sender_runs_without_smtp_or_with_the_cloud_gateway(monkeypatch):
    monkeypatch.delenv("PUBLISHER_SMTP_URL", raising=False)
    await asyncio.wait_for(outbox.run_in_backend(), 1)  # returns at once
    for name, value in {**MAIL_ENV, "PUBLISHER_GATEWAY_URL": "https://gateway.example.com"}.items():
        monkeypatch.setenv(name, value)
    await asyncio.wait_for(outbox.run_in_backend(), 1)


@pytest.mark.asyncio
async def test_a_list_email_for_an_address_that_left_before_its_turn_is_skipped(db_url, smtp_server, caplog, mail):
    subscriber = await confirmed_subscriber(db_url, mail)
    subscribers.unsubscribe(subscriber.link_key, subscribers.BY_ONE_CLICK, db_url)
    with caplog.at_level(logging.INFO, logger="publisher.mail.outbox"):
        outcomes = await outbox.Sender(mail, db_url).send_due()
    assert [(o.status, o.detail) for o in outcomes] == [
        ("skipped", "the address is unsubscribed now, no longer pending"),
        ("skipped", "the address is unsubscribed now, no longer confirmed"),
    ]
    assert smtp_server.received == []
    assert queue.list_deliveries(db_url=db_url) == []  # nothing left pending or failed
    assert "not sent: the address is unsubscribed now" in caplog.text


# --- One bad email never stops the sender. ---


@pytest.mark.asyncio
async def test_an_error_building_inside_the_smtp_client_or_a_stray_break_fails_that_job_alone_and_the_next_is_sent(
    db_url, smtp_server, monkeypatch, caplog, mail
):
    enqueue(db_url, mail, 4)
    real_sendmail, real_contact_email = aiosmtplib.SMTP.sendmail, mailer.contact_email
    real_header = mailer.verbatim_header
    built, calls = [], []

    def contact_email_that_breaks(*args, **kwargs):
        built.append(1)
        if len(built) == 1:
            raise KeyError("a template placeholder")
        return real_contact_email(*args, **kwargs)

    def subject_written_broken(name, value):
        # What Python 3.11.7's email package made of an encoded word in a name (issue 40): header lines.
        written = real_header(name, value)
        return b"Bcc: victim@example.com\r\n" + written if name == "Subject" and len(built) == 3 else written

    async def sendmail_that_breaks_once(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            "\u00fc".encode("ascii")  # raises UnicodeEncodeError, as aiosmtplib did for an international address
        return await real_sendmail(self, *args, **kwargs)

    monkeypatch.setattr(mailer, "contact_email", contact_email_that_breaks)
    monkeypatch.setattr(aiosmtplib.SMTP, "sendmail", sendmail_that_breaks_once)
    monkeypatch.setattr(mailer, "verbatim_header", subject_written_broken)
    outcomes = await outbox.Sender(mail, db_url).send_due()
    assert [o.status for o in outcomes] == ["failed", "failed", "failed", "sent"]
    [received] = smtp_server.wait_for(1, timeout=10)
    assert b"Bcc" not in received.data
    failed = queue.list_deliveries((tables.FAILED,), db_url)
    assert [f.last_error.partition(" codec")[0] for f in failed] == [
        "could not be built or sent: KeyError: 'a template placeholder'",
        "could not be built or sent: UnicodeEncodeError: 'ascii'",
        "not sent, its headers are unsafe: it holds headers the site did not write: Bcc",
    ]
    assert all(f.lease_until is None for f in failed)  # not left leased for the next worker to trip over
    unsafe = f"Outbox: delivery #{failed[2].id} (contact) failed: not sent, its headers are unsafe"
    assert "Outbox: delivery #" in caplog.text and unsafe in caplog.text
    assert await outbox.Sender(mail, db_url).send_due() == []  # never tried again


@pytest.mark.asyncio
async def test_a_unicode_domain_stored_is_sent_in_ascii_and_an_smtputf8_address_fails_alone(db_url, smtp_server, mail):
    for n, stored in enumerate(("jo@bücher.example", "jö@example.com")):
        typed = f"reader{n}@example.com"
        subscribers.subscribe(SignUp(**{**SUBSCRIPTION, "email": typed}), outbox.job_for(mail), db_url)
        with tables.engine(db_url).begin() as connection:
            row = tables.Subscriber.email == typed
            connection.execute(sqlalchemy.update(tables.Subscriber).where(row).values(email=stored))
    outcomes = await outbox.Sender(mail, db_url).send_due()
    assert [o.status for o in outcomes] == ["sent", "failed"]
    assert "needs SMTPUTF8" in outcomes[1].detail
    [received] = smtp_server.wait_for(1, timeout=10)
    assert received.rcpt_tos == ["jo@xn--bcher-kva.example"]
    assert b"\r\nTo: jo@xn--bcher-kva.example\r\n" in received.data


@pytest.mark.asyncio
async def test_the_sender_loop_survives_any_error_and_backs_off():
    rounds: list[int] = []
    pauses: list[float] = []
    done = asyncio.Event()

    async def send_due():
        rounds.append(1)
        if len(rounds) <= 3:
            raise RuntimeError("a bug in one round")
        done.set()

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    wake = asyncio.Event()
    loop = asyncio.create_task(returns.keep_running(send_due, "Test", outbox.POLL_INTERVAL_S, wake, sleep=sleep))
    async with asyncio.timeout(30):
        while not done.is_set():
            wake.set()
            await asyncio.sleep(0.01)
    assert not loop.done()  # still running
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
    assert pauses == [5.0, 10.0, 20.0]
    assert [returns.trouble_delay(n) for n in (1, 2, 7, 8, 20)] == [5.0, 10.0, 300.0, 300.0, 300.0]


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_claims_with_an_outcome_never_count_a_dead_workers_job_is_taken_over_and_one_that_keeps_dying_is_given_up(
    db_url, smtp_server, mail
):
    enqueue(db_url, mail)
    clock = Clock()
    for _ in range(4):  # four retries, each with an outcome recorded
        smtp_server.replies.append("451 4.3.0 busy")
        [outcome] = await outbox.Sender(mail, db_url, clock=clock).send_due()
        assert outcome.status == "pending"
        clock.advance(hours=3)
    [outcome] = await outbox.Sender(mail, db_url, clock=clock).send_due()
    assert outcome.status == "sent"
    enqueue(db_url, mail)
    for worker in ("a", "b", "c"):  # each claims it, then dies before any outcome: the next takes it over
        claimed = queue.claim_due(worker, clock(), outbox.LEASE, db_url)
        assert claimed is not None  # and until its lease ends, nobody else can:
        assert queue.claim_due("d", clock() + outbox.LEASE - timedelta(seconds=1), outbox.LEASE, db_url) is None
        clock.advance(seconds=outbox.LEASE.total_seconds() + 1)
    [outcome] = await outbox.Sender(mail, db_url, clock=clock, worker="d").send_due()
    assert outcome.status == "failed"
    assert outcome.detail == (
        "given up: claimed 3 times without an outcome (its sender stopped each time while sending it)"
    )
    assert len(smtp_server.received) == 1
    assert queue.mark_retry(claimed.id, "c", clock(), "late", db_url) is False  # a dead worker's late report


# --- The site-wide ceiling on confirmation emails. ---


@pytest.mark.asyncio
async def test_a_burst_of_sign_ups_past_the_ceiling_waits_and_all_go_out_later(db_url, smtp_server):
    mail = from_environ(smtp_server.mail_env(PUBLISHER_CONFIRMATIONS_PER_HOUR="3")).mail
    enqueue(db_url, mail)  # a contact message does not wait behind them
    clock = Clock()
    for n in range(5):
        request = SignUp(**{**SUBSCRIPTION, "email": f"reader{n}@example.com"})
        subscribers.subscribe(request, outbox.job_for(mail), db_url, now=clock())
    sender = outbox.Sender(mail, db_url, clock=clock)
    sent_now = await sender.send_due()
    assert sorted(o.status for o in sent_now) == ["sent"] * 4
    assert len(smtp_server.wait_for(4, timeout=10)) == 4
    waiting = queue.list_deliveries((tables.PENDING,), db_url)
    assert [d.kind for d in waiting] == ["confirmation", "confirmation"]
    clock.advance(minutes=30)
    assert await sender.send_due() == []  # still within the hour
    clock.advance(minutes=31)
    assert [o.status for o in await sender.send_due()] == ["sent", "sent"]
    received = smtp_server.wait_for(6, timeout=10)
    assert sorted(r.rcpt_tos[0] for r in received if r.rcpt_tos != ["books@animals.example"]) == [
        f"reader{n}@example.com" for n in range(5)
    ]


@pytest.mark.asyncio
async def test_a_waiting_confirmation_replaced_by_a_newer_one_or_past_its_links_life_is_not_sent(db_url, smtp_server):
    mail = from_environ(smtp_server.mail_env(PUBLISHER_CONFIRMATIONS_PER_HOUR="1")).mail
    clock = Clock()
    asking = [SignUp(**{**SUBSCRIPTION, "email": f"reader{n}@example.com"}) for n in range(3)]
    for sign_up in asking:
        subscribers.subscribe(sign_up, outbox.job_for(mail), db_url, now=clock())
    sender = outbox.Sender(mail, db_url, clock=clock)
    assert [o.status for o in await sender.send_due()] == ["sent"]  # the others wait
    clock.advance(hours=25)
    subscribers.subscribe(asking[1], outbox.job_for(mail), db_url, now=clock())  # asks again: a newer confirmation
    outcomes = await sender.send_due()
    assert [(o.status, o.detail) for o in outcomes] == [
        ("skipped", "a newer confirmation for the address replaced it"),
        ("sent", None),
    ]
    clock.advance(days=8)
    [outcome] = await sender.send_due()
    assert (outcome.status, outcome.detail) == (
        "skipped",
        "its link expired while it waited (the site's hourly ceiling on confirmations)",
    )
    received = smtp_server.wait_for(2, timeout=10)
    assert [r.rcpt_tos for r in received] == [["reader0@example.com"], ["reader2@example.com"]]


@pytest.mark.asyncio
async def test_a_waiting_confirmation_from_before_the_reader_left_and_came_back_is_not_sent(db_url, smtp_server, mail):
    """Its link could no longer confirm: only the latest confirmation counts (rules/list_rules.py)."""
    clock = Clock()
    subscribers.subscribe(SignUp(**SUBSCRIPTION), outbox.job_for(mail), db_url, now=clock())
    [subscriber] = subscribers.list_subscribers(db_url=db_url)
    clock.advance(minutes=5)
    subscribers.unsubscribe(subscriber.link_key, subscribers.BY_UNSUBSCRIBE_PAGE, db_url, now=clock())
    clock.advance(minutes=5)
    # Back within the day: pending again, no second confirmation; the first still waits its turn.
    assert subscribers.subscribe(SignUp(**SUBSCRIPTION), outbox.job_for(mail), db_url, now=clock()) == "rejoined"
    [outcome] = await outbox.Sender(mail, db_url, clock=clock).send_due()
    assert (outcome.status, outcome.detail) == ("skipped", "a newer confirmation for the address replaced it")
    assert smtp_server.received == []
