"""The dashboard's admins, their passkeys, enrolment links, sessions and ceremonies: every SQL statement.
Tokens arrive as their SHA-256: the database never holds a token that would open anything."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import sqlalchemy
from sqlmodel import col

from publisher.rules import admin_access, form_fields
from publisher.rules.admin_access import SessionTimes
from publisher.storage import tables
from publisher.storage.tables import (
    AUDIT_TARGET_MAX,
    CEREMONY_ADDRESS_MAX,
    Admin,
    AdminAudit,
    AdminCeremony,
    AdminEnrolment,
    AdminPasskey,
    AdminSession,
    as_utc,
    utc_now,
)


class UnknownAdmin(LookupError):
    """No admin has that name."""


@dataclass(frozen=True)
class Invitation:
    admin_id: int
    created: bool  # a new admin (False: a new link for one who exists)
    expires_at: datetime


def invite(
    name: str, token_hash: str, user_handle: str, now: datetime | None = None, db_url: str | None = None
) -> Invitation:
    """The way in for a new admin, and back for one who lost every passkey; their earlier links stop working."""
    now = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        admin_id = _admin_id(connection, name)
        created = admin_id is None
        if admin_id is None:
            admin_id = connection.execute(
                sqlalchemy.insert(Admin).values(name=name, user_handle=user_handle, created_at=now)
            ).inserted_primary_key[0]  # type: ignore[index]
        connection.execute(sqlalchemy.delete(AdminEnrolment).where(col(AdminEnrolment.admin_id) == admin_id))
        expires_at = now + admin_access.ENROLMENT_VALID_FOR
        connection.execute(
            sqlalchemy.insert(AdminEnrolment).values(
                token_hash=token_hash, admin_id=admin_id, created_at=now, expires_at=expires_at
            )
        )
    return Invitation(admin_id, created, expires_at)


def _admin_id(connection, name: str) -> int | None:
    return connection.execute(sqlalchemy.select(col(Admin.id)).where(col(Admin.name) == name)).scalar_one_or_none()


@dataclass(frozen=True)
class AdminIdentity:
    admin_id: int
    name: str
    user_handle: str


def _identity(connection, admin_id: int) -> AdminIdentity | None:
    row = connection.execute(
        sqlalchemy.select(col(Admin.id), col(Admin.name), col(Admin.user_handle)).where(col(Admin.id) == admin_id)
    ).first()
    return None if row is None else AdminIdentity(row.id, row.name, row.user_handle)


def enrolment_admin(token_hash: str, now: datetime | None = None, db_url: str | None = None) -> AdminIdentity | None:
    with tables.engine(db_url).connect() as connection:
        admin_id = connection.execute(
            sqlalchemy.select(col(AdminEnrolment.admin_id)).where(
                col(AdminEnrolment.token_hash) == token_hash, col(AdminEnrolment.expires_at) > (now or utc_now())
            )
        ).scalar_one_or_none()
        return None if admin_id is None else _identity(connection, admin_id)


def passkey_ids(admin_id: int, db_url: str | None = None) -> list[str]:
    statement = sqlalchemy.select(col(AdminPasskey.credential_id)).where(col(AdminPasskey.admin_id) == admin_id)
    with tables.engine(db_url).connect() as connection:
        return list(connection.execute(statement).scalars())


# The transaction lock that makes counting and inserting one step on PostgreSQL ("publ" + "cere").
CEREMONY_LOCK_KEY = 0x7075626C_63657265


def begin_ceremony(
    id_hash: str,
    challenge: bytes,
    enrolment_hash: str | None,
    address: str,
    now: datetime | None = None,
    db_url: str | None = None,
) -> Literal["address", "site"] | None:
    """Unless the address or the site is full (which); count and insert are one step against racers."""
    now = now or utc_now()
    address = address[:CEREMONY_ADDRESS_MAX]
    with tables.engine(db_url).begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"), {"key": CEREMONY_LOCK_KEY})
        _delete_expired_ceremonies(connection, now)
        waiting, from_address = connection.execute(
            sqlalchemy.select(
                sqlalchemy.func.count(),
                sqlalchemy.func.count().filter(col(AdminCeremony.address) == address),
            ).select_from(AdminCeremony)
        ).one()
        if from_address >= admin_access.MAX_OPEN_CEREMONIES_PER_ADDRESS:
            return "address"
        if waiting >= admin_access.MAX_OPEN_CEREMONIES:
            return "site"
        connection.execute(
            sqlalchemy.insert(AdminCeremony).values(
                id_hash=id_hash,
                challenge=challenge,
                enrolment_hash=enrolment_hash,
                address=address,
                expires_at=now + admin_access.CEREMONY_VALID_FOR,
            )
        )
    return None


def _delete_expired_ceremonies(connection, now: datetime) -> int:
    return connection.execute(sqlalchemy.delete(AdminCeremony).where(col(AdminCeremony.expires_at) <= now)).rowcount


def delete_expired_ceremonies(now: datetime | None = None, db_url: str | None = None) -> int:
    with tables.engine(db_url).begin() as connection:
        return _delete_expired_ceremonies(connection, now or utc_now())


def take_ceremony(id_hash: str, now: datetime | None = None, db_url: str | None = None) -> sqlalchemy.Row | None:
    """Deleted as it is read, so an answer replayed to another worker finds nothing."""
    with tables.engine(db_url).begin() as connection:
        row = connection.execute(
            sqlalchemy.delete(AdminCeremony)
            .where(col(AdminCeremony.id_hash) == id_hash)
            .returning(col(AdminCeremony.challenge), col(AdminCeremony.enrolment_hash), col(AdminCeremony.expires_at))
        ).first()
    return None if row is None or as_utc(row.expires_at) <= (now or utc_now()) else row


def enrol(
    enrolment_hash: str,
    credential_id: str,
    public_key: bytes,
    sign_count: int,
    session_hash: str,
    now: datetime | None = None,
    db_url: str | None = None,
) -> AdminIdentity | None:
    """One transaction; None when the link was used or ran out meanwhile (nothing is stored)."""
    now = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        admin_id = connection.execute(
            sqlalchemy.delete(AdminEnrolment)
            .where(col(AdminEnrolment.token_hash) == enrolment_hash, col(AdminEnrolment.expires_at) > now)
            .returning(col(AdminEnrolment.admin_id))
        ).scalar_one_or_none()
        if admin_id is None:
            return None
        count = connection.execute(
            sqlalchemy.select(sqlalchemy.func.count()).where(col(AdminPasskey.admin_id) == admin_id)
        ).scalar_one()
        connection.execute(
            sqlalchemy.insert(AdminPasskey).values(
                admin_id=admin_id,
                credential_id=credential_id,
                public_key=public_key,
                sign_count=sign_count,
                name=f"passkey {count + 1}",
                created_at=now,
            )
        )
        return _open_session(connection, admin_id, session_hash, now)


def passkey(credential_id: str, db_url: str | None = None) -> sqlalchemy.Row | None:
    with tables.engine(db_url).connect() as connection:
        return connection.execute(
            sqlalchemy.select(
                col(AdminPasskey.admin_id), col(AdminPasskey.public_key), col(AdminPasskey.sign_count)
            ).where(col(AdminPasskey.credential_id) == credential_id)
        ).first()


def sign_in(
    credential_id: str,
    seen_count: int,
    new_count: int,
    session_hash: str,
    now: datetime | None = None,
    db_url: str | None = None,
) -> AdminIdentity | None:
    """The counter moves only from the value verified, so a cloned key racing its original cannot both pass."""
    now = now or utc_now()
    with tables.engine(db_url).begin() as connection:
        admin_id = connection.execute(
            sqlalchemy.update(AdminPasskey)
            .where(col(AdminPasskey.credential_id) == credential_id, col(AdminPasskey.sign_count) == seen_count)
            .values(sign_count=new_count, last_used_at=now)
            .returning(col(AdminPasskey.admin_id))
        ).scalar_one_or_none()
        return None if admin_id is None else _open_session(connection, admin_id, session_hash, now)


def _open_session(connection, admin_id: int, session_hash: str, now: datetime) -> AdminIdentity | None:
    connection.execute(
        sqlalchemy.insert(AdminSession).values(
            token_hash=session_hash, admin_id=admin_id, created_at=now, last_active_at=now
        )
    )
    return _identity(connection, admin_id)


def session_admin(
    session_hash: str, idle: timedelta, now: datetime | None = None, touch: bool = False, db_url: str | None = None
) -> AdminIdentity | None:
    """``touch``: the admin did something (not the page's refresh, or an open page would never idle out)."""
    now = now or utc_now()
    this_session = col(AdminSession.token_hash) == session_hash
    with tables.engine(db_url).begin() as connection:
        row = connection.execute(
            sqlalchemy.select(
                col(AdminSession.admin_id), col(AdminSession.created_at), col(AdminSession.last_active_at)
            ).where(this_session)
        ).first()
        if row is None:
            return None
        times = SessionTimes(as_utc(row.created_at), as_utc(row.last_active_at))
        if not admin_access.session_open(times, now, idle):
            connection.execute(sqlalchemy.delete(AdminSession).where(this_session))
            return None
        if touch:
            connection.execute(sqlalchemy.update(AdminSession).where(this_session).values(last_active_at=now))
        return _identity(connection, row.admin_id)


def end_session(session_hash: str, db_url: str | None = None) -> None:
    with tables.engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.delete(AdminSession).where(col(AdminSession.token_hash) == session_hash))


