"""The embedded gateway: the list taking both calls, storage, failures and the operator's command."""

from __future__ import annotations

import csv
import io

import pytest
import sqlalchemy

from publisher import gateway, mailing_list
from publisher.rules import form_fields
from publisher.rules.form_fields import Form, FormField, TextRule
from publisher.storage import tables
from publisher.storage.tables import Subscriber
from publisher.web import submissions
from tests.support import publisher_gateway


def count_rows(db_url: str, table: str) -> int:
    with tables.engine(db_url).connect() as connection:
        return connection.execute(sqlalchemy.text(f"SELECT COUNT(*) FROM {table}")).scalar_one()


# What the forms' judges hand the gateway (web/submissions.py), and what the contact form's call stores.
SUBSCRIPTION = {"email": "jo@example.com", "name": "Jo Reader"}
CONTACT = {
    "firstName": "Jo",
    "lastName": "Reader",
    "email": "jo@example.com",
    "message": "When is the next book out?\nThanks!",
}
MESSAGE = tables.ContactMessage(
    sender_name="Jo Reader",
    sender_email="jo@example.com",
    subject="Contact Form Submission from Jo Reader",
    message="When is the next book out?\nThanks!",
)


def embedded_for(db_url: str, mail=None) -> mailing_list.EmbeddedList:
    return mailing_list.EmbeddedList(mail=mail, db_url=db_url)


@pytest.mark.asyncio
async def test_the_embedded_gateway_takes_both_requests_a_repeat_adds_no_row_and_the_command_exports_them(db_url):
    local = embedded_for(db_url)
    await local.subscribe({**SUBSCRIPTION, "name": '=HYPERLINK("x")'})
    await local.subscribe({"email": "JO@example.com", "name": "Jo R"})  # taken all the same
    await local.subscribe({"email": "ann@example.com", "name": "Ann Other"})
    await local.send_email(CONTACT)
    [message] = tables.list_messages(db_url)
    assert message.model_dump(exclude={"id", "received_at"}) == MESSAGE.model_dump(exclude={"id", "received_at"})

    # The operator's command, on connections of its own, reads what the gateway stored.
    exported = publisher_gateway(db_url, "subscribers")
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(r["email"], r["name"], r["book_updates"]) for r in rows] == [
        ("jo@example.com", '\'=HYPERLINK("x")', "yes"),  # neutralized for spreadsheets
        ("ann@example.com", "Ann Other", "yes"),
    ]
    listed = publisher_gateway(db_url, "messages")
    assert "From: Jo Reader <jo@example.com>" in listed.stdout
    assert "Subject: Contact Form Submission from Jo Reader" in listed.stdout
    assert "When is the next book out?\nThanks!" in listed.stdout


@pytest.mark.asyncio
async def test_missing_tables_fail_the_call_and_the_command_naming_the_fix(empty_db_url, caplog):
    with pytest.raises(mailing_list.ListUnavailable):
        await embedded_for(empty_db_url).subscribe(SUBSCRIPTION)
    assert "did `publisher-gateway migrate` run?" in caplog.text
    result = publisher_gateway(empty_db_url, "subscribers", check=False)
    assert result.returncode == 1
    assert "Run `publisher-gateway migrate` first." in result.stderr


@pytest.mark.asyncio
async def test_both_forms_delivery_succeeds_or_fails_as_the_visitor_is_told(db_url, empty_db_url):
    """web/submissions.send (the toast and the plain POST's page follow it): never an exception."""
    for url, taken in ((db_url, True), (empty_db_url, False)):
        gateway.shared_gateway.set(embedded_for(url))
        try:
            assert await submissions.send(submissions.SUBSCRIBE.name, SUBSCRIPTION) is taken
            assert await submissions.send(submissions.CONTACT.name, CONTACT) is taken
        finally:
            gateway.shared_gateway.set(None)
    assert count_rows(db_url, "subscriber") == 1 and count_rows(db_url, "contact_message") == 1


def test_the_embedded_gateway_is_chosen_only_when_no_url_is_set(monkeypatch):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    assert isinstance(gateway.configured_gateway(), mailing_list.EmbeddedList)
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://abc123.execute-api.us-east-1.amazonaws.com")
    monkeypatch.setenv("PUBLISHER_GATEWAY_API_KEY", "secret-key")
    cloud = gateway.configured_gateway()
    assert isinstance(cloud, gateway.GatewayClient)
    assert (cloud.base_url, cloud.api_key) == ("https://abc123.execute-api.us-east-1.amazonaws.com", "secret-key")


@pytest.mark.parametrize(
    ("mode", "gateway_url", "migrates"),
    [("dev", "", True), ("prod", "", False), ("dev", "https://gw.example.com", False)],
)
def test_only_the_development_server_with_the_local_gateway_migrates_at_start(monkeypatch, mode, gateway_url, migrates):
    # `reflex run` on a fresh clone needs no `migrate` first; publisher-serve migrates before it forks.
    calls = []
    monkeypatch.setattr(mailing_list.database, "migrate", lambda: calls.append("migrate"))
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", gateway_url)
    monkeypatch.setenv("REFLEX_ENV_MODE", mode)
    mailing_list.migrate_on_development_start()
    assert calls == (["migrate"] if migrates else [])


def test_a_database_error_at_start_is_logged_not_raised_and_without_the_password(monkeypatch, caplog):
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    url = "postgresql+psycopg://publisher:s3cret@127.0.0.1:1/site"
    monkeypatch.setattr(mailing_list.database, "configured_url", lambda: url)
    mailing_list.migrate_on_development_start()
    masked = "could not migrate the database at REFLEX_DB_URL (postgresql+psycopg://publisher:***@127.0.0.1:1/site)"
    assert masked in caplog.text and "s3cret" not in caplog.text

    def broken():
        raise sqlalchemy.exc.OperationalError("connect", {}, Exception("refused"))

    monkeypatch.setattr(mailing_list.database, "migrate", broken)
    mailing_list.migrate_on_development_start()
    assert "Could not bring the local gateway's database up to date: OperationalError" in caplog.text


@pytest.fixture
def company_stored(db_url, monkeypatch):
    """docs/content.md's recipe for a stored field: declared stored, its column in the table and the database."""
    company = FormField(
        "companyName", "Company", TextRule("Company", "Please enter your company", "Too short"), stored=True
    )
    monkeypatch.setattr(form_fields, "SUBSCRIBE", Form("subscribe", (*form_fields.SUBSCRIBE.fields, company)))
    column = sqlalchemy.Column("company_name", sqlalchemy.String, nullable=True)
    Subscriber.__table__.append_column(column)  # type: ignore[attr-defined]
    engine = sqlalchemy.create_engine(db_url)
    with engine.begin() as connection:
        connection.execute(sqlalchemy.text("ALTER TABLE subscriber ADD COLUMN company_name VARCHAR"))
    yield engine
    Subscriber.__table__._columns.remove(column)  # type: ignore[attr-defined]
    engine.dispose()


@pytest.mark.asyncio
async def test_a_field_declared_stored_is_kept_by_the_list_in_its_column(db_url, company_stored):
    local = embedded_for(db_url)
    await local.subscribe({**SUBSCRIPTION, "companyName": "Acme Books"})
    with company_stored.connect() as connection:
        kept = connection.execute(sqlalchemy.text("SELECT email, name, company_name FROM subscriber")).all()
    assert [tuple(row) for row in kept] == [("jo@example.com", "Jo Reader", "Acme Books")]
