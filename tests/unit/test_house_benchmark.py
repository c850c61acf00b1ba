"""benchmarks/house.py, the house's figures (docs/performance.md, The house): how it counts.

The probe itself starts the site and an SMTP server (a process and sockets, not here); what it
counts with is tested here: lines, the form-field recipe, the tracer's attribution of frames
to the tasks that ran them, and the chain of ASGI wrappers a request passes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from pathlib import Path

import pytest

from publisher.mail import outbox
from publisher.rules import antispam, validation

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def house():
    spec = importlib.util.spec_from_file_location("house_benchmark", ROOT / "benchmarks" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_lines_are_physical_lines_of_python_files_blanks_and_comments_included(house, tmp_path: Path):
    (tmp_path / "a.py").write_text("# a comment\n\nx = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("y = 2")  # no newline at the end: still a line
    (tmp_path / "pkg" / "notes.md").write_text("not\npython\n")
    for skipped in ("__pycache__", ".hidden"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "c.py").write_text("z = 3\n")
    assert house.python_lines(tmp_path) == (2, 4)


RECIPE = """# Content

## Adding a page

Edit `publisher/web/pages/home.py`.

## Adding a field to a form

```sh
# Adding this: not a heading
```

1. Declare it in `publisher/web/forms.py`.
2. Its words in `publisher/content/form_copy.py`; again `publisher/web/forms.py`.
3. When it is stored: `publisher/storage/tables.py` and a migration in `alembic/versions/`.

### Checking it

Run `make check`.

## Adding a book

Edit `publisher/content/books.py`.
"""


def test_the_recipe_names_the_files_of_its_section_once_each(house, tmp_path: Path):
    document = tmp_path / "content.md"
    document.write_text(RECIPE)
    assert house.recipe_files(document) == [
        "publisher/web/forms.py",
        "publisher/content/form_copy.py",
        "publisher/storage/tables.py",
        "alembic/versions/",
    ]


def test_no_section_about_a_field_is_no_recipe(house, tmp_path: Path):
    document = tmp_path / "content.md"
    document.write_text("# Content\n\n## Adding a page\n\nEdit `publisher/web/pages/home.py`.\n")
    assert house.recipe_files(document) is None
    assert house.recipe_files(tmp_path / "missing.md") is None


@pytest.fixture
def tracer(house):
    tracer = house.Tracer()
    tracer.install()
    yield tracer
    sys.setprofile(None)
    threading.setprofile(None)  # type: ignore[arg-type]


def test_frames_count_for_the_task_that_ran_them_or_handed_them_to_a_thread(house, tracer):
    """A subscribe's task and the thread it hands work to count; a background loop's do not."""

    async def loop_in_background(started: asyncio.Event, go_on: asyncio.Event) -> None:
        started.set()
        await go_on.wait()
        antispam.subscribe_rejection(honeypot="")

    async def subscribe() -> None:
        await asyncio.to_thread(validation.check_email, "jo@example.org")

    async def main():
        started, go_on = asyncio.Event(), asyncio.Event()
        background = asyncio.create_task(loop_in_background(started, go_on))
        await started.wait()
        tracer.armed = True
        subscribing = asyncio.create_task(subscribe())
        go_on.set()
        await asyncio.gather(background, subscribing)
        tracer.armed = False
        return background, subscribing

    background, subscribing = asyncio.run(main())
    assert tracer.modules_by_origin[subscribing] == {"publisher.rules.validation"}
    assert tracer.modules_by_origin[background] == {"publisher.rules.antispam"}
    assert tracer.counted({background}) == (["publisher.rules.validation"], ["publisher.rules.antispam"])
    tracer.smtp_origins.add(background)  # the loop that sends the email counts
    assert tracer.counted({background}) == (["publisher.rules.antispam", "publisher.rules.validation"], [])


def test_a_coroutine_suspended_before_and_resumed_is_not_a_module_crossed(house, tracer):
    """A websocket's task resumes every wrapper it passed at its connection; they do no work for
    the message. A module counts when one of its functions starts."""
    sent = []

    async def send_due() -> None:
        sent.append(len(sent))

    async def main():
        wake = asyncio.Event()
        sender = asyncio.create_task(outbox.keep_sending(send_due, "Test", wake))
        await house.wait_until(lambda: sent == [0], "the first round")
        tracer.armed = True
        wake.set()  # keep_sending resumes, and calls only send_due (this module's)
        await house.wait_until(lambda: sent == [0, 1], "the second round")
        tracer.armed = False
        sender.cancel()
        return sender

    sender = asyncio.run(main())
    assert "publisher.mail.outbox" not in tracer.modules_by_origin.get(sender, set())
    tracer.armed = True
    outbox.trouble_delay(1)  # a function of the same module starting: it counts
    tracer.armed = False
    assert any("publisher.mail.outbox" in modules for modules in tracer.modules_by_origin.values())


class Wrapper:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)


class RouteTable:
    """Like Starlette's Router: its steps (``route``) are methods with the ASGI signature."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        await self.route(scope, receive, send)

    async def route(self, scope, receive, send):
        await self.app(scope, receive, send)


def function_wrapper(app):
    async def wrapped(scope, receive, send):
        await app(scope, receive, send)

    return wrapped


class Reflex:
    async def __call__(self, scope, receive, send):
        await send({"type": "http.response.start", "status": 200})


def test_a_request_passes_each_wrapper_between_the_site_and_reflex_once(house, tracer):
    inner = Reflex()
    outer = Wrapper(RouteTable(function_wrapper(Wrapper(inner))))
    top = Wrapper(outer)  # Reflex's own wrappers around the site's: not counted
    sent = []

    async def send(message):
        sent.append(message)

    tracer.record_asgi = tracer.armed = True
    asyncio.run(top({"type": "http", "path": "/"}, None, send))
    tracer.record_asgi = tracer.armed = False

    chain, reached = house.wrapper_chain(tracer.asgi_calls, outer, inner)
    assert reached and sent
    assert chain == [
        "tests.unit.test_house_benchmark.Wrapper",
        "tests.unit.test_house_benchmark.RouteTable",
        "tests.unit.test_house_benchmark.function_wrapper.<locals>.wrapped",
        "tests.unit.test_house_benchmark.Wrapper",
    ]
