"""The embedded local gateway: the same two endpoints as the cloud API gateway, self-hosted.

Used when ``PUBLISHER_GATEWAY_URL`` is unset, so the site works end to end with
nothing else running. It is an ASGI app that is never mounted on the public
server: the site's backend reaches it through an in-process httpx transport, so
no outside request can skip the forms' anti-spam checks by posting to it.

Accepted requests are stored through Reflex's database layer (``db_url`` in
rxconfig.py, ``REFLEX_DB_URL`` in the environment; SQLite by default). The schema
comes from the Alembic migrations in ``alembic/`` (``publisher-gateway migrate``,
see database.py).

Operators bring the schema up to date and read what was stored with the
``publisher-gateway`` command::

    publisher-gateway migrate
    publisher-gateway subscribers > subscribers.csv
    publisher-gateway messages
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import sqlalchemy
import sqlmodel
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from reflex import model as rx_model
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from publisher import database, validation
from publisher.gateway import SEND_EMAIL_PATH, SUBSCRIBE_PATH

logger = logging.getLogger(__name__)

# The largest body the site can send is a 5000-character message with names and an
# email (at most ~21 KB of UTF-8 even when every character takes four bytes).
MAX_BODY_BYTES = 32 * 1024
SUBJECT_MAX = 300


class Subscriber(sqlmodel.SQLModel, table=True):
    """One address on the new-release list; ``email_key`` makes a repeat a no-op."""

    __tablename__ = "subscriber"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    email_key: str = sqlmodel.Field(max_length=validation.EMAIL_MAX, unique=True, index=True)
    name: str = sqlmodel.Field(max_length=validation.NAME_MAX)
    book_updates: str = sqlmodel.Field(max_length=8)
    subscribed_at: datetime = sqlmodel.Field(default_factory=lambda: datetime.now(UTC))


class ContactMessage(sqlmodel.SQLModel, table=True):
    """One message sent through the contact form, as the cloud gateway would email it."""

    __tablename__ = "contact_message"

    id: int | None = sqlmodel.Field(default=None, primary_key=True)
    sender_name: str = sqlmodel.Field(max_length=2 * validation.NAME_MAX + 1)
    sender_email: str = sqlmodel.Field(max_length=validation.EMAIL_MAX)
    subject: str = sqlmodel.Field(max_length=SUBJECT_MAX)
    message: str = sqlmodel.Field(max_length=validation.MESSAGE_MAX)
    received_at: datetime = sqlmodel.Field(default_factory=lambda: datetime.now(UTC))


# --- Request bodies: the contract of spec section 7, checked strictly. ---


def _clean_text(value: str, *, maximum: int, allowed_controls: frozenset[str] = frozenset()) -> str:
    text = value.strip()
    if not text:
        raise ValueError("must not be empty")
    if len(text) > maximum:
        raise ValueError(f"must be at most {maximum} characters")
    if validation.has_control_characters(text, allowed_controls):
        raise ValueError("must not contain control characters")
    return text


def _clean_email(value: str) -> str:
    email, error = validation.check_email(value)
    if error:
        raise ValueError("must be a valid email address")
    return email


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _NameAndEmail(_Body):
    name: str
    email: str

    name_max: ClassVar[int] = validation.NAME_MAX

    @field_validator("email")
    @classmethod
    def _valid_email(cls, value: str) -> str:
        return _clean_email(value)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _clean_text(value, maximum=cls.name_max)


class SubscribeRequest(_NameAndEmail):
    book_updates: Literal["yes"]


class Sender(_NameAndEmail):
    # "<first> <last>", each at most NAME_MAX characters.
    name_max: ClassVar[int] = 2 * validation.NAME_MAX + 1


class SendEmailRequest(_Body):
    sender: Sender
    subject: str
    message: str

    @field_validator("subject")
    @classmethod
    def _valid_subject(cls, value: str) -> str:
        return _clean_text(value, maximum=SUBJECT_MAX)

    @field_validator("message")
    @classmethod
    def _valid_message(cls, value: str) -> str:
        return _clean_text(value, maximum=validation.MESSAGE_MAX, allowed_controls=frozenset("\n\r\t"))


# --- Storage (synchronous; called from a thread so the event loop never blocks). ---


def _session(db_url: str | None) -> sqlmodel.Session:
    return rx_model.session(db_url)


def _insert_once(dialect: str):
    """An INSERT that skips a row whose unique key exists (ON CONFLICT DO NOTHING), or None."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        return None
    return insert


def store_subscription(body: SubscribeRequest, db_url: str | None = None) -> bool:
    """Store a subscriber; False when the address was already on the list (nothing changes).

    The unique ``email_key`` settles a repeat and two simultaneous subscriptions of
    one address alike: on SQLite and PostgreSQL the second insert does nothing
    (no error, no aborted transaction), elsewhere its IntegrityError is the answer.
    """
    values = {
        "email": body.email,
        "email_key": body.email.lower(),
        "name": body.name,
        "book_updates": body.book_updates,
        "subscribed_at": datetime.now(UTC),
    }
    engine = rx_model.get_engine(db_url)
    insert = _insert_once(engine.dialect.name)
    if insert is not None:
        statement = (
            insert(Subscriber)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["email_key"])
            .returning(Subscriber.id)  # a row only when inserted (rowcount is not reliable here)
        )
        with engine.begin() as connection:
            return connection.execute(statement).first() is not None
    with _session(db_url) as session:
        session.add(Subscriber(**values))
        try:
            session.commit()
        except sqlalchemy.exc.IntegrityError:
            session.rollback()
            return False
    return True


def store_message(body: SendEmailRequest, db_url: str | None = None) -> None:
    row = ContactMessage(
        sender_name=body.sender.name,
        sender_email=body.sender.email,
        subject=body.subject,
        message=body.message,
    )
    with _session(db_url) as session:
        session.add(row)
        session.commit()


