"""A forthcoming test book in a copy of the project (under ~/.cache: built again only when it changes), and
running servers' clock moved by Debian's libfaketime (docs/testing.md, Release day on a moved clock)."""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import time
from datetime import datetime
from pathlib import Path

from publisher.content.authors import MAYA
from publisher.content.models import Book, Release
from tests.support import COPIED, PROJECT_ROOT, TEST_SITE_URL, build_site, copy_project

FIELDS = {
    "slug": "seal-or-sea-lion",
    "title": "Seal or Sea Lion? A Test Release",
    "subtitle": "A Book the Tests Declare",
    "caption": "Test book, ages 5 and up",
    "description": "Ear flaps, flippers and a bark: the book the release-day tests wait for.",
    "book_link": "https://www.amazon.com/s?k=Seal+or+Sea+Lion+test+release",
    "preorder_link": "https://www.amazon.com/s?k=Seal+or+Sea+Lion+preorder",
    "cover_image": "/images/covers/word-search-book.svg",
    "image_alt": "Cover of Seal or Sea Lion?: a letter grid",
    "author_names": (MAYA.name,),
}
# Fixed, so the copy's content (and its build) is the same at every run; the servers' clock is moved to it.
MOMENT = datetime(2031, 6, 2, 9, 0)
ZONE = "Europe/London"


def test_book() -> Book:
    return Book(**FIELDS, release=Release(at=MOMENT, zone=ZONE))


test_book.__test__ = False  # type: ignore[attr-defined]  # not a test, whatever its name


def book_source() -> str:
    """What appending the test book to publisher/content/books.py takes."""
    return (
        "\nfrom datetime import datetime as _datetime\n"
        "from publisher.content.models import Release as _Release\n"
        f"BOOKS = (*BOOKS, Book(**{FIELDS!r}, release=_Release(at=_datetime.fromisoformat({MOMENT.isoformat()!r}),"
        f" zone={ZONE!r})))\n"
    )


RELEASE_SITE = (
    Path.home() / ".cache" / "publisher" / f"release-site-{hashlib.sha1(bytes(PROJECT_ROOT)).hexdigest()[:8]}"
)


def release_project(log_path: Path) -> Path:
    """This checkout copied with the test book in its content, built (when its inputs changed) for the tests."""
    RELEASE_SITE.mkdir(parents=True, exist_ok=True)
    with (RELEASE_SITE.parent / f"{RELEASE_SITE.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs of one checkout share the copy
        # What the copy is made of: what copy_project copies, as it stands in this checkout, and the book.
        digest = hashlib.sha256(book_source().encode())
        for name in COPIED:
            top = PROJECT_ROOT / name
            for path in sorted(top.rglob("*")) if top.is_dir() else [top]:
                if path.is_file() and "__pycache__" not in path.parts:
                    digest.update(bytes(path.relative_to(PROJECT_ROOT)) + b"\0" + path.read_bytes())
        copied_from, source = RELEASE_SITE / "copied-from", digest.hexdigest()
        if not copied_from.is_file() or copied_from.read_text() != source:  # else servers may run from it
            copy_project(RELEASE_SITE)
            books = RELEASE_SITE / "publisher" / "content" / "books.py"
            books.write_text(books.read_text() + book_source())
            copied_from.write_text(source)
        build_site(log_path, TEST_SITE_URL, root=RELEASE_SITE)
    return RELEASE_SITE


class ServerClock:
    """The clock of every process started with ``env``, only ever moved forward (monotonic clocks move too:
    FAKETIME_DONT_FAKE_MONOTONIC breaks Python 3.11's time.sleep in libfaketime 0.9.10)."""

    def __init__(self, path: Path, now: datetime):
        found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
        if not found:
            raise RuntimeError("Debian's libfaketime is missing. Install it as root:\n  apt-get install -y libfaketime")
        self.library = found[0]
        self.path = path
        self.offset_s = 0.0
        self.set(now)

    @property
    def env(self) -> dict[str, str]:
        return {"LD_PRELOAD": self.library, "FAKETIME_TIMESTAMP_FILE": str(self.path), "FAKETIME_NO_CACHE": "1"}

    def set(self, now: datetime) -> None:
        offset_s = now.timestamp() - time.time()
        assert offset_s >= self.offset_s, f"the servers' clock only moves forward: {now} is behind it"
        self.offset_s = offset_s
        written = self.path.with_suffix(".new")
        written.write_text(f"{offset_s:+.3f}\n")
        os.replace(written, self.path)  # a clock call never reads half a file
