"""The new-release list's transactions: who is on it, with their consent (every change also written
to ``subscription_event``), and the emails that come with it. Each function is one transaction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import sqlalchemy
import sqlmodel
from sqlmodel import col

from publisher.rules import form_fields, list_rules
from publisher.rules.list_rules import ListStatus
from publisher.storage import tables
from publisher.storage.tables import Delivery, Subscriber, SubscriptionEvent, locked_subscriber, record_event


@dataclass(frozen=True)
class SignUp:
    """A sign-up as the subscribe form's judge checked it; the list stores it as it is."""

    email: str
    name: str
    # The form's other fields it keeps, by column.
    more: Mapping[str, str] = field(default_factory=dict)


# What the record of consent says happened, and how.
SUBSCRIBED, CONFIRMED, UNSUBSCRIBED, IMPORTED = "subscribed", "confirmed", "unsubscribed", "imported"
BOUNCED = "bounced"
FROM_THE_FORM = "subscribe form"
BY_CONFIRMATION_LINK = "confirmation link"
BY_UNSUBSCRIBE_PAGE = "unsubscribe page"
BY_ONE_CLICK = "one-click unsubscribe"
BY_HARD_BOUNCE = "hard bounce"
BY_SOFT_BOUNCES = "soft bounces"
BY_COMPLAINT = "complaint"


def _queue(connection, kind: str, subscriber_id: int, job: tables.Job, now: datetime) -> None:
    connection.execute(sqlalchemy.insert(Delivery).values(**tables.delivery_values(kind, subscriber_id, job, now)))


def subscribe(
    sign_up: SignUp,
    job: tables.Job | None,
    db_url: str | None = None,
    *,
    now: datetime | None = None,
    source: str = FROM_THE_FORM,
) -> str:
    """The subscribe form's request; what it did: 'added', 'rejoined', 'pending' or 'confirmed'. ``job``:
    the confirmation to queue if the rule says so (None: no SMTP). Sign-ups to one mailbox wait in turn."""
    now = now or tables.utc_now()
    mailbox = form_fields.mailbox_key(sign_up.email)
    emails_on = job is not None
    with tables.engine(db_url).begin() as connection:
        tables.lock_mailbox(connection, mailbox)
        last_to_mailbox = tables.last_confirmation_to(connection, mailbox)
        step = list_rules.on_subscribe(None, last_to_mailbox, now, emails_on)
        subscriber_id = _add(connection, sign_up, step, source, now)
        outcome = "added"
        if subscriber_id is None:  # the list has the address (an import, unlike a sign-up, takes no lock)
            row = locked_subscriber(connection, col(Subscriber.email_key), sign_up.email.lower())
            assert row is not None and row.id is not None  # the insert found it, and it stays locked now
            step = list_rules.on_subscribe(row.status, last_to_mailbox, now, emails_on)
            _ask_again(connection, row, sign_up, step, source, now)
            subscriber_id, outcome = row.id, "rejoined" if step.joins else step.status
        if step.send_confirmation and job is not None:  # only ever true with a job (emails_on)
            _queue(connection, tables.CONFIRMATION, subscriber_id, job, now)
        return outcome


def _update(connection, subscriber_id: int, **values) -> None:
    connection.execute(sqlalchemy.update(Subscriber).where(col(Subscriber.id) == subscriber_id).values(**values))


def _add(connection, sign_up: SignUp, step: list_rules.Step, source: str, now: datetime) -> int | None:
    """A stranger to the list joins it, pending: its id; None when the list has the address."""
    new_id = tables.insert_once(
        connection,
        Subscriber,
        "email_key",
        **_newcomer(sign_up.email, sign_up.name, step.status, source, now),
        confirmation_sent_at=now if step.send_confirmation else None,
        **sign_up.more,
    )
    if new_id is not None:
        record_event(connection, new_id, SUBSCRIBED, source, now)
    return new_id


def _newcomer(email: str, name: str, status: str, source: str, now: datetime) -> dict:
    """The columns of an address new to the list."""
    return {
        "email": email,
        "email_key": email.lower(),
        "mailbox_key": form_fields.mailbox_key(email),
        "name": name,
        "book_updates": "yes",
        "subscribed_at": now,
        "status": status,
        "source": source,
        "link_key": list_rules.new_link_key(),
    }


