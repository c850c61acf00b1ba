"""Visits, sources and buy presses counted on our own server (issue 42).

What is kept, and for how long:

- ``visit_salt``: each day's random salt, deleted 48 hours after the day began (00:00 UTC).
- ``visit_seen``: the day's salted visitor ids (16 bytes each; never an address or a user agent)
  per kind and key, deleted with the day's salt.
- ``visit_count``: the daily counts (views and visitors per kind and key), kept
  PUBLISHER_VISITS_KEEP_DAYS days (730 by default).

Nothing to carry over: nothing was counted before.

Beside the visits the dashboard shows what they led to, per day over a range (storage/dashboard.py):
``subscription_event.at`` and ``contact_message.received_at`` get an index, so those reads cost
the days asked for, not the whole record.

Revision ID: b091a8deb378
Revises: c9f1e6b3d482
Create Date: 2026-11-27 12:20:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "b091a8deb378"
down_revision: str | Sequence[str] | None = "c9f1e6b3d482"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "visit_salt",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("salt", sa.LargeBinary(), nullable=False),
        sa.Column("destroyed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("day"),
    )
    op.create_table(
        "visit_seen",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column("visitor", sa.LargeBinary(length=16), nullable=False),
        sa.PrimaryKeyConstraint("day", "kind", "key", "visitor"),
    )
    op.create_table(
        "visit_count",
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column("views", sa.BigInteger(), nullable=False),
        sa.Column("visitors", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "day", "key"),
    )
    with op.batch_alter_table("visit_count", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_visit_count_day"), ["day"], unique=False)
    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_subscription_event_at"), ["at"], unique=False)
    with op.batch_alter_table("contact_message", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_contact_message_received_at"), ["received_at"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("contact_message", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_contact_message_received_at"))
    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscription_event_at"))
    op.drop_table("visit_count")
    op.drop_table("visit_seen")
    op.drop_table("visit_salt")
