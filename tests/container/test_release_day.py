"""Release day in the image (issue 50): the suite's image serving the release copy's content and build
(tests/release_book.py) mounted read-only over its own, its clock moved by the host's libfaketime. Before
the moment the book's page takes names without JavaScript and the confirmation names the book; past it the
page, Home and the feed show the book out, with no rebuild or restart."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from tests.containers import Container
from tests.embedded.conftest import DELIVERY_TIMEOUT_S
from tests.embedded.test_release_day import BOOK, MOMENT, arrived, is_coming, wait_plainly
from tests.release_book import ServerClock, release_project
from tests.smtp import POSTAL_ADDRESS, SmtpServer
from tests.support import wait_until

# Where the image keeps what publisher-serve reads (Containerfile): the installed app's content, the build.
IMAGE_BOOKS = "/venv/lib/python3.11/site-packages/publisher/content/books.py"
IMAGE_WEB = "/app/.web"
READER = "plain@release.example"


def test_in_the_image_a_forthcoming_book_takes_names_and_flips_at_its_moment(
    image: str, containers: Callable[..., Container], tmp_path: Path
):
    copy = release_project(tmp_path / "build.log")
    shared = tmp_path / "clock"
    shared.mkdir()
    shared.chmod(0o755)  # read by the image's user
    clock = ServerClock(shared / "clock", MOMENT - timedelta(minutes=30))
    mounts = {
        str(copy / "publisher" / "content" / "books.py"): IMAGE_BOOKS,
        str(copy / ".web" / "build" / "client"): f"{IMAGE_WEB}/build/client",
        str(copy / ".web" / "backend"): f"{IMAGE_WEB}/backend",
        clock.library: clock.library,
        str(shared): str(shared),
    }
    smtp = SmtpServer().start()
    try:
        env = {**smtp.mail_env(PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS), **clock.env}
        site = containers(image, env=env, mounts=mounts)
        assert is_coming(site)  # the coming words, the form, the pre-order button alone, not in the feed

        wait_plainly(site, READER)  # the form's POST without JavaScript: 303
        wait_until(lambda: arrived(smtp, READER), DELIVERY_TIMEOUT_S, "the confirmation")
        [confirmation] = arrived(smtp, READER)
        assert BOOK.title in confirmation.message.get_body(("plain",)).get_content()

        clock.set(MOMENT + timedelta(seconds=1))
        wait_until(lambda: not is_coming(site), 30, "the page, Home and the feed to show the book out")
    finally:
        smtp.stop()