def _ask_again(connection, row: Subscriber, sign_up: SignUp, step: list_rules.Step, source: str, now: datetime) -> None:
    """An address the list has asks again: one that left joins afresh (a new consent on record,
    under the name it gives now); a pending one may get a new confirmation."""
    assert row.id is not None  # a stored row has its id (the model's None is before the insert)
    changes: dict = {"status": step.status} if step.status != row.status else {}
    if step.joins:
        changes |= {"subscribed_at": now, "source": source, "name": sign_up.name, **sign_up.more}
        changes |= {"confirmed_at": None, "unsubscribed_at": None, "bounced_at": None}
        record_event(connection, row.id, SUBSCRIBED, source, now)
    if step.send_confirmation:
        changes["confirmation_sent_at"] = now
    if changes:
        _update(connection, row.id, **changes)


def lookup(link_key: str, db_url: str | None = None) -> Subscriber | None:
    with tables.open_session(db_url) as session:
        return session.exec(sqlmodel.select(Subscriber).where(col(Subscriber.link_key) == link_key)).first()


@dataclass(frozen=True)
class LinkResult:
    """What a link's button did, and to which address (for the page)."""

    outcome: str
    email: str


def confirm(
    link_key: str,
    welcome: tables.Job | None,
    notice: tables.Job | None,
    db_url: str | None = None,
    *,
    now: datetime | None = None,
    issued_at: datetime | None = None,
) -> LinkResult | None:
    """The confirmation page's button; None for an address the list no longer has. 'replaced': the link's
    ``issued_at`` is not the latest confirmation's; 'unsubscribed': the address left since, it must ask again."""
    now = now or tables.utc_now()
    with tables.engine(db_url).begin() as connection:
        row = locked_subscriber(connection, col(Subscriber.link_key), link_key)
        if row is None:
            return None
        if row.status != ListStatus.PENDING:
            outcome = "already confirmed" if row.status == ListStatus.CONFIRMED else ListStatus.UNSUBSCRIBED
            return LinkResult(outcome, row.email)
        if issued_at is not None and not list_rules.is_latest_confirmation(
            issued_at, row.confirmation_sent_at, row.subscribed_at
        ):
            return LinkResult("replaced", row.email)
        assert row.id is not None  # a stored row has its id (the model's None is before the insert)
        _update(connection, row.id, status=ListStatus.CONFIRMED, confirmed_at=now)
        record_event(connection, row.id, CONFIRMED, BY_CONFIRMATION_LINK, now)
        for kind, job in ((tables.WELCOME, welcome), (tables.SUBSCRIBER, notice)):
            if job is not None:
                _queue(connection, kind, row.id, job, now)
        return LinkResult("confirmed", row.email)


def unsubscribe(
    link_key: str, how: str, db_url: str | None = None, *, now: datetime | None = None
) -> LinkResult | None:
    """The unsubscribe page's button, or a mail provider's one-click POST; None for an unknown address."""
    now = now or tables.utc_now()
    with tables.engine(db_url).begin() as connection:
        row = locked_subscriber(connection, col(Subscriber.link_key), link_key)
        if row is None:
            return None
        if row.status == ListStatus.UNSUBSCRIBED:
            return LinkResult("already unsubscribed", row.email)
        assert row.id is not None  # a stored row has its id (the model's None is before the insert)
        _update(connection, row.id, status=ListStatus.UNSUBSCRIBED, unsubscribed_at=now)
        record_event(connection, row.id, UNSUBSCRIBED, how, now)
        return LinkResult(ListStatus.UNSUBSCRIBED, row.email)


def list_subscribers(status: str | None = None, db_url: str | None = None) -> list[Subscriber]:
    statement = sqlmodel.select(Subscriber).order_by(col(Subscriber.id))
    if status is not None:
        statement = statement.where(col(Subscriber.status) == status)
    with tables.open_session(db_url) as session:
        return list(session.exec(statement))


@dataclass
class ImportReport:
    counts: Counter = field(default_factory=Counter)

    def __str__(self) -> str:
        c = self.counts
        return (
            f"{c['added']} added, {c['updated']} updated, {c['unchanged']} unchanged, "
            f"{c['kept unsubscribed']} kept unsubscribed, {c['kept bounced']} kept bounced."
        )


def import_rows(
    rows: list[list_rules.ImportRow], how: str, db_url: str | None = None, *, now: datetime | None = None
) -> ImportReport:
    """Bring ``rows`` into the list in one transaction; it sends no email. An address that left or bounced
    stays so whatever the file says; a confirmed one is not made pending again."""
    now = now or tables.utc_now()
    report = ImportReport()
    with tables.engine(db_url).begin() as connection:
        for row in rows:
            report.counts[_import_one(connection, row, how, now)] += 1
    return report


