"""The new-release list's transactions, each one: who is on it, with their consent (every change also in
``subscription_event``), and the emails that come with it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import sqlalchemy
import sqlmodel
from sqlmodel import col

from publisher.rules import form_fields, list_rules
from publisher.rules.list_rules import ListStatus
from publisher.storage import tables
from publisher.storage.tables import (
    Campaign,
    Delivery,
    Subscriber,
    SubscriptionEvent,
    Waiting,
    locked_subscriber,
    record_event,
)


@dataclass(frozen=True)
class SignUp:
    """As the form's judge checked it; the list stores it as it is. ``more``: the form's other fields, by column."""

    email: str
    name: str
    more: Mapping[str, str] = field(default_factory=dict)


# What the record of consent says happened, and how.
SUBSCRIBED, CONFIRMED, UNSUBSCRIBED, IMPORTED = "subscribed", "confirmed", "unsubscribed", "imported"
BOUNCED = "bounced"
WAITING = "waiting"  # asked to hear when one book is out (the event's detail names it)
FROM_THE_FORM = "subscribe form"
FROM_THE_WAITLIST = "waitlist form"
BY_CONFIRMATION_LINK = "confirmation link"
BY_UNSUBSCRIBE_PAGE = "unsubscribe page"
BY_ONE_CLICK = "one-click unsubscribe"
BY_HARD_BOUNCE = "hard bounce"
BY_SOFT_BOUNCES = "soft bounces"
BY_COMPLAINT = "complaint"


def _queue(connection, kind: str, subscriber_id: int, job: tables.Job, now: datetime) -> None:
    connection.execute(sqlalchemy.insert(Delivery).values(**tables.delivery_values(kind, subscriber_id, job, now)))


def subscribe(
    sign_up: SignUp, job: tables.Job | None, db_url: str | None = None, *, now: datetime | None = None
) -> str:
    """'added', 'rejoined', 'pending' or 'confirmed'; ``job``: the confirmation to queue (None: no SMTP)."""
    with tables.engine(db_url).begin() as connection:
        return _sign_up(connection, sign_up, tables.ON_LIST, FROM_THE_FORM, job, now or tables.utc_now())[1]


def wait(
    sign_up: SignUp,
    book_slug: str,
    join: bool,
    job: tables.Job | None,
    db_url: str | None = None,
    *,
    now: datetime | None = None,
) -> str:
    """As ``subscribe`` (``join``: its box); a confirmed address is not asked again for a book."""
    now = now or tables.utc_now()
    with tables.engine(db_url).begin() as connection:
        wanted = tables.ON_LIST if join else tables.WAITLIST_ONLY
        subscriber_id, outcome = _sign_up(connection, sign_up, wanted, FROM_THE_WAITLIST, job, now)
        tables.insert_once(
            connection,
            Waiting,
            ("subscriber_id", "book_slug"),
            subscriber_id=subscriber_id,
            book_slug=book_slug,
            asked_at=now,
        )
        record_event(connection, subscriber_id, WAITING, FROM_THE_WAITLIST, now, detail=book_slug)
        return outcome


def _sign_up(
    connection, sign_up: SignUp, wanted: str, source: str, job: tables.Job | None, now: datetime
) -> tuple[int, str]:
    """Under its mailbox's lock, so sign-ups to one mailbox wait in turn: the address's id, and what it did."""
    mailbox = form_fields.mailbox_key(sign_up.email)
    emails_on = job is not None
    tables.lock_mailbox(connection, mailbox)
    last_to_mailbox = tables.last_confirmation_to(connection, mailbox)
    step = list_rules.on_subscribe(None, last_to_mailbox, now, emails_on)
    subscriber_id = _add(connection, sign_up, step, source, now, wanted)
    outcome = "added"
    if subscriber_id is None:  # the list has the address (an import, unlike a sign-up, takes no lock)
        row = locked_subscriber(connection, col(Subscriber.email_key), sign_up.email.lower())
        assert row is not None and row.id is not None  # the insert found it, and it stays locked now
        step = list_rules.on_subscribe(row.status, last_to_mailbox, now, emails_on)
        _ask_again(connection, row, sign_up, step, source, now)
        step = _place_on_list(connection, row, step, wanted, last_to_mailbox, now, emails_on)
        subscriber_id, outcome = row.id, "rejoined" if step.joins else step.status
    if step.send_confirmation and job is not None:  # only ever true with a job (emails_on)
        _queue(connection, tables.CONFIRMATION, subscriber_id, job, now)
    return subscriber_id, outcome


def _place_on_list(
    connection,
    row: Subscriber,
    step: list_rules.Step,
    wanted: str,
    last_to_mailbox: datetime | None,
    now: datetime,
    emails_on: bool,
) -> list_rules.Step:
    """A confirmed address off the list that asks to join is "asked", with a confirmation whose press joins it."""
    assert row.id is not None  # a stored row has its id
    if step.joins or (row.status == ListStatus.PENDING and wanted == tables.ON_LIST):
        if row.book_updates != wanted:
            _update(connection, row.id, book_updates=wanted)
        return step
    if row.status != ListStatus.CONFIRMED or wanted != tables.ON_LIST or row.book_updates == tables.ON_LIST:
        return step
    send = emails_on and list_rules.confirmation_due(last_to_mailbox, now)
    _update(connection, row.id, book_updates=tables.ASKED_TO_JOIN, **({"confirmation_sent_at": now} if send else {}))
    return list_rules.Step(ListStatus.CONFIRMED, send_confirmation=send, joins=False)


def waited_books(subscriber_id: int, db_url: str | None = None) -> list[str]:
    statement = (
        sqlalchemy.select(col(Waiting.book_slug))
        .where(col(Waiting.subscriber_id) == subscriber_id)
        .order_by(col(Waiting.id))
    )
    with tables.engine(db_url).connect() as connection:
        return list(connection.execute(statement).scalars())


def _update(connection, subscriber_id: int, **values) -> None:
    connection.execute(sqlalchemy.update(Subscriber).where(col(Subscriber.id) == subscriber_id).values(**values))


def _add(
    connection, sign_up: SignUp, step: list_rules.Step, source: str, now: datetime, book_updates: str
) -> int | None:
    new_id = tables.insert_once(
        connection,
        Subscriber,
        "email_key",
        **_newcomer(sign_up.email, sign_up.name, step.status, source, now) | {"book_updates": book_updates},
        confirmation_sent_at=now if step.send_confirmation else None,
        **sign_up.more,
    )
    if new_id is not None:
        record_event(connection, new_id, SUBSCRIBED, source, now)
    return new_id


def _newcomer(email: str, name: str, status: str, source: str, now: datetime) -> dict:
    return {
        "email": email,
        "email_key": email.lower(),
        "mailbox_key": form_fields.mailbox_key(email),
        "name": name,
        "book_updates": tables.ON_LIST,
        "subscribed_at": now,
        "status": status,
        "source": source,
        "link_key": list_rules.new_link_key(),
    }


def _ask_again(connection, row: Subscriber, sign_up: SignUp, step: list_rules.Step, source: str, now: datetime) -> None:
    """One that left joins afresh (a new consent on record, under the name it gives now)."""
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
    """A pending address is confirmed, a confirmed one asked to join joins; the welcome only for the list.
    'replaced': ``issued_at`` is not the latest confirmation's; 'unsubscribed': it must ask again."""
    now = now or tables.utc_now()
    with tables.engine(db_url).begin() as connection:
        row = locked_subscriber(connection, col(Subscriber.link_key), link_key)
        if row is None:
            return None
        asked = row.status == ListStatus.CONFIRMED and row.book_updates == tables.ASKED_TO_JOIN
        if row.status != ListStatus.PENDING and not asked:
            outcome = "already confirmed" if row.status == ListStatus.CONFIRMED else ListStatus.UNSUBSCRIBED
            return LinkResult(outcome, row.email)
        if issued_at is not None and not list_rules.is_latest_confirmation(
            issued_at, row.confirmation_sent_at, row.subscribed_at
        ):
            return LinkResult("replaced", row.email)
        assert row.id is not None  # a stored row has its id (the model's None is before the insert)
        joins = row.book_updates != tables.WAITLIST_ONLY  # a waitlist-only address gets no list welcome
        joined = {"book_updates": tables.ON_LIST} if asked else {}  # confirmed_at: since when on the list
        _update(connection, row.id, status=ListStatus.CONFIRMED, confirmed_at=now, **joined)
        record_event(
            connection, row.id, CONFIRMED, BY_CONFIRMATION_LINK, now, detail="joined the list" if asked else None
        )
        for kind, job in ((tables.WELCOME, welcome), (tables.SUBSCRIBER, notice)):
            if job is not None and joins:
                _queue(connection, kind, row.id, job, now)
        return LinkResult("confirmed", row.email)


