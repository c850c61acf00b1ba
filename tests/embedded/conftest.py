"""The site as `make run` serves it: no PUBLISHER_GATEWAY_URL, so the embedded local gateway; a pytest
invocation apart from tests/site, serving the same build."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from publisher.mail import outbox
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


@pytest.fixture(scope="session")
def mail_site(built_site, smtp: SmtpServer, tmp_path_factory) -> Iterator[tuple[ProductionServer, str]]:
    """publisher-serve emailing through ``smtp``, on SQLite, with the new-subscriber notice on. The one
    server of the suite with the spec's real five-second fill time (tests/support.py lowers it
    elsewhere): its journey's contact message takes them."""
    workdir = tmp_path_factory.mktemp("mail-site")
    db_url = f"sqlite:///{workdir / 'mail.db'}"
    env = {
        **smtp.mail_env(PUBLISHER_NOTIFY_SUBSCRIBERS="1", PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS),
        "PUBLISHER_GATEWAY_URL": "",
        "PUBLISHER_MIN_FILL_TIME_MS": "",
        "REFLEX_DB_URL": db_url,
    }
    with running_server(workdir, env) as server:
        yield server, db_url
