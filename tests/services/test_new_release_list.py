"""The new-release list: every transition, the 24-hour rule, import and erasure. Also on PostgreSQL
where the SQL differs: a sign-up's advisory lock and ON CONFLICT insert, and the migrations."""

from __future__ import annotations

import csv
import io
import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy
from sqlmodel import col

from publisher.config.settings import from_environ
from publisher.mail import outbox
from publisher.rules import form_fields
from publisher.rules.list_rules import ImportRefused, ListStatus, on_subscribe, read_import
from publisher.storage import queue, subscribers, tables
from publisher.storage.subscribers import SignUp
from publisher.storage.tables import Subscriber, SubscriptionEvent
from tests.databases import ON_BOTH_DATABASES, migrate_to
from tests.services.test_embedded_gateway import MESSAGE, count_rows
from tests.support import publisher_gateway
from tests.unit.test_list_links import MAIL_ENV

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
PENDING, CONFIRMED, UNSUBSCRIBED = ListStatus.PENDING, ListStatus.CONFIRMED, ListStatus.UNSUBSCRIBED
MAIL = from_environ(MAIL_ENV).mail


def body(email: str | None = None, name: str = "Jo Reader") -> SignUp:
    """A sign-up as the form's judge hands it on: checked, the address in its sendable form."""
    checked = form_fields.SUBSCRIBE.check({"name": name, "email": email or "jo@example.com"})
    assert checked.ok, checked.errors
    return SignUp(**checked.values)


def job() -> tables.Job:
    return outbox.job_for(MAIL)


def row(db_url: str, email: str = "jo@example.com") -> tables.Subscriber:
    return next(s for s in subscribers.list_subscribers(db_url=db_url) if s.email_key == email.lower())


def kinds(db_url: str) -> list[str]:
    return [d.kind for d in queue.list_deliveries((tables.PENDING, tables.SENT, tables.FAILED), db_url)]


def consent_record(email: str, db_url: str | None = None) -> list[sqlalchemy.Row]:
    """Every event on record for an address (event, how, detail, at), oldest first."""
    event = SubscriptionEvent
    statement = (
        sqlalchemy.select(col(event.event), col(event.how), col(event.detail), col(event.at))
        .join(Subscriber, col(Subscriber.id) == col(event.subscriber_id))
        .where(col(Subscriber.email_key) == form_fields.address_key(email))
        .order_by(col(event.id))
    )
    with tables.engine(db_url).connect() as connection:
        return list(connection.execute(statement))


def events(db_url: str, email: str = "jo@example.com") -> list[tuple[str, str]]:
    return [(e.event, e.how) for e in consent_record(email, db_url)]


def migrated_from(db_url: str, revision: str, *inserts: tuple[str, dict]) -> None:
    """The schema before ``revision`` holding ``inserts``, then the operator's ``migrate``."""
    migrate_to(db_url, revision)
    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.begin() as connection:
            for statement, values in inserts:
                connection.execute(sqlalchemy.text(statement), values)
    finally:
        engine.dispose()
    publisher_gateway(db_url, "migrate")


@pytest.mark.parametrize(
    ("current", "last_email", "emails_on", "expected"),
    [
        (None, None, True, (PENDING, True, True)),
        (PENDING, None, True, (PENDING, True, False)),
        (PENDING, T0 - timedelta(hours=23, minutes=59), True, (PENDING, False, False)),
        (PENDING, T0 - timedelta(hours=24), True, (PENDING, True, False)),
        (CONFIRMED, T0 - timedelta(days=30), True, (CONFIRMED, False, False)),
        (UNSUBSCRIBED, T0 - timedelta(hours=1), True, (PENDING, False, True)),
        (UNSUBSCRIBED, T0 - timedelta(days=2), True, (PENDING, True, True)),
        # Without SMTP nothing is ever sent and addresses stay pending.
        (None, None, False, (PENDING, False, True)),
        (PENDING, None, False, (PENDING, False, False)),
        (UNSUBSCRIBED, None, False, (PENDING, False, True)),
    ],
)
def test_what_a_subscribe_request_does(current, last_email, emails_on, expected):
    step = on_subscribe(current, last_email, T0, emails_on=emails_on)
    assert (step.status, step.send_confirmation, step.joins) == expected


