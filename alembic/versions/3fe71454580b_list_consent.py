"""The list with consent: each subscriber's status, source, link key and dates, and the record of consent.

An address stored before this revision never confirmed it, so it becomes
``pending``: nothing will be sent to it until it confirms (or the publisher
imports it as confirmed, vouching for consent gathered elsewhere). Each gets a
random link key, and its subscription is written to the record of consent.

Revision ID: 3fe71454580b
Revises: b6ae782661cd
Create Date: 2026-11-23 15:10:00

"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "3fe71454580b"
down_revision: str | Sequence[str] | None = "b6ae782661cd"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "subscription_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscriber_id", sa.Integer(), nullable=False),
        sa.Column("event", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("how", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_subscription_event_subscriber_id"), ["subscriber_id"], unique=False)

    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False, server_default="pending")
        )
        batch_op.add_column(
            sa.Column(
                "source", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False, server_default="subscribe form"
            )
        )
        batch_op.add_column(sa.Column("link_key", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
        batch_op.add_column(sa.Column("confirmation_sent_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("confirmed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("unsubscribed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))

    connection = op.get_bind()
    subscriber = sa.table("subscriber", sa.column("id", sa.Integer), sa.column("link_key"), sa.column("subscribed_at"))
    event = sa.table(
        "subscription_event", sa.column("subscriber_id"), sa.column("event"), sa.column("at"), sa.column("how")
    )
    for row in connection.execute(sa.select(subscriber.c.id, subscriber.c.subscribed_at)).all():
        connection.execute(
            subscriber.update().where(subscriber.c.id == row.id).values(link_key=secrets.token_urlsafe(16))
        )
        connection.execute(
            event.insert().values(subscriber_id=row.id, event="subscribed", at=row.subscribed_at, how="subscribe form")
        )

    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.alter_column("link_key", existing_type=sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False)
        batch_op.create_index(batch_op.f("ix_subscriber_link_key"), ["link_key"], unique=True)
        batch_op.create_index(batch_op.f("ix_subscriber_status"), ["status"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscriber_status"))
        batch_op.drop_index(batch_op.f("ix_subscriber_link_key"))
        batch_op.drop_column("unsubscribed_at")
        batch_op.drop_column("confirmed_at")
        batch_op.drop_column("confirmation_sent_at")
        batch_op.drop_column("link_key")
        batch_op.drop_column("source")
        batch_op.drop_column("status")

    with op.batch_alter_table("subscription_event", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscription_event_subscriber_id"))
    op.drop_table("subscription_event")
