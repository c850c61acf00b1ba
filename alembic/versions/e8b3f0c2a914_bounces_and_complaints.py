"""Bounces and complaints: what comes back from the list's emails, and what it did.

- ``bounce``: each bounce or complaint about a reader (at sending time, from the bounce
  mailbox, from a provider's webhook), with the email it is about.
- ``mailbox_message``: each message seen in the bounce mailbox, by its digest, so one is
  processed once, and one that cannot be classified is counted once.
- ``job_lease``: one worker at a time reads the bounce mailbox.
- ``subscriber.bounced_at``, ``subscription_event.detail`` (a bounce's reason in the record
  of consent), and ``campaign.baseline_*`` (the counts when a campaign was last resumed).

Revision ID: e8b3f0c2a914
Revises: d52e8f1a3c77
Create Date: 2026-11-24 11:30:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "e8b3f0c2a914"
down_revision: str | Sequence[str] | None = "d52e8f1a3c77"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "bounce",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("subscriber_id", sa.Integer(), nullable=False),
        sa.Column("email", sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=True),
        sa.Column("campaign_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("bounce", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bounce_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_bounce_subscriber_id"), ["subscriber_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_bounce_delivery_id"), ["delivery_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_bounce_campaign_id"), ["campaign_id"], unique=False)
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
    op.create_table(
        "job_lease",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("until", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bounced_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.add_column(sa.Column("detail", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True))
    with op.batch_alter_table("campaign", schema=None) as batch_op:
        for column in ("baseline_sent", "baseline_hard", "baseline_complaints"):
            batch_op.add_column(sa.Column(column, sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("campaign", schema=None) as batch_op:
        for column in ("baseline_complaints", "baseline_hard", "baseline_sent"):
            batch_op.drop_column(column)
    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.drop_column("detail")
    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.drop_column("bounced_at")
    op.drop_table("job_lease")
    op.drop_table("mailbox_message")
    op.drop_table("bounce")