@pytest.mark.parametrize(
    "spelling",
    [lambda n: "jo@example.com", lambda n: f"{'Victim' if n % 2 else 'victim'}+{n}@Example.com"],
    ids=["one address", "tag spellings of one mailbox"],
)
def test_requests_within_a_day_send_one_confirmation_and_the_next_day_one_more(db_url, spelling):
    """The 24-hour rule counts per mailbox: ``victim+1@``, ``Victim+2@`` ... reach one inbox."""
    for n, minutes in enumerate((0, 1, 60, 23 * 60 + 59)):
        subscribers.subscribe(body(spelling(n)), job(), db_url, now=T0 + timedelta(minutes=minutes))
    assert kinds(db_url) == ["confirmation"]
    subscribers.subscribe(body(spelling(4)), job(), db_url, now=T0 + timedelta(hours=24))
    assert kinds(db_url) == ["confirmation", "confirmation"]
    stored = subscribers.list_subscribers(db_url=db_url)
    assert len(stored) == len({spelling(n).lower() for n in range(5)})  # every request on record, pending
    for row in stored:  # one subscription on record for each address, however often it asked
        assert events(db_url, row.email) == [("subscribed", "subscribe form")]


@ON_BOTH_DATABASES
@pytest.mark.parametrize("spelled", [False, True], ids=["one address", "spellings of one mailbox"])
def test_requests_at_once_store_one_row_per_address_and_send_one_email(db_url, spelled):
    barrier = threading.Barrier(20)
    outcomes = []

    def ask(n: int) -> None:
        barrier.wait()
        try:
            outcomes.append(subscribers.subscribe(body(f"victim+{n}@example.com" if spelled else None), job(), db_url))
        except sqlalchemy.exc.OperationalError:  # SQLite's one writer: a lost race is refused, not doubled
            outcomes.append("refused")

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert kinds(db_url) == ["confirmation"]
    if not spelled:
        assert sorted(outcomes) == ["added"] + [PENDING] * 19
        assert count_rows(db_url, "subscriber") == 1


@ON_BOTH_DATABASES
def test_a_new_address_is_pending_confirms_once_and_leaving_then_asking_again_keeps_the_history(db_url):
    assert subscribers.subscribe(body(), job(), db_url, now=T0) == "added"
    subscriber = row(db_url)
    assert (subscriber.status, subscriber.source, subscriber.subscribed_at) == (PENDING, "subscribe form", T0)
    assert (subscriber.confirmation_sent_at, kinds(db_url)) == (T0, ["confirmation"])
    assert events(db_url) == [("subscribed", "subscribe form")]
    key = subscriber.link_key
    result = subscribers.confirm(key, job(), job(), db_url, now=T0 + timedelta(hours=2))
    assert result == subscribers.LinkResult("confirmed", "jo@example.com")
    assert (row(db_url).status, row(db_url).confirmed_at) == (CONFIRMED, T0 + timedelta(hours=2))
    assert subscribers.confirm(key, job(), job(), db_url).outcome == "already confirmed"
    assert kinds(db_url) == ["confirmation", "welcome", "subscriber"]
    result = subscribers.unsubscribe(key, subscribers.BY_ONE_CLICK, db_url, now=T0 + timedelta(days=3))
    assert result.outcome == UNSUBSCRIBED
    assert (row(db_url).status, row(db_url).unsubscribed_at) == (UNSUBSCRIBED, T0 + timedelta(days=3))
    assert subscribers.unsubscribe(key, subscribers.BY_ONE_CLICK, db_url).outcome == "already unsubscribed"
    assert subscribers.confirm(key, job(), None, db_url).outcome == UNSUBSCRIBED  # an old confirmation link

    assert subscribers.subscribe(body(name="Jo R."), job(), db_url, now=T0 + timedelta(days=4)) == "rejoined"
    again = row(db_url)
    assert (again.status, again.name, again.confirmed_at, again.unsubscribed_at) == (PENDING, "Jo R.", None, None)
    assert again.link_key == key  # links in emails already sent keep working
    assert kinds(db_url) == ["confirmation", "welcome", "subscriber", "confirmation"]
    assert events(db_url) == [
        ("subscribed", "subscribe form"),
        ("confirmed", "confirmation link"),
        ("unsubscribed", "one-click unsubscribe"),
        ("subscribed", "subscribe form"),
    ]


