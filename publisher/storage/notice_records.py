"""What the emails to the publisher read, and the notices queued: one of each kind per period across workers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy
from sqlmodel import col

from publisher.rules import bounces, form_fields
from publisher.rules.notice_rules import Week
from publisher.storage import tables
from publisher.storage.tables import (
    ERROR_MAX,
    FAILED,
    NOTICE,
    PAUSED,
    PENDING,
    RELEASE,
    SENT,
    Bounce,
    Campaign,
    ContactMessage,
    Delivery,
    Job,
    JobStatus,
    PublisherNotice,
    Subscriber,
    as_utc,
    delivery_values,
    insert_once,
    utc_now,
)

BOUNCE_MAILBOX = "bounce-mailbox"  # the job_status row of the bounce mailbox's reads


@dataclass(frozen=True)
class RunStatus:
    last_success_at: datetime | None
    failing_since: datetime | None
    last_error: str | None


def record_run(name: str, error: str | None, now: datetime | None = None, db_url: str | None = None) -> None:
    """``error`` None for a success; "failing for an hour" counts from the first failure in a row."""
    now = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        insert_once(connection, JobStatus, "name", name=name)
        if error is None:
            values: dict = {"last_success_at": now, "failing_since": None, "last_error": None}
        else:
            values = {
                "failing_since": sqlalchemy.func.coalesce(col(JobStatus.failing_since), now),
                "last_error": form_fields.one_line(error, ERROR_MAX),
            }
        connection.execute(sqlalchemy.update(JobStatus).where(col(JobStatus.name) == name).values(**values))


def run_status(name: str, db_url: str | None = None) -> RunStatus:
    with tables.engine(db_url).connect() as connection:
        row = connection.execute(
            sqlalchemy.select(
                col(JobStatus.last_success_at), col(JobStatus.failing_since), col(JobStatus.last_error)
            ).where(col(JobStatus.name) == name)
        ).first()
    success, failing, error = row or (None, None, None)
    return RunStatus(None if success is None else as_utc(success), None if failing is None else as_utc(failing), error)


def paused_campaigns(db_url: str | None = None) -> list[tuple[str, str]]:
    with tables.engine(db_url).connect() as connection:
        return [
            (slug, reason or "")
            for slug, reason in connection.execute(
                sqlalchemy.select(col(Campaign.book_slug), col(Campaign.paused_reason))
                .where(col(Campaign.status) == PAUSED)
                .order_by(col(Campaign.id))
            )
        ]


def failing_emails(db_url: str | None = None) -> tuple[int, datetime | None]:
    """Given up on, or waiting for a retry after a failure; and since when the oldest has waited."""
    failing = sqlalchemy.or_(
        col(Delivery.status) == FAILED, sqlalchemy.and_(col(Delivery.status) == PENDING, col(Delivery.attempts) > 0)
    )
    with tables.engine(db_url).connect() as connection:
        count, oldest = connection.execute(
            sqlalchemy.select(sqlalchemy.func.count(), sqlalchemy.func.min(col(Delivery.created_at))).where(failing)
        ).one()
    return count, None if oldest is None else as_utc(oldest)


def week(until: datetime, db_url: str | None = None) -> Week:
    since = until - timedelta(days=7)

    def between(column) -> sqlalchemy.ColumnElement[bool]:
        return sqlalchemy.and_(column >= since, column < until)

    def count(connection, *where) -> int:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).where(*where)).scalar_one()

    with tables.engine(db_url).connect() as connection:
        return Week(
            new_readers=count(connection, between(col(Subscriber.confirmed_at))),
            leavers=count(connection, between(col(Subscriber.unsubscribed_at))),
            bounces=count(connection, between(col(Bounce.at)), col(Bounce.kind) != bounces.COMPLAINT),
            complaints=count(connection, between(col(Bounce.at)), col(Bounce.kind) == bounces.COMPLAINT),
            messages=count(connection, between(col(ContactMessage.received_at))),
            releases_sent=count(
                connection, col(Delivery.kind) == RELEASE, col(Delivery.status) == SENT, between(col(Delivery.sent_at))
            ),
        )


def queue_notice(
    kind: str, period: str, subject: str, body: str, job: Job, now: datetime | None = None, db_url: str | None = None
) -> bool:
    """With its outbox email, unless one of ``kind`` was queued for ``period`` already; whether it queued."""
    now = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        notice_id = insert_once(
            connection,
            PublisherNotice,
            ("kind", "period"),
            kind=kind,
            period=period,
            subject=form_fields.one_line(subject, form_fields.SUBJECT_MAX),
            body=body,
            created_at=now,
        )
        if notice_id is None:
            return False
        connection.execute(sqlalchemy.insert(Delivery).values(**delivery_values(NOTICE, notice_id, job, now)))
        return True
