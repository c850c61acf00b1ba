"""Each WebAuthn ceremony under way remembers the address it was begun for.

``POST /admin/api/sign-in/options`` wrote a row per request with no bound (issue 40: 1,000
requests from one address, 1,000 rows). A ceremony is now begun only while its address has
fewer than five waiting and the site fewer than 1,000 (storage/admins.begin_ceremony), so
the row says whose it is. The rows waiting at the upgrade last five minutes at most: they
are kept, counted as no address's.

Revision ID: b7e4d2a9c031
Revises: a1d2c3e4f5b6
Create Date: 2026-11-27 06:30:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "b7e4d2a9c031"
down_revision: str | Sequence[str] | None = "a1d2c3e4f5b6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("admin_ceremony", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("address", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False, server_default="")
        )


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("admin_ceremony", schema=None) as batch_op:
        batch_op.drop_column("address")
