"""Addresses as every SMTP server takes them, the mailbox behind each, and stalled claims.

- Every stored address gets its domain in ASCII (IDNA): ``a@bücher.de`` becomes
  ``a@xn--bcher-kva.de``, as the forms now store it (rules/form_fields.py). A row whose
  ASCII spelling another row already has is left as it is (the mailer still sends it
  in ASCII), so no two rows collide.
- ``subscriber.mailbox_key``: the address in lower case without a ``+tag``, so the
  24-hour confirmation rule counts per mailbox.
- ``outbox_delivery.stalled_claims``: claims that ended with no outcome; a job past
  the limit is given up instead of being claimed for ever.

Revision ID: d52e8f1a3c77
Revises: c41d7a2e9b10
Create Date: 2026-11-24 08:00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from email_validator import EmailNotValidError, validate_email

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "d52e8f1a3c77"
down_revision: str | Sequence[str] | None = "c41d7a2e9b10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ascii(address: str) -> str:
    """The address with its domain in ASCII; unchanged when it has no such spelling."""
    if address.isascii():
        return address
    try:
        return validate_email(address, check_deliverability=False).ascii_email or address
    except EmailNotValidError:
        return address


def _mailbox(address: str) -> str:
    local, _, domain = address.strip().lower().rpartition("@")
    return f"{local.partition('+')[0] or local}@{domain}"


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("mailbox_key", sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False, server_default="")
        )
        batch_op.create_index(batch_op.f("ix_subscriber_mailbox_key"), ["mailbox_key"], unique=False)
    with op.batch_alter_table("outbox_delivery", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stalled_claims", sa.Integer(), nullable=False, server_default="0"))

    connection = op.get_bind()
    subscriber = sa.table(
        "subscriber",
        sa.column("id", sa.Integer),
        sa.column("email", sa.String),
        sa.column("email_key", sa.String),
        sa.column("mailbox_key", sa.String),
    )
    rows = connection.execute(sa.select(subscriber.c.id, subscriber.c.email, subscriber.c.email_key)).all()
    taken = {row.email_key for row in rows}
    for row in rows:
        email = _ascii(row.email)
        key = email.lower()
        if key != row.email_key and key in taken:
            email, key = row.email, row.email_key  # another row has that spelling: keep this one as it was
        taken.add(key)
        connection.execute(
            sa.update(subscriber)
            .where(subscriber.c.id == row.id)
            .values(email=email, email_key=key, mailbox_key=_mailbox(email))
        )
    message = sa.table("contact_message", sa.column("id", sa.Integer), sa.column("sender_email", sa.String))
    for row in connection.execute(sa.select(message.c.id, message.c.sender_email)).all():
        if not row.sender_email.isascii():
            connection.execute(
                sa.update(message).where(message.c.id == row.id).values(sender_email=_ascii(row.sender_email))
            )


def downgrade() -> None:
    """Downgrade schema (the addresses keep their ASCII spelling: it is the same address)."""
    with op.batch_alter_table("outbox_delivery", schema=None) as batch_op:
        batch_op.drop_column("stalled_claims")
    with op.batch_alter_table("subscriber", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscriber_mailbox_key"))
        batch_op.drop_column("mailbox_key")
