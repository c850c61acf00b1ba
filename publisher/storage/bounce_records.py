"""Bounces and complaints, the bounce mailbox's messages and its lease. A report is recorded with its reader's
row locked, so two at once never count on a stale history; a stranger's address is never stored."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy
from sqlmodel import col

from publisher.rules import bounces, form_fields
from publisher.rules.form_fields import one_line
from publisher.rules.list_rules import ListStatus
from publisher.storage import tables
from publisher.storage.subscribers import BOUNCED, BY_COMPLAINT, BY_HARD_BOUNCE, BY_SOFT_BOUNCES, UNSUBSCRIBED
from publisher.storage.tables import (
    FAILED,
    REASON_MAX,
    SENT,
    TO_SUBSCRIBER,
    Bounce,
    Campaign,
    Delivery,
    JobLease,
    MailboxMessage,
    Subscriber,
    as_utc,
    insert_once,
    locked_subscriber,
    record_event,
    utc_now,
)

# What recording a report did (Recorded.outcome).
MADE_BOUNCED = "bounced"
MADE_UNSUBSCRIBED = "unsubscribed"
COUNTED = "counted"
ALREADY_KNOWN = "already known"
NOT_ON_THE_LIST = "not on the list"

# A mailbox message's outcome: processed (recorded and moved), or why it was left.
PROCESSED = "processed"
AUTO_REPLY = "auto-reply"
UNCLASSIFIED = "unclassified"
UNPROVEN = "unproven"
TOO_LARGE = "too large"
UNHANDLED = "unhandled"


@dataclass(frozen=True)
class Report:
    """About an email (``delivery_id``) or, when the report does not say which, about an address."""

    kind: str
    reason: str
    source: str
    delivery_id: int | None = None
    email: str | None = None


@dataclass(frozen=True)
class Recorded:
    outcome: str
    email: str | None = None
    campaign_id: int | None = None


def record_all(reports: Iterable[Report], db_url: str | None = None, *, now: datetime | None = None) -> list[Recorded]:
    """One transaction: a webhook's list is all kept, or none."""
    moment = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        return [_record(connection, report, moment) for report in reports]


def _list_emails(*where: sqlalchemy.ColumnElement[bool]) -> sqlalchemy.Select:
    return sqlalchemy.select(Delivery).where(col(Delivery.kind).in_(TO_SUBSCRIBER), *where)


def delivery_by_message_id(message_id: str, addresses: Iterable[str], db_url: str | None = None) -> int | None:
    """The list email that carried this Message-ID, when it went to one of ``addresses`` (none named: the ID
    alone). Its 128 random bits prove the email was seen; the address stops a reader reporting another."""
    with tables.engine(db_url).begin() as connection:
        row = connection.execute(
            _list_emails(col(Delivery.message_id) == message_id.strip())
            .add_columns(col(Subscriber.email_key))
            .join(Subscriber, col(Subscriber.id) == col(Delivery.source_id))
        ).first()
    keys = {form_fields.address_key(address) for address in addresses}
    return row.id if row is not None and (not keys or row.email_key in keys) else None


def _record(connection, report: Report, now: datetime) -> Recorded:
    delivery = reader = None
    if report.delivery_id is not None:
        delivery = connection.execute(_list_emails(col(Delivery.id) == report.delivery_id)).first()
        reader = None if delivery is None else locked_subscriber(connection, col(Subscriber.id), delivery.source_id)
    elif report.email:
        reader = locked_subscriber(connection, col(Subscriber.email_key), form_fields.address_key(report.email))
        if reader is not None:
            delivery = connection.execute(  # the email a report that names only the address is most likely about
                _list_emails(col(Delivery.source_id) == reader.id, col(Delivery.status) == SENT)
                .order_by(col(Delivery.sent_at).desc(), col(Delivery.id).desc())
                .limit(1)
            ).first()
    if reader is None or reader.id is None:
        return Recorded(NOT_ON_THE_LIST)
    campaign_id = None if delivery is None else delivery.campaign_id
    delivery_id = None if delivery is None else delivery.id
    same = sqlalchemy.select(col(Bounce.id)).where(
        col(Bounce.delivery_id) == delivery_id, col(Bounce.kind) == report.kind
    )
    if delivery_id is not None and connection.execute(same).first():
        return Recorded(ALREADY_KNOWN, reader.email, campaign_id)
    reason = one_line(report.reason or report.kind, REASON_MAX)
    connection.execute(
        sqlalchemy.insert(Bounce).values(
            at=now,
            subscriber_id=reader.id,
            email=reader.email,
            kind=report.kind,
            reason=reason,
            source=report.source,
            delivery_id=delivery_id,
            campaign_id=campaign_id,
        )
    )
    emailed_at = now if delivery is None else as_utc(delivery.sent_at or delivery.created_at)
    if emailed_at < as_utc(reader.subscribed_at):
        return Recorded(COUNTED, reader.email, campaign_id)  # an email from before the latest sign-up
    outcome = _apply(connection, reader, report.kind, reason, now)
    return Recorded(outcome, reader.email, campaign_id)