def exported(db_url: str, *args: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(publisher_gateway(db_url, "subscribers", *args).stdout)))


def test_the_export_keeps_its_columns_and_another_site_imports_the_whole_file_or_nothing(db_url, tmp_path, template_db):
    subscribers.subscribe(body(), job(), db_url, now=T0)
    subscribers.subscribe(body("bo@example.com", "Bo"), job(), db_url, now=T0)
    subscribers.confirm(row(db_url, "bo@example.com").link_key, job(), None, db_url, now=T0)
    assert [(r["email"], r["status"], r["confirmed_at"]) for r in exported(db_url)] == [
        ("jo@example.com", "pending", ""),
        ("bo@example.com", "confirmed", T0.isoformat()),
    ]
    assert [r["email"] for r in exported(db_url, "--status", "confirmed")] == ["bo@example.com"]
    assert [r["email"] for r in exported(db_url, "--status", "unsubscribed")] == []
    export, other = tmp_path / "export.csv", tmp_path / "other.db"
    export.write_text("\ufeff" + publisher_gateway(db_url, "subscribers").stdout, encoding="utf-8")
    other.write_bytes(template_db.read_bytes())
    other_url = f"sqlite:///{other}"
    done = publisher_gateway(other_url, "import", str(export))
    assert done.stderr == (
        f"Imported {export}: 2 added, 0 updated, 0 unchanged, 0 kept unsubscribed, 0 kept bounced. No email was sent.\n"
    )
    imported = {s.email: s.status for s in subscribers.list_subscribers(db_url=other_url)}
    assert imported == {"jo@example.com": PENDING, "bo@example.com": CONFIRMED}
    again = publisher_gateway(other_url, "import", str(export))
    assert "0 added, 0 updated, 2 unchanged, 0 kept unsubscribed, 0 kept bounced." in again.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("email,name\ncy@example.com,Cy\nnot-an-address,Dee\n", encoding="utf-8")
    refused = publisher_gateway(other_url, "import", str(bad), "--status", "confirmed", check=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0].startswith(f"{bad}: line 3: 'not-an-address' is not an email address")
    assert refused.stderr.splitlines()[-1] == f"publisher-gateway: nothing imported from {bad}."
    assert len(subscribers.list_subscribers(db_url=other_url)) == 2


def test_an_import_reads_what_the_export_writes_with_a_bom_quotes_and_a_repeated_address():
    text = (
        "\ufeffemail,name,book_updates,subscribed_at,status,confirmed_at,unsubscribed_at\r\n"
        '"ann@example.com","Ann ""Annie"" Lee, PhD",yes,2026-01-01T00:00:00+00:00,confirmed,,\r\n'
        "bo@example.com,Bo,yes,,pending,,\r\n"
        "Ann@Example.com,Ann again,yes,,unsubscribed,,\r\n"  # the same address: the stronger word wins
        "leser@bücher.example,Leser,yes,,confirmed,,\r\n"  # an international domain: in ASCII
    )
    rows = read_import(text)
    assert [(r.email, r.name, r.status, r.line) for r in rows] == [
        ("ann@example.com", 'Ann "Annie" Lee, PhD', "unsubscribed", 2),
        ("bo@example.com", "Bo", "pending", 3),
        ("leser@xn--bcher-kva.example", "Leser", "confirmed", 5),
    ]


def test_a_file_without_a_status_column_needs_the_operator_to_say_which():
    text = "email,name\nann@example.com,Ann\n"
    assert [r.status for r in read_import(text, "confirmed")] == ["confirmed"]
    with pytest.raises(ImportRefused, match="no status column: say which with --status"):
        read_import(text)
    with pytest.raises(ImportRefused, match="--status is only for a file without one"):
        read_import("email,name,status\nann@example.com,Ann,pending\n", "confirmed")
    with pytest.raises(ImportRefused, match="the header has no email and no name column"):
        read_import("address,who\nann@example.com,Ann\n", "confirmed")