def unsubscribe(
    link_key: str, how: str, db_url: str | None = None, *, now: datetime | None = None
) -> LinkResult | None:
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


def import_rows(
    rows: list[list_rules.ImportRow], how: str, db_url: str | None = None, *, now: datetime | None = None
) -> str:
    """One transaction, no email; a confirmed address is not made pending again. What it did, for the operator."""
    now = now or tables.utc_now()
    counts: Counter[str] = Counter()
    with tables.engine(db_url).begin() as connection:
        for row in rows:
            counts[_import_one(connection, row, how, now)] += 1
    return (
        f"{counts['added']} added, {counts['updated']} updated, {counts['unchanged']} unchanged, "
        f"{counts['kept unsubscribed']} kept unsubscribed, {counts['kept bounced']} kept bounced."
    )


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
    column = {
        ListStatus.CONFIRMED: "confirmed_at",
        ListStatus.UNSUBSCRIBED: "unsubscribed_at",
        ListStatus.BOUNCED: "bounced_at",
    }.get(status)
    return {column: now} if column else {}


@dataclass(frozen=True)
class Erased:
    subscriber_status: str | None
    events: int
    messages: int
    deliveries: int
    returns: int = 0  # bounces and complaints about it, and its own emails to the bounce address
    waits: int = 0  # the books it waited for

    def __str__(self) -> str:
        if not (self.subscriber_status or self.messages or self.deliveries or self.returns):
            return "Nothing is stored about that address."
        events = _count(self.events, "consent event")
        parts = [f"its place on the list ({self.subscriber_status}) with {events}"] if self.subscriber_status else []
        parts += [_count(self.messages, "contact message"), _count(self.deliveries, "outbox email")]
        if self.waits:
            parts.append(_count(self.waits, "wait for a book", plural="waits for a book"))
        if self.returns:
            parts.append(_count(self.returns, "record of mail that came back", plural="records of mail that came back"))
        return "Removed " + ", ".join(parts) + "."


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def forget(email: str, db_url: str | None = None) -> Erased:
    """Its emails to the bounce address too: it may then join like a stranger."""
    with tables.engine(db_url).begin() as connection:
        return _erase(connection, form_fields.address_key(email))


