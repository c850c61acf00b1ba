"""The contact form's used tokens, remembered in the database.

Without Redis the used nonces lived in the worker's memory: a deploy or a crash forgot
them, and a token used once was good again for the rest of its hour (issue 40). The
embedded gateway now keeps them here (storage/tables.py) until the token could no
longer be good anyway. Nothing to carry over: the worker's memory is gone at the upgrade,
as it was at every restart before.

Revision ID: c9f1e6b3d482
Revises: b7e4d2a9c031
Create Date: 2026-11-27 06:40:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "c9f1e6b3d482"
down_revision: str | Sequence[str] | None = "b7e4d2a9c031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "used_form_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("nonce", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("nonce"),
    )
    with op.batch_alter_table("used_form_token", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_used_form_token_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("used_form_token")
