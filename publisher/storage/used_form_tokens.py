"""The contact form's used tokens in the database, which outlives every worker (a worker's memory
forgot them at each deploy). Of two racing submits one inserts; each use clears the expired rows."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy
from sqlmodel import col

from publisher.storage import database
from publisher.storage.tables import UsedFormToken, insert_once, utc_now


def first_use(nonce: str, remember_for: timedelta, now: datetime | None = None, db_url: str | None = None) -> bool:
    """Mark ``nonce`` used for ``remember_for``; True when nobody had used it before."""
    now = now or utc_now()
    with database.engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.delete(UsedFormToken).where(col(UsedFormToken.expires_at) <= now))
        inserted = insert_once(connection, UsedFormToken, "nonce", nonce=nonce, expires_at=now + remember_for)
    return inserted is not None


def remembered(db_url: str | None = None) -> int:
    """How many used nonces the table holds (the pruning's effect)."""
    with database.engine(db_url).connect() as connection:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(UsedFormToken)).scalar_one()