def _erase(connection, key: str) -> Erased:
    sent_by_it = sqlalchemy.func.lower(col(tables.ContactMessage.sender_email)) == key
    subscriber = locked_subscriber(connection, col(Subscriber.email_key), key)
    message_ids = list(connection.execute(sqlalchemy.select(col(tables.ContactMessage.id)).where(sent_by_it)).scalars())
    jobs = sqlalchemy.and_(col(Delivery.kind) == tables.CONTACT, col(Delivery.source_id).in_(message_ids))
    events = waits = 0
    returns = _delete(
        connection, tables.MailboxMessage, sqlalchemy.func.lower(col(tables.MailboxMessage.sender)) == key
    )
    if subscriber is not None:
        returns += _delete(connection, tables.Bounce, col(tables.Bounce.subscriber_id) == subscriber.id)
        about_it = col(Delivery.kind).in_(tables.ABOUT_SUBSCRIBER), col(Delivery.source_id) == subscriber.id
        jobs = sqlalchemy.or_(jobs, sqlalchemy.and_(*about_it))
        events = _delete(connection, SubscriptionEvent, col(SubscriptionEvent.subscriber_id) == subscriber.id)
        waits = _delete(connection, Waiting, col(Waiting.subscriber_id) == subscriber.id)
        _delete(connection, Subscriber, col(Subscriber.id) == subscriber.id)
    deliveries = _delete(connection, Delivery, jobs)
    _delete(connection, tables.ContactMessage, col(tables.ContactMessage.id).in_(message_ids))
    return Erased(subscriber.status if subscriber else None, events, len(message_ids), deliveries, returns, waits)


def erase_waitlist_only(now: datetime, db_url: str | None = None) -> int:
    """Addresses only waiting for books, ``WAITLIST_KEEP_DAYS`` after the last was sent or unconfirmed that long."""
    since = now - timedelta(days=list_rules.WAITLIST_KEEP_DAYS)
    still_owed = (
        sqlalchemy.select(col(Waiting.id))
        .outerjoin(Campaign, col(Campaign.book_slug) == col(Waiting.book_slug))
        .where(col(Waiting.subscriber_id) == col(Subscriber.id))
        .where(sqlalchemy.or_(col(Campaign.finished_at).is_(None), col(Campaign.finished_at) >= since))
    )
    never_confirmed = sqlalchemy.and_(
        col(Subscriber.status) == ListStatus.PENDING, col(Subscriber.subscribed_at) < since
    )
    done = sqlalchemy.select(col(Subscriber.email_key)).where(
        col(Subscriber.book_updates) != tables.ON_LIST, sqlalchemy.or_(~still_owed.exists(), never_confirmed)
    )
    with tables.engine(db_url).begin() as connection:
        keys = list(connection.execute(done.with_for_update(of=Subscriber)).scalars())
        for key in keys:
            _erase(connection, key)
    return len(keys)


def _delete(connection, model: type[sqlmodel.SQLModel], condition) -> int:
    return connection.execute(sqlalchemy.delete(model).where(condition)).rowcount


def status_counts(db_url: str | None = None) -> dict[str, int]:
    with tables.engine(db_url).connect() as connection:
        rows = connection.execute(
            sqlalchemy.select(col(Subscriber.status), sqlalchemy.func.count())
            .where(col(Subscriber.book_updates) == tables.ON_LIST)
            .group_by(col(Subscriber.status))
        ).all()
    counted: dict[str, int] = {row[0]: row[1] for row in rows}
    return {status: counted.get(status, 0) for status in ListStatus.ALL}