def _apply(connection, reader: Subscriber, kind: str, reason: str, now: datetime) -> str:
    """What a new bounce or complaint does to its reader's place on the list."""
    assert reader.id is not None  # a stored row has its id
    update = sqlalchemy.update(Subscriber).where(col(Subscriber.id) == reader.id)
    if kind == bounces.COMPLAINT:
        if reader.status == ListStatus.UNSUBSCRIBED:
            return COUNTED
        connection.execute(update.values(status=ListStatus.UNSUBSCRIBED, unsubscribed_at=now))
        record_event(connection, reader.id, UNSUBSCRIBED, BY_COMPLAINT, now, reason)
        return MADE_UNSUBSCRIBED
    if reader.status not in (ListStatus.PENDING, ListStatus.CONFIRMED):
        return COUNTED
    how = BY_HARD_BOUNCE  # a report is hard, soft or a complaint
    if kind == bounces.SOFT:
        history = _sent_emails(connection, reader.id, as_utc(reader.subscribed_at))
        if bounces.soft_bounces_in_a_row(history, now) < bounces.SOFT_BOUNCES_TO_BOUNCED:
            return COUNTED
        how = BY_SOFT_BOUNCES
        reason = one_line(f"{bounces.SOFT_BOUNCES_TO_BOUNCED} soft bounces in a row, the last: {reason}", REASON_MAX)
    connection.execute(update.values(status=ListStatus.BOUNCED, bounced_at=now))
    record_event(connection, reader.id, BOUNCED, how, now, reason)
    return MADE_BOUNCED


_SEVERITY = {bounces.SOFT: 0, bounces.COMPLAINT: 1, bounces.HARD: 2}


def _sent_emails(connection, subscriber_id: int, since: datetime) -> list[bounces.SentEmail]:
    """The reader's list emails since their latest sign-up, each with what came back (the worst)."""
    rows = connection.execute(
        _list_emails(col(Delivery.source_id) == subscriber_id, col(Delivery.status).in_((SENT, FAILED)))
    ).all()
    came_back: dict[int, str] = {}
    loose: list[bounces.SentEmail] = []
    for bounce_id, delivery_id, kind, at in connection.execute(
        sqlalchemy.select(col(Bounce.id), col(Bounce.delivery_id), col(Bounce.kind), col(Bounce.at)).where(
            col(Bounce.subscriber_id) == subscriber_id
        )
    ).all():
        if delivery_id is None:
            loose.append(bounces.SentEmail(-bounce_id, as_utc(at), kind))
        elif _SEVERITY.get(kind, 0) >= _SEVERITY.get(came_back.get(delivery_id, ""), -1):
            came_back[delivery_id] = kind
    emails = []
    for row in rows:
        moment = as_utc(row.sent_at or row.created_at)
        kind = came_back.get(row.id)
        if moment < since or (row.status == FAILED and kind is None):  # a failure no bounce explains says nothing
            continue
        emails.append(bounces.SentEmail(row.id, moment, kind))
    return emails + [email for email in loose if email.sent_at >= since]


@dataclass(frozen=True)
class BounceLine:
    at: datetime
    email: str
    kind: str
    reason: str
    source: str
    campaign: str | None  # the announced book's slug


def list_bounces(since: datetime | None = None, db_url: str | None = None, limit: int = 1000) -> list[BounceLine]:
    """Newest first."""
    statement = (
        sqlalchemy.select(Bounce, col(Campaign.book_slug))
        .outerjoin(Campaign, col(Campaign.id) == col(Bounce.campaign_id))
        .order_by(col(Bounce.at).desc(), col(Bounce.id).desc())
        .limit(limit)
    )
    if since is not None:
        statement = statement.where(col(Bounce.at) >= since)
    with tables.engine(db_url).begin() as connection:
        return [
            BounceLine(as_utc(row.at), row.email, row.kind, row.reason, row.source, row.book_slug)
            for row in connection.execute(statement)
        ]


