"""Release day (issue 50): a forthcoming book's waitlist and its campaign's start time.

- ``waiting``: one row per reader and forthcoming book they asked about ("Tell me when it's out"),
  deleted with the reader (forget, or the waitlist-only erasure after the book's email).
- ``campaign.due_at``: when a scheduled campaign starts by itself; NULL for those started by hand.
- ``subscriber.book_updates`` keeps its column and gains two values: "no" (only waiting for a
  book) and "asked" (waiting, confirmed, asked to join the list). Every existing row is "yes".

Revision ID: a7c4e2f9d610
Revises: b091a8deb378
Create Date: 2026-11-29 07:10:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "a7c4e2f9d610"
down_revision: str | Sequence[str] | None = "b091a8deb378"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "waiting",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscriber_id", sa.Integer(), nullable=False),
        sa.Column("book_slug", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("asked_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("subscriber_id", "book_slug", name="uq_waiting_reader_book"),
    )
    op.create_index(op.f("ix_waiting_subscriber_id"), "waiting", ["subscriber_id"], unique=False)
    op.create_index(op.f("ix_waiting_book_slug"), "waiting", ["book_slug"], unique=False)
    op.create_index(op.f("ix_waiting_asked_at"), "waiting", ["asked_at"], unique=False)
    with op.batch_alter_table("campaign") as batch_op:
        batch_op.add_column(sa.Column("due_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("campaign") as batch_op:
        batch_op.drop_column("due_at")
    op.drop_index(op.f("ix_waiting_asked_at"), table_name="waiting")
    op.drop_index(op.f("ix_waiting_book_slug"), table_name="waiting")
    op.drop_index(op.f("ix_waiting_subscriber_id"), table_name="waiting")
    op.drop_table("waiting")
