"""The bounce mailbox's messages remembered by where they are (folder, UIDVALIDITY, UID).

The reader used to know a message only by the digest of its bytes, so every poll fetched
every message it had left in the mailbox again before it could see it had met it
(issue 34). Now it asks the database which UIDs it has met, and fetches only new ones.

``mailbox_message`` is the reader's memory, not a record of consent: it is made anew. The
messages still in the mailbox (those it left: auto-replies, unclassified) are read once
more after the upgrade and remembered by place; the reports it processed were moved out
of the folder, and their bounces are kept in ``bounce``.

Revision ID: f3a9c1d7e5b2
Revises: e8b3f0c2a914
Create Date: 2026-11-25 07:00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "f3a9c1d7e5b2"
down_revision: str | Sequence[str] | None = "e8b3f0c2a914"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.drop_table("mailbox_message")
    op.create_table(
        "mailbox_message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("folder", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("uidvalidity", sa.BigInteger(), nullable=False),
        sa.Column("uid", sa.BigInteger(), nullable=False),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("size", sa.Integer(), nullable=True),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("sender", sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False),
        sa.Column("note", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
        sa.Column("seen_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("last_seen_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("folder", "uidvalidity", "uid", name="uq_mailbox_message_place"),
    )
    with op.batch_alter_table("mailbox_message", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mailbox_message_digest"), ["digest"], unique=False)
        batch_op.create_index(batch_op.f("ix_mailbox_message_outcome"), ["outcome"], unique=False)
        batch_op.create_index(batch_op.f("ix_mailbox_message_last_seen_at"), ["last_seen_at"], unique=False)


def downgrade() -> None:
    """Downgrade schema: the digest-keyed table of e8b3f0c2a914, empty."""
    op.drop_table("mailbox_message")
    op.create_table(
        "mailbox_message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("sender", sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False),
        sa.Column("seen_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("digest"),
    )
    with op.batch_alter_table("mailbox_message", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mailbox_message_outcome"), ["outcome"], unique=False)
