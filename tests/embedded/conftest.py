"""The site as `make run` serves it: no PUBLISHER_GATEWAY_URL, so the embedded local gateway; a pytest
invocation apart from tests/site, serving the same build."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from publisher.mail import outbox
from publisher.storage import queue, tables
from tests.imap import DovecotServer
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import ProductionServer, running_server

CREDENTIALS = ("site@animals.example", "relay password")
# A stored email is delivered at once, or at the first retry (15 s) plus a poll (5 s) when SMTP was down.
DELIVERY_TIMEOUT_S = outbox.RETRY_DELAYS[0].total_seconds() + outbox.POLL_INTERVAL_S + 20


@pytest.fixture(scope="session")
def smtp() -> Iterator[SmtpServer]:
    """The relay the sites with email use (AUTH required); a test that stops it starts it again."""
    server = SmtpServer(credentials=CREDENTIALS).start()
    yield server
    server.stop()


# What comes back: the mail site reads a folder of its own in the tests' Dovecot, every second.
BOUNCE_FOLDER = "Bounces"
BOUNCE_HOOK_SECRET = "bounce-hook-secret-for-the-tests-0123456789"


@pytest.fixture(scope="session")
def mail_site(
    built_site, smtp: SmtpServer, dovecot: DovecotServer, tmp_path_factory
) -> Iterator[tuple[ProductionServer, str]]:
    """publisher-serve emailing through ``smtp``, on SQLite, with the new-subscriber notice on,
    reading its bounce folder in ``dovecot``. The one server of the suite with the spec's real
    five-second fill time (tests/support.py lowers it elsewhere): its contact test takes them."""
    workdir = tmp_path_factory.mktemp("mail-site")
    db_url = f"sqlite:///{workdir / 'mail.db'}"
    # A reader's own email in the folder, which the site must leave alone (and which makes the folder).
    dovecot.append(b"From: Jo <jo@example.org>\r\nSubject: Hello\r\n\r\nWhen is the next book out?\r\n", BOUNCE_FOLDER)
    env = {
        **smtp.mail_env(PUBLISHER_NOTIFY_SUBSCRIBERS="1", PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS),
        "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example",
        "PUBLISHER_BOUNCE_MAILBOX": dovecot.url(BOUNCE_FOLDER),
        "PUBLISHER_BOUNCE_CA_FILE": str(dovecot.ca_file),
        "PUBLISHER_BOUNCE_POLL_S": "1",
        "PUBLISHER_BOUNCE_WEBHOOK_SECRET": BOUNCE_HOOK_SECRET,
        "PUBLISHER_GATEWAY_URL": "",
        "PUBLISHER_MIN_FILL_TIME_MS": "",
        "REFLEX_DB_URL": db_url,
    }
    with running_server(workdir, env) as server:
        yield server, db_url


def delivered(db_url: str) -> bool:
    """Nothing left to send: every email stored is sent (or no longer wanted)."""
    return queue.list_deliveries((tables.PENDING, tables.FAILED), db_url) == []