@dataclass(frozen=True)
class Revoked:
    passkeys: int
    sessions: int


def revoke(name: str, db_url: str | None = None) -> Revoked:
    """The admin stays, so ``admin invite NAME`` lets them in again."""
    with tables.engine(db_url).begin() as connection:
        admin_id = _admin_id(connection, name)
        if admin_id is None:
            raise UnknownAdmin(name)
        passkeys = connection.execute(sqlalchemy.delete(AdminPasskey).where(col(AdminPasskey.admin_id) == admin_id))
        sessions = connection.execute(sqlalchemy.delete(AdminSession).where(col(AdminSession.admin_id) == admin_id))
        connection.execute(sqlalchemy.delete(AdminEnrolment).where(col(AdminEnrolment.admin_id) == admin_id))
        return Revoked(passkeys.rowcount, sessions.rowcount)


@dataclass(frozen=True)
class PasskeyListing:
    admin: str
    passkey: str | None  # None: an admin with no passkey (invited, not enrolled, or revoked)
    created_at: datetime | None
    last_used_at: datetime | None


def list_admins(db_url: str | None = None) -> list[PasskeyListing]:
    with tables.engine(db_url).connect() as connection:
        rows = connection.execute(
            sqlalchemy.select(
                col(Admin.name), col(AdminPasskey.name), col(AdminPasskey.created_at), col(AdminPasskey.last_used_at)
            )
            .select_from(Admin)
            .outerjoin(AdminPasskey, col(AdminPasskey.admin_id) == col(Admin.id))
            .order_by(col(Admin.name), col(AdminPasskey.id))
        ).all()
    return [
        PasskeyListing(admin, passkey, created and as_utc(created), used and as_utc(used))
        for admin, passkey, created, used in rows
    ]


@dataclass(frozen=True)
class AuditLine:
    at: datetime
    admin: str
    action: str
    target: str


def audit(admin: str, action: str, target: str, now: datetime | None = None, db_url: str | None = None) -> None:
    with tables.engine(db_url).begin() as connection:
        connection.execute(
            sqlalchemy.insert(AdminAudit).values(
                at=now or utc_now(), admin=admin, action=action, target=form_fields.one_line(target, AUDIT_TARGET_MAX)
            )
        )


def audit_log(limit: int | None = None, db_url: str | None = None) -> list[AuditLine]:
    statement = (
        sqlalchemy.select(col(AdminAudit.at), col(AdminAudit.admin), col(AdminAudit.action), col(AdminAudit.target))
        .order_by(col(AdminAudit.id).desc())
        .limit(limit)
    )
    with tables.engine(db_url).connect() as connection:
        return [
            AuditLine(as_utc(at), admin, action, target) for at, admin, action, target in connection.execute(statement)
        ]
