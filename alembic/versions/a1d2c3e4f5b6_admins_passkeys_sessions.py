"""The dashboard: admins, passkeys, enrolment links, sessions, WebAuthn ceremonies, the audit log;
how the bounce mailbox's reads last went; the notices emailed to the publisher.

Tokens are stored as their SHA-256 only (rules/admin_access.py).

Revision ID: a1d2c3e4f5b6
Revises: f3a9c1d7e5b2
Create Date: 2026-11-26 03:00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "a1d2c3e4f5b6"
down_revision: str | Sequence[str] | None = "f3a9c1d7e5b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "admin",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("user_handle", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("user_handle"),
    )
    op.create_table(
        "admin_passkey",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=False),
        sa.Column("credential_id", sqlmodel.sql.sqltypes.AutoString(length=1400), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("last_used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("credential_id"),
    )
    with op.batch_alter_table("admin_passkey", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_passkey_admin_id"), ["admin_id"], unique=False)
    op.create_table(
        "admin_enrolment",
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    with op.batch_alter_table("admin_enrolment", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_enrolment_admin_id"), ["admin_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_admin_enrolment_expires_at"), ["expires_at"], unique=False)
    op.create_table(
        "admin_session",
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("last_active_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    with op.batch_alter_table("admin_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_session_admin_id"), ["admin_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_admin_session_last_active_at"), ["last_active_at"], unique=False)
    op.create_table(
        "admin_ceremony",
        sa.Column("id_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("challenge", sa.LargeBinary(), nullable=False),
        sa.Column("enrolment_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id_hash"),
    )
    with op.batch_alter_table("admin_ceremony", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_ceremony_expires_at"), ["expires_at"], unique=False)

    op.create_table(
        "admin_audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("admin", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("target", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("admin_audit", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_admin_audit_at"), ["at"], unique=False)

    op.create_table(
        "job_status",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("last_success_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("failing_since", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("last_error", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "publisher_notice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("period", sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("body", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("kind", "period", name="uq_publisher_notice_kind_period"),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("publisher_notice")
    op.drop_table("job_status")
    op.drop_table("admin_audit")
    op.drop_table("admin_ceremony")
    op.drop_table("admin_session")
    op.drop_table("admin_enrolment")
    op.drop_table("admin_passkey")
    op.drop_table("admin")
