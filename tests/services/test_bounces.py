"""Bounces and complaints at sending time and from the webhook, and what each does to a reader, a campaign and
the import; the pause past the threshold on PostgreSQL too."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import sqlalchemy

from publisher.content import books
from publisher.limits import submits
from publisher.limits.submits import Limiter
from publisher.mail import announce, outbox
from publisher.rules import bounces
from publisher.rules.list_rules import ListStatus
from publisher.server import middleware
from publisher.storage import bounce_records, campaigns, subscribers, tables
from publisher.storage.bounce_records import Report
from publisher.storage.subscribers import SignUp
from tests.databases import ON_BOTH_DATABASES
from tests.services.test_campaign import Clock, jobs, mail_for, readers, recipients, sender_for, start_campaign
from tests.services.test_new_release_list import consent_record, row
from tests.smtp import LIST_SECRET, POSTAL_ADDRESS
from tests.support import publisher_gateway
from tests.unit.test_bounce_hook import SECRET, SECRET_VAR

BOUNCE_ADDRESS = "bounces@animals.example"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def status_of(db_url: str, email: str) -> str:
    return row(db_url, email).status


def events(db_url: str, email: str) -> list[tuple[str, str, str | None]]:
    return [(event.event, event.how, event.detail) for event in consent_record(email, db_url)]


def record(report: Report, db_url: str, now: datetime | None = None) -> bounce_records.Recorded:
    [recorded] = bounce_records.record_all([report], db_url, now=now)
    return recorded


def sign_up(email: str) -> SignUp:
    return SignUp(email=email, name="Jo Reader")


@pytest.mark.asyncio
async def test_550_5_1_1_bounces_its_reader_a_4xx_is_retried_and_the_next_campaign_reaches_only_the_confirmed(
    db_url, smtp_server
):
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="0", PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS)
    readers(db_url, 5)
    smtp_server.refused_recipients.add("reader2@readers.example")
    smtp_server.deferred_recipients.add("reader3@readers.example")
    first = start_campaign(db_url, mail)
    clock = Clock()
    await sender_for(mail, db_url, clock).send_due()
    assert sorted(recipients(smtp_server)) == [f"reader{n}@readers.example" for n in (0, 1, 4)]
    assert campaigns.campaign_counts(first.id, db_url) == {"pending": 1, "sent": 3, "failed": 1, "skipped": 0}
    assert campaigns.get_campaign(first.id, db_url).status == tables.SENDING
    smtp_server.deferred_recipients.clear()
    clock.now += timedelta(seconds=16)  # the outbox's first retry delay
    await sender_for(mail, db_url, clock).send_due()
    assert recipients(smtp_server)[-1] == "reader3@readers.example"
    assert campaigns.get_campaign(first.id, db_url).status == tables.FINISHED

    assert status_of(db_url, "reader2@readers.example") == ListStatus.BOUNCED
    [(event, how, detail)] = [item for item in events(db_url, "reader2@readers.example") if item[0] == "bounced"]
    assert how == "hard bounce" and "550 5.1.1 No such user here" in detail
    # Every email went out with its own VERP Return-Path, naming its job, signed with the list secret.
    deliveries = {row.id: row for row in jobs(db_url, tables.SENT)}
    for received in smtp_server.received:
        job = bounces.read_verp((LIST_SECRET,), received.mail_from, BOUNCE_ADDRESS)
        assert job in deliveries and received.mail_from.startswith("bounces+")
        assert received.message["From"].addresses[0].addr_spec == "site@animals.example"  # From is unchanged
    assert bounce_records.campaign_returns(first.id, db_url) == bounce_records.CampaignReturns(5, 1, 0, 0)

    second = start_campaign(db_url, mail, slug=books.BOOKS[1].slug)
    assert second.recipients == 4
    smtp_server.received.clear()
    await sender_for(mail, db_url, Clock()).send_due()
    assert sorted(recipients(smtp_server)) == [f"reader{n}@readers.example" for n in (0, 1, 3, 4)]


@pytest.mark.asyncio
async def test_a_server_refusing_everyone_pauses_the_campaign_and_bounces_nobody(db_url, smtp_server):
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="0")
    readers(db_url, 12)
    smtp_server.refused_recipients.update(f"reader{n}@readers.example" for n in range(12))
    item = start_campaign(db_url, mail)
    await sender_for(mail, db_url, Clock()).send_due()
    assert campaigns.get_campaign(item.id, db_url).status == tables.PAUSED
    assert {row.status for row in subscribers.list_subscribers(db_url=db_url)} == {ListStatus.CONFIRMED}
    assert bounce_records.list_bounces(db_url=db_url) == []


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_a_campaign_pauses_itself_past_the_bounce_threshold_and_resuming_judges_what_follows(
    db_url, smtp_server, caplog
):
    caplog.set_level(logging.INFO)
    mail = mail_for(smtp_server, PUBLISHER_SEND_RATE="0")
    readers(db_url, 130)
    # One in twelve refused (never in a row): 9 of the first 104 emails, 8.7 %, past 5 % once 100 went out.
    refused = [f"reader{n}@readers.example" for n in range(5, 130, 12)]
    smtp_server.refused_recipients.update(refused)
    item = start_campaign(db_url, mail)
    await sender_for(mail, db_url, Clock()).send_due()

    state = campaigns.get_campaign(item.id, db_url)
    assert state.status == tables.PAUSED
    assert state.paused_reason.startswith("hard bounces at ") and "above 5 %" in state.paused_reason
    counts = campaigns.campaign_counts(item.id, db_url)
    assert 100 <= counts[tables.SENT] + counts[tables.FAILED] < 130 and counts[tables.PENDING] > 0
    [line] = [record.getMessage() for record in caplog.records if " paused: hard bounces" in record.getMessage()]
    assert f"`publisher-gateway announce {item.book_slug}` resumes it" in line
    returned = bounce_records.campaign_returns(item.id, db_url)
    assert returned.hard == len([r for r in refused if status_of(db_url, r) == ListStatus.BOUNCED]) >= 9

    # Resumed on purpose: the bounces already seen do not pause it again; the rest go out.
    assert campaigns.set_campaign_status(item.id, tables.SENDING, db_url=db_url)
    await sender_for(mail, db_url, Clock()).send_due()
    assert campaigns.get_campaign(item.id, db_url).status == tables.FINISHED


@pytest.mark.asyncio
async def test_a_confirmation_refused_for_good_bounces_the_address_and_a_new_sign_up_starts_afresh(db_url, smtp_server):
    mail = mail_for(smtp_server, PUBLISHER_BOUNCE_ADDRESS=BOUNCE_ADDRESS)
    smtp_server.refused_recipients.add("gone@readers.example")
    assert subscribers.subscribe(sign_up("gone@readers.example"), outbox.job_for(mail), db_url, now=T0) == "added"
    clock = Clock(T0)
    [outcome] = await outbox.Sender(mail, db_url, clock=clock).send_due()
    assert outcome.status == tables.FAILED
    assert status_of(db_url, "gone@readers.example") == ListStatus.BOUNCED
    assert smtp_server.received == []

    # The reader proves the address works again: a fresh sign-up, a fresh confirmation.
    smtp_server.refused_recipients.clear()
    later = T0 + timedelta(days=2)
    assert subscribers.subscribe(sign_up("gone@readers.example"), outbox.job_for(mail), db_url, now=later) == "rejoined"
    assert status_of(db_url, "gone@readers.example") == ListStatus.PENDING
    clock.now = later
    [outcome] = await outbox.Sender(mail, db_url, clock=clock).send_due()
    assert outcome.status == tables.SENT
    [received] = smtp_server.received
    assert received.mail_from.startswith("bounces+") and received.rcpt_tos == ["gone@readers.example"]


@pytest.mark.asyncio
async def test_a_4xx_is_retried_and_only_the_retries_giving_up_count_one_soft_bounce(db_url, smtp_server):
    mail = mail_for(smtp_server)
    smtp_server.deferred_recipients.add("full@readers.example")
    subscribers.subscribe(sign_up("full@readers.example"), outbox.job_for(mail), db_url, now=T0)
    clock = Clock(T0)
    sender = outbox.Sender(mail, db_url, clock=clock)
    [outcome] = await sender.send_due()
    assert outcome.status == tables.PENDING  # a retry, no bounce yet
    assert bounce_records.list_bounces(db_url=db_url) == []
    clock.now = T0 + outbox.RETRY_FOR + timedelta(minutes=1)
    [outcome] = await sender.send_due()
    assert outcome.status == tables.FAILED
    [line] = bounce_records.list_bounces(db_url=db_url)
    assert (line.email, line.kind, line.source) == ("full@readers.example", bounces.SOFT, tables.AT_SENDING)
    assert "451 4.2.1" in line.reason
    assert status_of(db_url, "full@readers.example") == ListStatus.PENDING  # one soft bounce is not three


def _mark_sent(db_url: str, ids: list[int], at: datetime) -> None:
    with tables.engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.update(tables.Delivery)
            .where(tables.Delivery.id.in_(ids))
            .values(status=tables.SENT, sent_at=at, lease_until=None, claimed_by=None)
        )


def _release_to(db_url: str, email: str, slug: str, at: datetime) -> int:
    item = campaigns.create_campaign(slug, "s", lambda _r: f"<{slug}.{_r}@m.example>", at, outbox.RETRY_FOR, db_url)
    reader_id = row(db_url, email).id
    [job] = [job for job in jobs(db_url, tables.PENDING) if job.campaign_id == item.id and job.source_id == reader_id]
    _mark_sent(db_url, [job.id], at)
    return job.id


def _soft(db_url: str, delivery_id: int, at: datetime) -> bounce_records.Recorded:
    return record(Report(bounces.SOFT, "452 4.2.2 mailbox full", tables.FROM_MAILBOX, delivery_id), db_url, now=at)


def test_three_soft_bounces_from_three_emails_bounce_a_reader_and_a_delivered_email_between_resets(db_url):
    readers(db_url, 1)
    T0 = tables.utc_now() + timedelta(minutes=1)  # noqa: N806 - after the import (its sign-up)
    reader = "reader0@readers.example"
    day = timedelta(days=10)
    one = _release_to(db_url, reader, "book-1", T0)
    assert _soft(db_url, one, T0 + timedelta(hours=1)).outcome == bounce_records.COUNTED
    assert _soft(db_url, one, T0 + timedelta(hours=5)).outcome == bounce_records.ALREADY_KNOWN  # the same email
    two = _release_to(db_url, reader, "book-2", T0 + day)
    assert _soft(db_url, two, T0 + day).outcome == bounce_records.COUNTED
    three = _release_to(db_url, reader, "book-3", T0 + 2 * day)  # delivered: nothing comes back for days
    four = _release_to(db_url, reader, "book-4", T0 + 3 * day)
    # Three soft bounces, but the third email was delivered between them: the count starts again.
    assert _soft(db_url, four, T0 + 3 * day).outcome == bounce_records.COUNTED
    assert status_of(db_url, reader) == ListStatus.CONFIRMED
    # The third email's bounce comes late: it was not delivered after all, so four, three, two are in a row.
    assert _soft(db_url, three, T0 + 3 * day + timedelta(hours=1)).outcome == bounce_records.MADE_BOUNCED
    assert status_of(db_url, reader) == ListStatus.BOUNCED
    [(event, how, detail)] = [item for item in events(db_url, reader) if item[0] == "bounced"]
    assert how == "soft bounces" and detail.startswith("3 soft bounces in a row, the last: 452 4.2.2")


def test_the_import_never_brings_back_a_bounced_or_complained_address(db_url):
    readers(db_url, 2)
    record(Report(bounces.HARD, "550 5.1.1", tables.FROM_WEBHOOK, email="reader0@readers.example"), db_url)
    record(Report(bounces.COMPLAINT, "spam", tables.FROM_WEBHOOK, email="reader1@readers.example"), db_url)
    assert readers(db_url, 2) == "0 added, 0 updated, 0 unchanged, 1 kept unsubscribed, 1 kept bounced."
    assert status_of(db_url, "reader0@readers.example") == ListStatus.BOUNCED
    assert status_of(db_url, "reader1@readers.example") == ListStatus.UNSUBSCRIBED


def test_a_late_bounce_of_an_email_from_before_a_new_sign_up_changes_nothing(db_url, smtp_server):
    readers(db_url, 1)
    T0 = tables.utc_now() + timedelta(minutes=1)  # noqa: N806 - after the import (its sign-up)
    reader = "reader0@readers.example"
    old = _release_to(db_url, reader, "book-1", T0)
    record(Report(bounces.HARD, "550", tables.FROM_MAILBOX, old), db_url, now=T0 + timedelta(hours=1))
    assert status_of(db_url, reader) == ListStatus.BOUNCED
    mail = mail_for(smtp_server)
    subscribers.subscribe(sign_up(reader), outbox.job_for(mail), db_url, now=T0 + timedelta(days=1))
    again = record(
        Report(bounces.COMPLAINT, "late report", tables.FROM_MAILBOX, old), db_url, now=T0 + timedelta(days=2)
    )
    assert again.outcome == bounce_records.COUNTED
    assert status_of(db_url, reader) == ListStatus.PENDING


def test_the_commands_show_each_campaigns_rates_the_bounced_readers_and_the_latest_bounces(db_url):
    readers(db_url, 4)
    sent_at = tables.utc_now() + timedelta(minutes=1)  # after the import (its sign-up)
    item = campaigns.create_campaign("a-book", "s", lambda _r: f"<{_r}@m.example>", sent_at, outbox.RETRY_FOR, db_url)
    _mark_sent(db_url, [job.id for job in jobs(db_url, tables.PENDING)], sent_at)
    record(Report(bounces.HARD, "550 5.1.1 no such user", tables.FROM_WEBHOOK, email="reader1@readers.example"), db_url)
    record(Report(bounces.COMPLAINT, "abuse", tables.FROM_MAILBOX, email="reader2@readers.example"), db_url)
    out = publisher_gateway(db_url, "campaigns").stdout
    assert f"#{item.id}  a-book  SENDING" in out
    assert "    1 hard bounces, 0 soft bounces, 1 complaints (bounce rate 25.00 %, complaint rate 25.00 %)" in out
    listed = publisher_gateway(db_url, "subscribers", "--status", "bounced").stdout.splitlines()
    assert len(listed) == 2 and listed[1].startswith("reader1@readers.example,") and ",bounced," in listed[1]
    shown = publisher_gateway(db_url, "bounces", "--since", "1d").stdout
    assert "reader1@readers.example  hard  (webhook)" in shown and "550 5.1.1 no such user" in shown
    assert "2 bounces and complaints since " in shown and ": 1 hard, 0 soft, 1 complaints." in shown
    future = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert publisher_gateway(db_url, "bounces", "--since", future).stdout.startswith("0 bounces and complaints since")
    wrong = publisher_gateway(db_url, "bounces", "--since", "last week", check=False)
    assert wrong.returncode == 2 and "is not a date (2026-11-01)" in wrong.stderr


def test_announce_shows_why_a_campaign_paused_and_asks_before_resuming_it(db_url, smtp_server, monkeypatch):
    env = smtp_server.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, PUBLISHER_SEND_RATE="0")
    mail = mail_for(smtp_server)
    readers(db_url, 3)
    item = start_campaign(db_url, mail)
    why = "hard bounces at 8.0 % of 120 emails sent, above 5 %"
    assert campaigns.set_campaign_status(item.id, tables.PAUSED, why, db_url=db_url)

    nobody = publisher_gateway(db_url, "announce", item.book_slug, env=env, check=False)
    assert nobody.returncode == 2
    assert f"Campaign #{item.id} is PAUSED: {why}\n" in nobody.stderr
    assert "0 hard bounces, 0 soft bounces, 0 complaints" in nobody.stderr
    assert "not a terminal, so nobody can answer: add --yes to resume it." in nobody.stderr

    # Asked, the publisher says no: it stays paused.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tables, "engine", lambda _url=None, real=tables.engine: real(db_url))
    monkeypatch.setattr(tables, "open_session", lambda _url=None, real=tables.open_session: real(db_url))
    out = io.StringIO()
    questions: list[str] = []
    answer = announce.announce(
        item.book_slug, yes=False, test_to=None, out=out, ask=lambda q: questions.append(q) or "n", interactive=True
    )
    assert answer == 1 and questions == ["Resume it? [y/N] "]
    assert "It stays paused. Nothing was sent." in out.getvalue()
    assert campaigns.get_campaign(item.id, db_url).status == tables.PAUSED and smtp_server.received == []

    resumed = publisher_gateway(db_url, "announce", item.book_slug, "--yes", env=env)
    assert f"Campaign #{item.id} resumed (it was paused: {why})." in resumed.stderr
    assert len(smtp_server.received) == 3 and campaigns.get_campaign(item.id, db_url).status == tables.FINISHED


def test_forget_erases_the_bounces_about_an_address_and_its_emails_to_the_bounce_address(db_url):
    readers(db_url, 2)
    for n in (0, 1):
        record(Report(bounces.HARD, "550 5.1.1", tables.FROM_WEBHOOK, email=f"reader{n}@readers.example"), db_url)
    place = bounce_records.MailboxPlace("INBOX", 1)
    for uid, (subject, sender) in enumerate(
        [("Out of the list?", "Reader0@Readers.example"), ("Hello", "someone@example.net")], start=1
    ):
        fetched = bounce_records.Fetched(f"d{uid}", 100, subject, sender)
        bounce_records.record_message(place, uid, bounce_records.UNCLASSIFIED, fetched=fetched, db_url=db_url)
    forgotten = publisher_gateway(db_url, "forget", "reader0@readers.example")
    assert forgotten.stderr == (
        "reader0@readers.example: Removed its place on the list (bounced) with 2 consent events, "
        "0 contact messages, 0 outbox emails, 2 records of mail that came back.\n"
    )
    assert [line.email for line in bounce_records.list_bounces(db_url=db_url)] == ["reader1@readers.example"]
    assert [message.sender for message in bounce_records.left_messages(db_url=db_url)[0]] == ["someone@example.net"]


@pytest.mark.asyncio
async def test_the_webhooks_hard_bounce_bounces_a_complaint_unsubscribes_and_a_soft_or_a_strangers_changes_nobody(
    db_url, monkeypatch
):
    monkeypatch.setenv(SECRET_VAR, SECRET)
    submits.shared_limiter.set(Limiter())
    readers(db_url, 3)
    jo, bo, al = (f"reader{n}@readers.example" for n in range(3))
    before = events(db_url, al)
    items = [
        {"email": jo.upper(), "type": "hard", "reason": "550 5.1.1 mailbox unavailable"},
        {"email": bo, "type": "complaint", "feedback_id": "abc"},
        {"email": al, "type": "soft", "reason": "line one\r\nline two\x00" + "x" * 1000},
        {"email": "nobody@example.com", "type": "hard"},
    ]
    transport = httpx.ASGITransport(app=middleware.route_table(lambda *_: None, db_url=db_url))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="https://books.example.com") as client:
            answer = await client.post("/hooks/bounce/", json=items, headers={"Authorization": f"Bearer {SECRET}"})
    finally:
        submits.shared_limiter.set(None)
    assert (answer.status_code, answer.json()) == (200, {"accepted": 4})
    statuses = [status_of(db_url, email) for email in (jo, bo, al)]
    assert statuses == [ListStatus.BOUNCED, ListStatus.UNSUBSCRIBED, ListStatus.CONFIRMED]  # one soft is not enough
    assert events(db_url, jo)[-1] == ("bounced", "hard bounce", "550 5.1.1 mailbox unavailable")
    assert events(db_url, bo)[-1] == ("unsubscribed", "complaint", "complaint")
    assert events(db_url, al) == before
    lines = bounce_records.list_bounces(db_url=db_url)
    assert {(line.email, line.kind, line.source) for line in lines} == {
        (jo, "hard", "webhook"),
        (bo, "complaint", "webhook"),
        (al, "soft", "webhook"),
    }  # no stranger's
    [long] = [line.reason for line in lines if line.kind == "soft"]  # a whole transcript: one clipped line
    assert long.startswith("line one line two x") and len(long) == 500
    assert consent_record("nobody@example.com", db_url) == []