@dataclass(frozen=True)
class CampaignReturns:
    """Each email counted once per kind."""

    sent: int
    hard: int
    soft: int
    complaints: int


def campaign_returns(campaign_id: int, db_url: str | None = None, connection=None) -> CampaignReturns:
    if connection is None:
        with tables.engine(db_url).begin() as connection:
            return campaign_returns(campaign_id, connection=connection)
    sent = connection.execute(
        sqlalchemy.select(sqlalchemy.func.count()).where(
            col(Delivery.campaign_id) == campaign_id, col(Delivery.status).in_((SENT, FAILED))
        )
    ).scalar_one()
    # A failure at sending time is a bounce too, so an email refused outright counts as sent.
    kinds = dict(
        connection.execute(
            sqlalchemy.select(col(Bounce.kind), sqlalchemy.func.count(sqlalchemy.distinct(col(Bounce.delivery_id))))
            .where(col(Bounce.campaign_id) == campaign_id)
            .group_by(col(Bounce.kind))
        ).all()
    )
    return CampaignReturns(
        sent, kinds.get(bounces.HARD, 0), kinds.get(bounces.SOFT, 0), kinds.get(bounces.COMPLAINT, 0)
    )


def pause_on_returns(
    campaign_id: int, bounce_rate: float, complaint_rate: float, db_url: str | None = None
) -> tuple[str, str] | None:
    """Counted since the campaign was last resumed; the reason and the book's slug when it paused now."""
    with tables.engine(db_url).begin() as connection:
        campaign = connection.execute(
            sqlalchemy.select(Campaign).where(col(Campaign.id) == campaign_id).with_for_update()
        ).first()
        if campaign is None or campaign.status != tables.SENDING:
            return None
        counts = campaign_returns(campaign_id, connection=connection)
        reason = bounces.pause_reason(
            counts.sent - campaign.baseline_sent,
            counts.hard - campaign.baseline_hard,
            counts.complaints - campaign.baseline_complaints,
            bounce_rate,
            complaint_rate,
        )
        if reason is None:
            return None
        connection.execute(
            sqlalchemy.update(Campaign)
            .where(col(Campaign.id) == campaign_id)
            .values(status=tables.PAUSED, paused_reason=one_line(reason, REASON_MAX))
        )
        return reason, campaign.book_slug


def reset_baseline(connection, campaign_id: int) -> None:
    """On resuming: the thresholds judge only what comes after."""
    counts = campaign_returns(campaign_id, connection=connection)
    connection.execute(
        sqlalchemy.update(Campaign)
        .where(col(Campaign.id) == campaign_id)
        .values(baseline_sent=counts.sent, baseline_hard=counts.hard, baseline_complaints=counts.complaints)
    )


@dataclass(frozen=True)
class MailboxPlace:
    """Its UIDs are never reused while its UIDVALIDITY stays the same (RFC 3501 §2.3.1.1)."""

    folder: str
    uidvalidity: int


MAILBOX_MEMORY = timedelta(days=90)  # of a message no longer in the mailbox
LEFT_LISTED_MAX = 200
_UIDS_PER_QUERY = 500


def known_messages(
    place: MailboxPlace, uids: Iterable[int], db_url: str | None = None, *, now: datetime | None = None
) -> dict[int, str]:
    """Those met are marked seen ``now``, so the memory of a message still in the mailbox is never pruned."""
    moment = now or utc_now()
    wanted = sorted(set(uids))
    known: dict[int, str] = {}
    with tables.engine(db_url).begin() as connection:
        for first in range(0, len(wanted), _UIDS_PER_QUERY):
            chunk = wanted[first : first + _UIDS_PER_QUERY]
            where = (
                col(MailboxMessage.folder) == place.folder,
                col(MailboxMessage.uidvalidity) == place.uidvalidity,
                col(MailboxMessage.uid).in_(chunk),
            )
            rows = connection.execute(
                sqlalchemy.select(col(MailboxMessage.uid), col(MailboxMessage.outcome)).where(*where)
            ).all()
            if rows:
                connection.execute(sqlalchemy.update(MailboxMessage).where(*where).values(last_seen_at=moment))
            known.update((int(uid), outcome) for uid, outcome in rows)
    return known


