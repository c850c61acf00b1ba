"""Release day as compose.yaml runs it (issue 50): two site replicas of the image on one PostgreSQL and one
Redis, serving the release copy's content and build (tests/release_book.py) mounted read-only over their
own, their clock moved by the host's libfaketime. Before the moment the page takes names without
JavaScript; at it both replicas flip with no rebuild or restart, and the waiting reader gets one email."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from publisher.storage import tables
from tests.container.test_scale_out import compose_stack
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.embedded.test_list import emails_to
from tests.embedded.test_release_day import (
    MOMENT,
    WAITED_SUBJECT,
    is_coming,
    press_confirmation,
    wait_plainly,
)
from tests.postgres import PostgresServer
from tests.release_book import ServerClock, release_project
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import FORM_SECRET, wait_until

# Where the image keeps what publisher-serve reads (Dockerfile): the installed app's content, the build.
IMAGE_BOOKS = "/venv/lib/python3.11/site-packages/publisher/content/books.py"
IMAGE_WEB = "/app/.web"
READER = "plain@release.example"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


def test_two_replicas_take_names_flip_at_the_moment_and_the_waiting_reader_gets_one_email(
    image: str, postgres: PostgresServer, smtp: SmtpServer, tmp_path: Path
):
    copy = release_project(tmp_path / "build.log")
    shared = tmp_path / "clock"
    shared.mkdir()
    shared.chmod(0o755)  # read by the image's user
    clock = ServerClock(shared / "clock", MOMENT - timedelta(minutes=30))
    (tmp_path / "redis").mkdir()
    variables = {**smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS), "PUBLISHER_FORM_SECRET": FORM_SECRET}
    mounts = {
        str(copy / "publisher" / "content" / "books.py"): IMAGE_BOOKS,
        str(copy / ".web" / "build" / "client"): f"{IMAGE_WEB}/build/client",
        str(copy / ".web" / "backend"): f"{IMAGE_WEB}/backend",
        clock.library: clock.library,
        str(shared): str(shared),
    }
    with compose_stack(image, postgres, tmp_path / "redis", variables, env=clock.env, mounts=mounts) as stack:
        sites = stack.sites
        first, second = sites
        assert is_coming(first) and is_coming(second)  # the coming words, the form, the pre-order button alone

        wait_plainly(first, READER)  # the form's POST without JavaScript on one replica: 303
        press_confirmation(smtp, second, READER)  # the confirmation names the book; pressed on the other

        clock.set(MOMENT + timedelta(seconds=1))
        for site in sites:
            wait_until(lambda site=site: not is_coming(site), 30, f"{site.name} to show the book out")
        finished = f"SELECT count(*) FROM campaign WHERE status = '{tables.FINISHED}'"
        wait_until(lambda: postgres.execute(finished, stack.database)[0][0] == 1, DELIVERY_TIMEOUT_S, "the send")
        subjects = [r.message["Subject"] for r in emails_to(smtp, READER)[1:]]
        assert subjects == [WAITED_SUBJECT]  # one email from two replicas