def _import_one(connection, row: list_rules.ImportRow, how: str, now: datetime) -> str:
    existing = locked_subscriber(connection, col(Subscriber.email_key), row.email.lower())
    if existing is None:
        newcomer = _newcomer(row.email, row.name, row.status, how, now) | _status_times(row.status, now)
        new_id = connection.execute(sqlalchemy.insert(Subscriber).values(**newcomer)).inserted_primary_key[0]
        record_event(connection, new_id, IMPORTED, f"{how} ({row.status})", now)
        return "added"
    assert existing.id is not None  # a stored row has its id (the model's None is before the insert)
    status = list_rules.import_step(existing.status, row.status)
    if status is None and existing.status in ListStatus.GONE:
        return f"kept {existing.status}"
    changes: dict = {"status": status, **_status_times(status, now)} if status is not None else {}
    if row.name != existing.name:
        changes["name"] = row.name
    if not changes:
        return "unchanged"
    _update(connection, existing.id, **changes)
    if "status" in changes:
        record_event(connection, existing.id, IMPORTED, f"{how} ({row.status})", now)
    return "updated"


def _status_times(status: str, now: datetime) -> dict[str, datetime]:
    """The time column a status sets: when the address was confirmed, left or bounced."""
    column = {
        ListStatus.CONFIRMED: "confirmed_at",
        ListStatus.UNSUBSCRIBED: "unsubscribed_at",
        ListStatus.BOUNCED: "bounced_at",
    }.get(status)
    return {column: now} if column else {}


@dataclass(frozen=True)
class Erased:
    """What ``forget`` removed."""

    subscriber_status: str | None
    events: int
    messages: int
    deliveries: int
    returns: int = 0  # bounces and complaints about it, and its own emails to the bounce address

    def __str__(self) -> str:
        if not (self.subscriber_status or self.messages or self.deliveries or self.returns):
            return "Nothing is stored about that address."
        events = _count(self.events, "consent event")
        parts = [f"its place on the list ({self.subscriber_status}) with {events}"] if self.subscriber_status else []
        parts += [_count(self.messages, "contact message"), _count(self.deliveries, "outbox email")]
        if self.returns:
            parts.append(_count(self.returns, "record of mail that came back", plural="records of mail that came back"))
        return "Removed " + ", ".join(parts) + "."


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def forget(email: str, db_url: str | None = None) -> Erased:
    """Erase all stored about ``email`` (its emails to the bounce address too): it may then join like a stranger."""
    key = form_fields.address_key(email)
    sent_by_it = sqlalchemy.func.lower(col(tables.ContactMessage.sender_email)) == key
    with tables.engine(db_url).begin() as connection:
        subscriber = locked_subscriber(connection, col(Subscriber.email_key), key)
        message_ids = list(
            connection.execute(sqlalchemy.select(col(tables.ContactMessage.id)).where(sent_by_it)).scalars()
        )
        jobs = sqlalchemy.and_(col(Delivery.kind) == tables.CONTACT, col(Delivery.source_id).in_(message_ids))
        events = 0
        returns = _delete(
            connection, tables.MailboxMessage, sqlalchemy.func.lower(col(tables.MailboxMessage.sender)) == key
        )
        if subscriber is not None:
            returns += _delete(connection, tables.Bounce, col(tables.Bounce.subscriber_id) == subscriber.id)
            about_it = col(Delivery.kind).in_(tables.ABOUT_SUBSCRIBER), col(Delivery.source_id) == subscriber.id
            jobs = sqlalchemy.or_(jobs, sqlalchemy.and_(*about_it))
            events = _delete(connection, SubscriptionEvent, col(SubscriptionEvent.subscriber_id) == subscriber.id)
            _delete(connection, Subscriber, col(Subscriber.id) == subscriber.id)
        deliveries = _delete(connection, Delivery, jobs)
        _delete(connection, tables.ContactMessage, col(tables.ContactMessage.id).in_(message_ids))
        return Erased(subscriber.status if subscriber else None, events, len(message_ids), deliveries, returns)


def _delete(connection, model: type[sqlmodel.SQLModel], condition) -> int:
    return connection.execute(sqlalchemy.delete(model).where(condition)).rowcount


def status_counts(db_url: str | None = None) -> dict[str, int]:
    """How many addresses have each status (0 when none), in one aggregate on the indexed status column."""
    with tables.engine(db_url).connect() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(Subscriber.status), sqlalchemy.func.count()).group_by(col(Subscriber.status))
        ).all()
    counted: dict[str, int] = {row[0]: row[1] for row in rows}
    return {status: counted.get(status, 0) for status in ListStatus.ALL}