def list_subscribers(db_url: str | None = None) -> list[Subscriber]:
    with _session(db_url) as session:
        return list(session.exec(sqlmodel.select(Subscriber).order_by(Subscriber.id)))


def list_messages(db_url: str | None = None) -> list[ContactMessage]:
    with _session(db_url) as session:
        return list(session.exec(sqlmodel.select(ContactMessage).order_by(ContactMessage.id)))


def migrate_on_development_start() -> None:
    """`reflex run` on a fresh clone: the tables exist before the first submit.

    Development server only (one backend process, migrated again on each reload, a
    no-op when up to date). ``publisher-serve`` migrates once before its workers
    start, and ``make run`` runs ``publisher-gateway migrate`` first anyway.
    """
    from reflex_base import constants
    from reflex_base.environment import environment

    from publisher.settings import gateway_url

    if environment.REFLEX_ENV_MODE.get() != constants.Env.DEV or gateway_url() is not None:
        return
    try:
        database.migrate()
    except database.DatabaseUnavailable as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", exc)  # password hidden
    except sqlalchemy.exc.SQLAlchemyError as exc:
        logger.error("Could not bring the local gateway's database up to date: %s", type(exc).__name__)


# --- The ASGI app. ---


def _error(status: int, message: str, details: Any = None) -> JSONResponse:
    content: dict[str, Any] = {"error": message}
    if details is not None:
        content["details"] = details
    return JSONResponse(content, status_code=status)


async def _read_json(request: Request) -> Any | JSONResponse:
    """The request's JSON body, or the error response that refuses it."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "Content-Type must be application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        return _error(413, f"Body must be at most {MAX_BODY_BYTES} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return _error(413, f"Body must be at most {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _error(422, "Body must be valid JSON")


def _validation_details(exc: ValidationError) -> list[dict[str, str]]:
    # Field paths and reasons only: never echo the submitted values back.
    return [{"field": ".".join(str(p) for p in err["loc"]) or "body", "problem": err["msg"]} for err in exc.errors()]


def create_app(db_url: str | None = None) -> Starlette:
    """The local gateway's ASGI app, storing into ``db_url`` (Reflex's ``db_url`` by default)."""

    async def handle(request: Request, schema: type[_Body], store) -> JSONResponse:
        payload = await _read_json(request)
        if isinstance(payload, JSONResponse):
            return payload
        if not isinstance(payload, dict):
            return _error(422, "Body must be a JSON object")
        try:
            body = schema.model_validate(payload)
        except ValidationError as exc:
            return _error(422, "Invalid request body", _validation_details(exc))
        try:
            result = await run_in_threadpool(store, body, db_url)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            logger.error(
                "Local gateway could not store %s: %s (is the database up, and did `publisher-gateway migrate` run?)",
                request.url.path,
                type(exc).__name__,
            )
            return _error(503, "Storage unavailable")
        return JSONResponse(result)

    async def subscribe(request: Request) -> JSONResponse:
        def store(body: SubscribeRequest, url: str | None) -> dict[str, str]:
            added = store_subscription(body, url)
            return {"status": "subscribed" if added else "already subscribed"}

        return await handle(request, SubscribeRequest, store)

    async def send_email(request: Request) -> JSONResponse:
        def store(body: SendEmailRequest, url: str | None) -> dict[str, str]:
            store_message(body, url)
            return {"status": "received"}

        return await handle(request, SendEmailRequest, store)

    return Starlette(
        routes=[
            Route(SUBSCRIBE_PATH, subscribe, methods=["POST"]),
            Route(SEND_EMAIL_PATH, send_email, methods=["POST"]),
        ]
    )


# --- The operator's command. ---

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _csv_safe(value: str) -> str:
    """Keep spreadsheet programs from running a subscriber's name as a formula."""
    return "'" + value if value.startswith(_FORMULA_PREFIXES) else value


def write_subscribers_csv(subscribers: list[Subscriber], out) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["email", "name", "book_updates", "subscribed_at"])
    for row in subscribers:
        writer.writerow(
            [_csv_safe(row.email), _csv_safe(row.name), row.book_updates, row.subscribed_at.isoformat()]
        )


def write_messages(messages: list[ContactMessage], out) -> None:
    if not messages:
        out.write("No messages.\n")
    for row in messages:
        out.write(
            f"#{row.id}  {row.received_at.isoformat()}\n"
            f"From: {row.sender_name} <{row.sender_email}>\n"
            f"Subject: {row.subject}\n\n{row.message}\n\n"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="publisher-gateway",
        description="The embedded local gateway's database (REFLEX_DB_URL / rxconfig.py): "
        "bring its schema up to date, or read what was stored.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "migrate",
        help="create or update the tables (the release step; safe while other containers start or run)",
    )
    commands.add_parser("subscribers", help="export the email list as CSV to standard output")
    commands.add_parser("messages", help="list the contact messages, oldest first")
    args = parser.parse_args(argv)
    try:
        if args.command == "migrate":
            database.check()
            database.migrate()
            print(f"publisher-gateway: the database at {database.redacted(database.configured_url())} is up to date.")
        elif args.command == "subscribers":
            write_subscribers_csv(list_subscribers(), sys.stdout)
        else:
            write_messages(list_messages(), sys.stdout)
    except database.DatabaseUnavailable as exc:
        print(f"publisher-gateway: {exc}", file=sys.stderr)
        return 1
    except sqlalchemy.exc.SQLAlchemyError as exc:
        print(f"publisher-gateway: cannot use the database: {exc.__class__.__name__}. "
              "Run `publisher-gateway migrate` first.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
