"""benchmarks/house.py counts modules and wrappers right (its run on the build: tests/embedded/test_benchmarks.py)."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from publisher import returns
from publisher.rules import antispam, form_fields


@pytest.fixture
def house(benchmark):
    return benchmark("house")


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
    document.write_text("# Content\n\n## Adding a page\n\nEdit `publisher/web/pages/home.py`.\n")
    assert house.recipe_files(document) is None
    assert house.recipe_files(tmp_path / "missing.md") is None


def test_lines_of_python_count_blanks_and_comments_and_skip_hidden_folders_and_caches(house, tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n\n# a comment\n")
    for folder in ("sub", ".venv", "__pycache__"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "b.py").write_text("y = 2\nz = 3\n")
    (tmp_path / "notes.txt").write_text("not Python\n")
    assert house.python_lines(tmp_path) == (2, 5)


@pytest.fixture
def tracer(house):
    tracer = house.Tracer()
    tracer.install()
    yield tracer
    sys.setprofile(None)
    threading.setprofile(None)  # type: ignore[arg-type]


def test_frames_count_for_the_task_that_ran_them_or_handed_them_to_a_thread(house, tracer):

    async def loop_in_background(started: asyncio.Event, go_on: asyncio.Event) -> None:
        started.set()
        await go_on.wait()
        antispam.new_question()

    async def subscribe() -> None:
        await asyncio.to_thread(form_fields.check_email, "jo@example.org")

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
    assert tracer.modules_by_origin[subscribing] == {"publisher.rules.form_fields"}
    assert tracer.modules_by_origin[background] == {"publisher.rules.antispam"}
    assert tracer.counted({background}) == (["publisher.rules.form_fields"], ["publisher.rules.antispam"])
    tracer.smtp_origins.add(background)  # the loop that sends the email counts
    assert tracer.counted({background}) == (["publisher.rules.antispam", "publisher.rules.form_fields"], [])


def test_a_coroutine_suspended_before_and_resumed_is_not_a_module_crossed(house, tracer):
    """A module counts when one of its functions starts, not when a suspended coroutine resumes."""
    sent = []

    async def send_due() -> None:
        sent.append(len(sent))

    async def main():
        wake = asyncio.Event()
        sender = asyncio.create_task(returns.keep_running(send_due, "Test", 5.0, wake))
        await house.wait_until(lambda: sent == [0], "the first round")
        tracer.armed = True
        wake.set()  # keep_running resumes, and calls only send_due (this module's)
        await house.wait_until(lambda: sent == [0, 1], "the second round")
        tracer.armed = False
        sender.cancel()
        return sender

    sender = asyncio.run(main())
    assert "publisher.returns" not in tracer.modules_by_origin.get(sender, set())
    tracer.armed = True
    returns.trouble_delay(1)  # a function of the same module starting: it counts
    tracer.armed = False
    assert any("publisher.returns" in modules for modules in tracer.modules_by_origin.values())


class Wrapper:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)


class RouteTable:
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