@dataclass(frozen=True)
class Fetched:
    """As the message wrote them: cleaned when stored."""

    digest: str
    size: int
    subject: str
    sender: str


def record_message(
    place: MailboxPlace,
    uid: int,
    outcome: str,
    *,
    fetched: Fetched | None = None,
    size: int | None = None,
    note: str = "",
    reports: Iterable[Report] = (),
    db_url: str | None = None,
    now: datetime | None = None,
) -> list[Recorded]:
    """One transaction; no reports when recorded before or a copy (same digest) was processed. Cleaned
    first: a NUL in ``From:`` would make PostgreSQL refuse it."""
    moment = now or utc_now()
    digest = fetched.digest if fetched else None
    with tables.engine(db_url).begin() as connection:
        copy_processed = (
            digest is not None
            and outcome == PROCESSED
            and connection.execute(
                sqlalchemy.select(col(MailboxMessage.id)).where(
                    col(MailboxMessage.digest) == digest, col(MailboxMessage.outcome) == PROCESSED
                )
            ).first()
            is not None
        )
        new = insert_once(
            connection,
            MailboxMessage,
            ("folder", "uidvalidity", "uid"),
            folder=place.folder,
            uidvalidity=place.uidvalidity,
            uid=uid,
            digest=digest,
            size=fetched.size if fetched else size,
            outcome=outcome,
            subject=one_line(fetched.subject if fetched else "", 200),
            sender=one_line(fetched.sender if fetched else "", form_fields.EMAIL_MAX),
            note=one_line(note, REASON_MAX),
            seen_at=moment,
            last_seen_at=moment,
        )
        if new is None or copy_processed:
            return []
        return [_record(connection, report, moment) for report in reports]


def prune_messages(now: datetime | None = None, db_url: str | None = None) -> int:
    """Those no read has seen for MAILBOX_MEMORY (moved out, or deleted by a person); how many."""
    moment = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        return connection.execute(
            sqlalchemy.delete(MailboxMessage).where(col(MailboxMessage.last_seen_at) < moment - MAILBOX_MEMORY)
        ).rowcount


@dataclass(frozen=True)
class LeftMessage:
    seen_at: datetime
    sender: str
    subject: str
    outcome: str
    note: str


def left_messages(
    since: datetime | None = None, db_url: str | None = None, limit: int = LEFT_LISTED_MAX
) -> tuple[list[LeftMessage], dict[str, int]]:
    """All but auto-replies and processed reports, newest first; and how many of each outcome."""
    listed = (
        col(MailboxMessage.outcome).notin_((PROCESSED, AUTO_REPLY)),
        *((col(MailboxMessage.seen_at) >= since,) if since is not None else ()),
    )
    with tables.engine(db_url).begin() as connection:
        counts = dict(
            connection.execute(
                sqlalchemy.select(col(MailboxMessage.outcome), sqlalchemy.func.count())
                .where(*listed)
                .group_by(col(MailboxMessage.outcome))
            ).all()
        )
        rows = connection.execute(
            sqlalchemy.select(MailboxMessage)
            .where(*listed)
            .order_by(col(MailboxMessage.seen_at).desc(), col(MailboxMessage.id).desc())
            .limit(limit)
        ).all()
    return [LeftMessage(as_utc(row.seen_at), row.sender, row.subject, row.outcome, row.note) for row in rows], counts


def take_lease(name: str, holder: str, now: datetime, until: datetime, db_url: str | None = None) -> bool:
    """Unless another holder's lease is still running; whether we hold it."""
    free = sqlalchemy.or_(col(JobLease.holder) == holder, col(JobLease.until) < now)
    with tables.engine(db_url).begin() as connection:
        insert_once(connection, JobLease, "name", name=name, holder=holder, until=until)
        taken = sqlalchemy.update(JobLease).where(col(JobLease.name) == name, free).values(holder=holder, until=until)
        return connection.execute(taken).rowcount == 1


def give_back_lease(name: str, holder: str, db_url: str | None = None) -> None:
    with tables.engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.update(JobLease)
            .where(col(JobLease.name) == name, col(JobLease.holder) == holder)
            .values(until=datetime(1970, 1, 1, tzinfo=UTC))
        )