def test_every_bad_line_is_named_and_nothing_is_taken():
    text = (
        "email,name,status\n"
        "good@example.com,Good,confirmed\n"
        "not-an-address,Bad,confirmed\n"
        "x@example.com,X,maybe\n"
        f"y@example.com,{'N' * 101},pending\n"
        "z@example.com,,pending\n"
        f"{'a' * 250}@example.com,Long,pending\n"
        "extra@example.com,Extra,pending,surplus\n"
        "ünal@example.com,Ünal,confirmed\n"
    )
    with pytest.raises(ImportRefused) as refused:
        read_import(text)
    assert [problem.split(":")[0] for problem in refused.value.problems] == [f"line {n}" for n in range(3, 10)]
    assert "'not-an-address' is not an email address" in refused.value.problems[0]
    assert "unknown status 'maybe' (one of pending, confirmed, unsubscribed, bounced)" in refused.value.problems[1]
    assert "the name is longer than 100 characters" in refused.value.problems[2]
    assert "no name" in refused.value.problems[3]
    assert "longer than 254 characters" in refused.value.problems[4]
    assert "more fields than the header names" in refused.value.problems[5]
    assert refused.value.problems[6] == (
        "line 9: 'ünal@example.com' has a local part that is not ASCII, which needs SMTPUTF8 (not supported)"
    )


def test_an_import_never_brings_back_someone_who_left_nor_unconfirms_anyone(db_url):
    for email in ("left@example.com", "sure@example.com", "maybe@example.com"):
        subscribers.subscribe(body(email, "Reader"), job(), db_url, now=T0)
    subscribers.unsubscribe(row(db_url, "left@example.com").link_key, "test", db_url, now=T0)
    subscribers.confirm(row(db_url, "sure@example.com").link_key, job(), None, db_url, now=T0)
    deliveries_before = kinds(db_url)
    rows = read_import(
        "email,name,status\n"
        "left@example.com,Reader,confirmed\n"  # left: stays gone
        "sure@example.com,Reader,pending\n"  # confirmed: not made pending again
        "maybe@example.com,Reader,confirmed\n"  # pending -> confirmed: vouched for
        "new@example.com,New Reader,confirmed\n"
        "gone@example.com,Gone,unsubscribed\n"
    )
    report = subscribers.import_rows(rows, "import of list.csv", db_url, now=T0 + timedelta(days=1))
    assert str(report) == "2 added, 1 updated, 1 unchanged, 1 kept unsubscribed, 0 kept bounced."
    assert {s.email: s.status for s in subscribers.list_subscribers(db_url=db_url)} == {
        "left@example.com": UNSUBSCRIBED,
        "sure@example.com": CONFIRMED,
        "maybe@example.com": CONFIRMED,
        "new@example.com": CONFIRMED,
        "gone@example.com": UNSUBSCRIBED,
    }
    assert events(db_url, "new@example.com") == [("imported", "import of list.csv (confirmed)")]
    assert kinds(db_url) == deliveries_before  # an import sends no email


def test_forget_erases_the_address_its_messages_and_their_emails_and_nothing_else(db_url):
    subscribers.subscribe(body(), job(), db_url, now=T0)
    key = row(db_url).link_key
    subscribers.confirm(key, job(), job(), db_url, now=T0)
    subscribers.subscribe(body("bo@example.com", "Bo"), job(), db_url, now=T0)
    for sender in ("JO@example.com", "bo@example.com"):
        message = MESSAGE.model_copy(update={"sender_email": sender})
        tables.store_message(message, db_url, job())

    forgotten = publisher_gateway(db_url, "forget", "Jo@Example.com")
    assert forgotten.stderr == (
        "Jo@Example.com: Removed its place on the list (confirmed) with 2 consent events, "
        "1 contact message, 4 outbox emails.\n"
    )
    assert [s.email for s in subscribers.list_subscribers(db_url=db_url)] == ["bo@example.com"]
    assert [m.sender_email for m in tables.list_messages(db_url)] == ["bo@example.com"]
    assert sorted(kinds(db_url)) == ["confirmation", "contact"]  # Bo's
    assert consent_record("jo@example.com", db_url) == []
    nothing = publisher_gateway(db_url, "forget", "jo@example.com")
    assert nothing.stderr == "jo@example.com: Nothing is stored about that address.\n"

    assert subscribers.subscribe(body(), job(), db_url, now=T0 + timedelta(hours=1)) == "added"  # a stranger
    assert row(db_url).link_key != key  # and the old links lead nowhere: an unknown key changes nothing
    assert subscribers.unsubscribe(key, "test", db_url) is None
    assert subscribers.confirm(key, job(), None, db_url) is None
    assert subscribers.lookup(key, db_url) is None
    assert row(db_url).status == PENDING


