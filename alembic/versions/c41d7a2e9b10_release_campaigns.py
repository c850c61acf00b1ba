"""Release campaigns: a campaign per announced book, its jobs in the outbox, one throttle row.

A release job is an outbox delivery with ``campaign_id`` set; the pair
(campaign, reader) is unique, so nothing can queue a reader twice.

Revision ID: c41d7a2e9b10
Revises: 3fe71454580b
Create Date: 2026-11-23 22:30:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "c41d7a2e9b10"
down_revision: str | Sequence[str] | None = "3fe71454580b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "campaign",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_slug", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("recipients", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("paused_reason", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("book_slug"),
    )
    op.create_table(
        "send_throttle",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("next_slot_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("outbox_delivery", schema=None) as batch_op:
        batch_op.add_column(sa.Column("campaign_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_outbox_delivery_campaign_id"), ["campaign_id"], unique=False)
        batch_op.create_unique_constraint("uq_outbox_delivery_campaign_reader", ["campaign_id", "source_id"])


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("outbox_delivery", schema=None) as batch_op:
        batch_op.drop_constraint("uq_outbox_delivery_campaign_reader", type_="unique")
        batch_op.drop_index(batch_op.f("ix_outbox_delivery_campaign_id"))
        batch_op.drop_column("campaign_id")
    op.drop_table("send_throttle")
    op.drop_table("campaign")
