"""`publisher-gateway announce` as the operator runs it, against aiosmtpd, on SQLite: every confirmed reader
once beside the site's workers, one-click unsubscribe, a repeat, the command killed and run again, and two
commands sending one campaign (its refusals and test copy: tests/services/test_campaign.py)."""

from __future__ import annotations

import collections
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from publisher.content import books
from publisher.mail import outbox
from publisher.storage import campaigns, tables
from tests.smtp import POSTAL_ADDRESS, Received, SmtpServer
from tests.support import ProductionServer, announce_process, publisher_gateway, running_server, wait_until

POSTAL = POSTAL_ADDRESS
FORM = {"content-type": "application/x-www-form-urlencoded"}
SLUGS = [book.slug for book in books.BOOKS]


def list_csv(path: Path, domain: str, confirmed: int, pending: int = 0, unsubscribed: int = 0) -> Path:
    lines = ["email,name,status"]
    for status, count in (("confirmed", confirmed), ("pending", pending), ("unsubscribed", unsubscribed)):
        lines += [f"{status}{n}@{domain},Reader {n},{status}" for n in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def to_domain(smtp: SmtpServer, domain: str) -> list[Received]:
    return [r for r in smtp.received if any(a.endswith(f"@{domain}") for a in r.rcpt_tos)]


def addresses(received: list[Received]) -> list[str]:
    return [address for r in received for address in r.rcpt_tos]


@pytest.fixture(scope="module")
def list_site(built_site, smtp, tmp_path_factory) -> Iterator[tuple[ProductionServer, str, str]]:
    """A running site of its own that keeps the list on SQLite (its workers send releases too), its
    database, and the domain of this test's readers."""
    workdir = tmp_path_factory.mktemp("campaign")
    db_url = f"sqlite:///{workdir / 'campaign.db'}"
    env = {**smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL), "PUBLISHER_GATEWAY_URL": "", "REFLEX_DB_URL": db_url}
    with running_server(workdir, env) as site:
        yield site, db_url, "sqlite.campaign.example"


def test_announce_reaches_every_confirmed_reader_once_who_can_unsubscribe_with_one_click(list_site, smtp, tmp_path):
    server, db_url, domain = list_site
    env = smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL)
    book = books.BOOKS[0]
    imported = publisher_gateway(db_url, "import", str(list_csv(tmp_path / "list.csv", domain, 25, 3, 2)), env=env)
    assert "No email was sent." in imported.stderr

    confirmed = publisher_gateway(db_url, "subscribers", "--status", "confirmed").stdout.count("\n") - 1
    assert confirmed == 25  # this site's list is this test's
    sent = publisher_gateway(db_url, "announce", book.slug, "--yes", env=env)
    assert f"Recipients: {confirmed} confirmed readers" in sent.stderr
    assert f"finished: {confirmed} sent, 0 failed" in sent.stderr
    releases = to_domain(smtp, domain)
    assert sorted(addresses(releases)) == sorted(f"confirmed{n}@{domain}" for n in range(25))  # once each
    campaigns = publisher_gateway(db_url, "campaigns", env=env).stdout
    assert f"{book.slug}  FINISHED" in campaigns and f"{confirmed} recipients: {confirmed} sent, 0 failed" in campaigns

    # As a reader's mail client sees it: two parts, the one-click header, the footer.
    message = releases[0].message
    assert message["Subject"] == f"New from Animals We Confuse: {book.title}"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    text = message.get_body(("plain",)).get_content()
    assert POSTAL in text and f"{book.book_link}" in text
    assert message.get_body(("html",)) is not None

    # The mail provider's one-click unsubscribe, from the release email, on the running site.
    link = message["List-Unsubscribe"].removeprefix("<").removesuffix(">")
    assert link in text
    path = link.split("://", 1)[1].split("/", 1)[1]
    with httpx.Client(timeout=10) as provider:
        answer = provider.post(f"{server.base_url}/{path}", content=b"List-Unsubscribe=One-Click", headers=FORM)
    assert (answer.status_code, answer.text) == (200, "Unsubscribed.")
    reader = releases[0].rcpt_tos[0]
    statuses = publisher_gateway(db_url, "subscribers", "--status", "unsubscribed").stdout
    assert reader in statuses

    count = len(smtp.received)
    again = publisher_gateway(db_url, "announce", book.slug, "--yes", env=env)
    assert f"{book.title} was already announced on " in again.stderr
    assert f"{confirmed} emails went out. Nothing was sent." in again.stderr
    assert len(smtp.received) == count


@pytest.fixture
def fresh_db(tmp_path) -> str:
    """An empty, migrated database for one test's campaign alone (SQLite: the claims' SQL on
    PostgreSQL is tests/services/test_campaign.py's, a dead sender and two at once among them)."""
    url = f"sqlite:///{tmp_path / 'campaign.db'}"
    publisher_gateway(url, "migrate")
    return url


@pytest.fixture
def relay():
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("started_by", ["announce", "its release moment"])
def test_killed_mid_campaign_then_run_again_nobody_is_missed(fresh_db, relay, tmp_path, started_by):
    """Started by the command, or at a forthcoming book's moment (as a site's worker starts it): one way of
    sending, which the command follows, killed, then again."""
    readers = 300
    publisher_gateway(fresh_db, "import", str(list_csv(tmp_path / "list.csv", "kill.example", readers)))
    env = relay.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL, PUBLISHER_SEND_RATE="60")
    if started_by == "its release moment":
        campaigns.ensure_scheduled(SLUGS[1], "It's out", tables.utc_now(), fresh_db)
        [started] = campaigns.start_due(tables.utc_now(), "<{}@kill.example>".format, outbox.RETRY_FOR, fresh_db)
        assert started.recipients == readers
    command = announce_process(fresh_db, env, SLUGS[1], tmp_path / "first.log")
    try:
        relay.wait_for(60, timeout=60)
    finally:
        command.send_signal(signal.SIGKILL)
        command.wait(timeout=10)
    assert len(relay.received) < readers  # killed mid-campaign
    again = publisher_gateway(fresh_db, "announce", SLUGS[1], "--yes", env=env)
    assert "Continuing campaign #1" in again.stderr and f"finished: {readers} sent, 0 failed" in again.stderr
    counts = collections.Counter(addresses(relay.received))
    assert set(counts) == {f"confirmed{n}@kill.example" for n in range(readers)}  # nobody missed
    doubled = [address for address, times in counts.items() if times > 1]
    assert len(doubled) <= 1  # at most the one the server took in the instant of the kill
    for address in doubled:  # and it carries the same Message-ID, so it shows once
        assert len({r.message["Message-ID"] for r in relay.received if address in r.rcpt_tos}) == 1


def test_two_commands_sending_one_campaign_send_each_reader_once(fresh_db, relay, tmp_path):
    readers = 400
    publisher_gateway(fresh_db, "import", str(list_csv(tmp_path / "list.csv", "two.example", readers)))
    env = relay.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL, PUBLISHER_SEND_RATE="0")
    commands = [announce_process(fresh_db, env, SLUGS[2], tmp_path / f"command{n}.log") for n in range(2)]
    for command in commands:
        assert command.wait(timeout=120) == 0, (tmp_path / "command0.log").read_text()
    wait_until(lambda: len(relay.received) >= readers, 30, "every reader's email")
    counts = collections.Counter(addresses(relay.received))
    assert len(counts) == readers and max(counts.values()) == 1
    logs = [(tmp_path / f"command{n}.log").read_text() for n in range(2)]
    assert sum("emails queued" in log for log in logs) == 1  # one created it, the other continued it
    assert all(f"finished: {readers} sent" in log for log in logs)