@ON_BOTH_DATABASES
def test_subscribers_stored_before_the_list_kept_consent_become_pending_with_their_subscription_on_record(empty_db_url):
    """The upgrade of a site that already has subscribers: nothing is sent until they confirm."""
    insert = (
        "INSERT INTO subscriber (email, email_key, name, book_updates, subscribed_at) "
        "VALUES ('Old@Example.com', 'old@example.com', 'Old Reader', 'yes', :at)"
    )
    migrated_from(empty_db_url, "b6ae782661cd", (insert, {"at": T0}))
    old = row(empty_db_url, "old@example.com")
    assert (old.status, old.source) == (PENDING, "subscribe form")
    assert old.confirmed_at is None and old.confirmation_sent_at is None
    assert 16 <= len(old.link_key) <= tables.LINK_KEY_MAX
    assert [(e.event, e.how, e.at) for e in consent_record("old@example.com", empty_db_url)] == [
        ("subscribed", "subscribe form", T0)
    ]
    assert kinds(empty_db_url) == []  # nothing is sent to them until they confirm


def test_an_international_domain_is_stored_in_ascii_and_found_by_either_spelling(db_url):
    subscribers.subscribe(body("Leser@Bücher.example"), job(), db_url, now=T0)
    [stored] = subscribers.list_subscribers(db_url=db_url)
    assert stored.email == "Leser@xn--bcher-kva.example"
    assert stored.email_key == stored.mailbox_key == "leser@xn--bcher-kva.example"
    assert events(db_url, "leser@bücher.example") == [("subscribed", "subscribe form")]
    assert subscribers.subscribe(body("leser@xn--bcher-kva.example"), job(), db_url, now=T0) == "pending"


@ON_BOTH_DATABASES
def test_the_migration_mends_stored_addresses_and_fills_the_mailbox(empty_db_url):
    insert = (
        "INSERT INTO subscriber (email, email_key, name, book_updates, subscribed_at, status, source, link_key) "
        "VALUES (:email, :key, 'Reader', 'yes', :at, 'confirmed', 'form', :link)"
    )
    emails = ["a@bücher.example", "B+news@Example.com", "c@xn--caf-dma.example", "c@café.example"]
    message = (
        "INSERT INTO contact_message (sender_name, sender_email, subject, message, received_at) "
        "VALUES ('Jo', 'jo@bücher.example', 'Hi', 'Hello there', :at)"
    )
    migrated_from(
        empty_db_url,
        "c41d7a2e9b10",
        *[
            (insert, {"email": e, "key": e.lower(), "at": T0, "link": f"link-key-{n:08d}"})
            for n, e in enumerate(emails)
        ],
        (message, {"at": T0}),
    )
    stored = {
        s.link_key: (s.email, s.email_key, s.mailbox_key) for s in subscribers.list_subscribers(db_url=empty_db_url)
    }
    assert stored == {
        "link-key-00000000": ("a@xn--bcher-kva.example", "a@xn--bcher-kva.example", "a@xn--bcher-kva.example"),
        "link-key-00000001": ("B+news@Example.com", "b+news@example.com", "b@example.com"),
        "link-key-00000002": ("c@xn--caf-dma.example", "c@xn--caf-dma.example", "c@xn--caf-dma.example"),
        # Its ASCII spelling is another row's: kept as it was (the mailer still sends it in ASCII).
        "link-key-00000003": ("c@café.example", "c@café.example", "c@café.example"),
    }
    assert [m.sender_email for m in tables.list_messages(empty_db_url)] == ["jo@xn--bcher-kva.example"]
