"""The house: what a subscribe crosses, what a page request passes, how long the code is, and
what a new form field costs (issue 41's figures), for one checkout or several side by side.

For each checkout (``--checkout``, this one by default; give it several times for a table with
a column each):

a. the modules of ``publisher/`` a subscribe crosses, from the app's event or the plain POST to
   the SMTP send: the ``publisher.*`` modules one of whose functions starts (sys.setprofile,
   every thread) while one subscribe goes from the press to the confirmation email arriving at
   an aiosmtpd server on 127.0.0.1. The site runs as ``publisher-serve`` runs it: Reflex's
   production ASGI app with the compiled frontend mounted and its lifespan tasks (the outbox's
   sender among them), the embedded gateway on a throwaway SQLite database (``publisher-gateway
   migrate``), served by uvicorn in the measuring process on a free port of 127.0.0.1. The
   app's path is a real websocket visitor (tests/visitor.py) sending the subscribe state's
   ``submit`` event (the state found by its class's name, so renamed modules still count); the
   plain path POSTs /subscribe as a browser without JavaScript does, and gets its 303. One
   subscribe of each path runs first, unmeasured, so what a process does once (a client made,
   a connection opened) is not counted. A frame counts when it runs in a task or thread
   serving the subscribe: the background loops that were running before any visitor came (the
   campaign and notices loops, Reflex's own) are left out, except the one that sends the
   confirmation (it calls aiosmtplib): it is the outbox's sender. A coroutine suspended before
   and resumed during the subscribe (the wrappers a websocket passed when it opened) is not a
   function starting. The window closes when the email has arrived and the subscribe is over:
   the app's events processed, or every task the POST started finished.
b. the ASGI wrappers a page request (GET /) passes between Reflex's mount of the site's
   ``api_transformer`` result and Reflex's own app: each ASGI app object whose ``__call__``
   runs for the request, or plain function with the ASGI signature, in order.
c. lines of Python: physical lines (blank lines and comments included) of every ``*.py``
   file under ``publisher/`` and under ``tests/`` (caches and hidden folders left out).
d. files to add a form field: the files docs/content.md's recipe for a form field names
   (its section whose heading speaks of a field), or "no recipe".

a and b run in a subprocess with the checkout's own interpreter (``.venv/bin/python``) and its
own code first on the path, in the checkout's folder: each column measures its own code. The
checkout must be built (``make build``). Seconds a checkout.

    .venv/bin/python benchmarks/house.py [--checkout PATH ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import dis
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD_INDEX = Path(".web") / "build" / "client" / "index.html"
COUNTED_FOLDERS = ("publisher", "tests")
RECIPE_DOC = Path("docs") / "content.md"
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# A file a recipe names: a path with a folder and a suffix, or a migration's folder.
NAMED_FILE = re.compile(r"`([\w.-]+(?:/[\w.*<>{}-]+)+/?)`")
PROBE_TIMEOUT_S = 600
WAIT_S = 90


# --- c and d: read from the checkout's files --------------------------------------------------


def python_lines(folder: Path) -> tuple[int, int]:
    """(files, physical lines) of the ``*.py`` files under ``folder``, blanks and comments included."""
    files = lines = 0
    for path in sorted(folder.rglob("*.py")):
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(folder).parts):
            continue
        files += 1
        lines += len(path.read_bytes().splitlines())
    return files, lines


def recipe_files(document: Path) -> list[str] | None:
    """The files named in the section of ``document`` whose heading speaks of a form field; None
    when there is no such section (or no document)."""
    if not document.exists():
        return None
    section: list[str] | None = None
    level = 0
    fenced = False
    for line in document.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else HEADING.match(line)
        if heading:
            depth, title = len(heading.group(1)), heading.group(2).lower()
            if section is not None and depth <= level:
                break
            if section is None and "field" in title:
                section, level = [], depth
                continue
        if section is not None:
            section.append(line)
    if section is None:
        return None
    named: list[str] = []
    for path in NAMED_FILE.findall("\n".join(section)):
        if path not in named:
            named.append(path)
    return named


# --- a and b: the probe, run by the checkout's own interpreter in the checkout ---------------

RESUME = dis.opmap.get("RESUME")


def starts(frame) -> bool:
    """Whether this profile "call" is a function starting, not a coroutine or generator resumed.

    A websocket's task is suspended inside every ASGI wrapper it passed at its connection:
    each message it receives resumes those frames, which do nothing for it. On CPython 3.11
    a frame begins at ``RESUME 0``; a resumed one stands at ``RESUME 1`` to ``3``.
    """
    code, at = frame.f_code.co_code, frame.f_lasti
    if RESUME is None or at < 0 or at + 1 >= len(code) or code[at] != RESUME:
        return True
    return code[at + 1] == 0


# The task (or, in a worker thread, the task that handed it the work) a frame serves.
ORIGIN: contextvars.ContextVar[Any] = contextvars.ContextVar("house_origin", default=None)


@dataclass
class Tracer:
    """Which publisher modules run a frame, by the task (or thread) they run for."""

    armed: bool = False
    record_asgi: bool = False
    ignored_threads: set[int] = field(default_factory=set)
    modules_by_origin: dict[Any, set[str]] = field(default_factory=dict)
    smtp_origins: set[Any] = field(default_factory=set)
    asgi_calls: list[tuple[str, str, Any, Any]] = field(default_factory=list)

    def reset(self) -> None:
        self.modules_by_origin = {}
        self.smtp_origins = set()
        self.asgi_calls = []

    def install(self) -> None:
        threading.setprofile(self.hook)
        sys.setprofile(self.hook)

    def hook(self, frame, event: str, _arg) -> None:
        if event != "call" or not self.armed or threading.get_ident() in self.ignored_threads:
            return
        # Every frame, ours or not: a task may hand work to a thread before running any of ours.
        origin = self._origin()
        module = frame.f_globals.get("__name__") or ""
        ours = (module == "publisher" or module.startswith("publisher.")) and starts(frame)
        smtp = module.startswith(("aiosmtplib", "smtplib"))
        code = frame.f_code
        asgi = self.record_asgi and code.co_varnames[: code.co_argcount][-3:] == ("scope", "receive", "send")
        if ours:
            self.modules_by_origin.setdefault(origin, set()).add(module)
        if smtp:
            self.smtp_origins.add(origin)
        if asgi:
            this = frame.f_locals.get("self") if code.co_argcount == 4 else None
            self.asgi_calls.append((module, code.co_qualname, code, this))

    @staticmethod
    def _origin() -> Any:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # a thread without an event loop: the task that handed it the work
            task = None
        if task is not None:
            if ORIGIN.get() is not task:
                ORIGIN.set(task)  # copied into asyncio.to_thread's worker with the task's context
            return task
        return ORIGIN.get() or f"thread {threading.current_thread().name}"

    def counted(self, background: set[Any]) -> tuple[list[str], list[str]]:
        """(modules counted, modules seen only in background loops that did not send the email)."""
        counted: set[str] = set()
        left_out: set[str] = set()
        for origin, modules in self.modules_by_origin.items():
            if origin in background and origin not in self.smtp_origins:
                left_out |= modules
            else:
                counted |= modules
        return sorted(counted), sorted(left_out - counted)


class Mailbox:
    """An aiosmtpd server on 127.0.0.1 that keeps the recipients of each message it accepts."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.arrived: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        mailbox = self

        class Handler:
            async def handle_DATA(self, _server, _session, envelope) -> str:  # noqa: N802 (aiosmtpd's name)
                for recipient in envelope.rcpt_tos:
                    mailbox.event(recipient).set()
                return "250 OK"

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def event(self, address: str) -> threading.Event:
        with self._lock:
            return self.arrived.setdefault(address.lower(), threading.Event())

    def stop(self) -> None:
        self.controller.stop()


def subscribe_state_name() -> str:
    """The full name of the Reflex state whose ``submit`` event subscribes (found by its class's name)."""
    import reflex as rx

    found, seen, pending = [], set(), list(rx.State.__subclasses__())
    while pending:
        state = pending.pop()
        if state in seen:
            continue
        seen.add(state)
        pending.extend(state.__subclasses__())
        if "subscribe" in state.__name__.lower() and "submit" in getattr(state, "event_handlers", {}):
            found.append(state.get_full_name())
    if len(found) != 1:
        raise RuntimeError(f"expected one subscribe state with a submit event, found {found}")
    return found[0]


@dataclass
class Site:
    """What the probe's client needs from the server's side."""

    base_url: str
    loop: asyncio.AbstractEventLoop
    tracer: Tracer
    mailbox: Mailbox
    outer: Any
    inner: Any
    startup_tasks: set[Any]
    events_received: list[int]
    state: str = ""

    async def _tasks(self) -> set[Any]:
        return set(asyncio.all_tasks())

    def tasks(self) -> set[Any]:
        return asyncio.run_coroutine_threadsafe(self._tasks(), self.loop).result(30)

    def events_in_flight(self) -> bool:
        return any(task.get_name().startswith("reflex_event|") for task in self.tasks())


async def wait_until(condition, what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s:g} s: {what}")
        await asyncio.sleep(0.02)


class Subscriber:
    """Subscribes over the app's websocket or by a plain POST, waiting for the confirmation email."""

    def __init__(self, site: Site) -> None:
        self.site = site

    async def open_tab(self):
        from tests.visitor import Visitor, hydrated

        visitor = Visitor(self.site.base_url, "/subscribe")
        emitted = [0]
        emit = visitor.sio.emit

        async def counted_emit(name, *args, **kwargs):
            if name == "event":
                emitted[0] += 1
            return await emit(name, *args, **kwargs)

        visitor.sio.emit = counted_emit
        received_before = self.site.events_received[0]
        await visitor.open_page(hydrated, timeout_s=WAIT_S)
        visitor.settled = lambda: (  # type: ignore[attr-defined]
            self.site.events_received[0] - received_before == emitted[0] and not self.site.events_in_flight()
        )
        await wait_until(visitor.settled, "the page's load events processed")
        return visitor

    async def by_app(self, visitor, address: str) -> None:
        form = {"name": "House Visitor", "email": address, "website": ""}
        await visitor.send(f"{self.site.state}.submit", {"form_data": form})
        await self._confirmed(address)
        await wait_until(visitor.settled, "the submit event processed")

    async def by_post(self, address: str) -> None:
        import httpx

        async with httpx.AsyncClient(base_url=self.site.base_url, timeout=WAIT_S) as http:
            answer = await http.post(
                "/subscribe",
                data={"name": "House Visitor", "email": address, "website": ""},
                headers={"Origin": self.site.base_url},
            )
        if answer.status_code != 303:
            raise RuntimeError(f"POST /subscribe answered {answer.status_code}, not 303: {answer.text[:300]}")
        await self._confirmed(address)

    async def _confirmed(self, address: str) -> None:
        arrived = self.site.mailbox.event(address)
        await wait_until(arrived.is_set, f"the confirmation email to {address}")

    async def measured(self, subscribe, before: set[Any], tasks_end: bool) -> dict[str, list[str]]:
        """The modules one subscribe crosses; ``before``: the background loops, left out.

        ``tasks_end``: every task the subscribe started ends (an HTTP request's); the app's
        path waits instead for its events to be processed (``by_app``): the connection's
        next receive, started by the event channel, waits for the visitor's next message.
        """
        tracer = self.site.tracer
        started = self.site.tasks()
        tracer.reset()
        tracer.armed = True
        try:
            await subscribe()

            def served() -> bool:
                return all(
                    origin.done()
                    for origin in list(tracer.modules_by_origin)
                    if isinstance(origin, asyncio.Task) and origin not in started
                )

            try:
                if tasks_end:
                    await wait_until(served, "every task started for the subscribe finished")
            except TimeoutError as exc:
                running = [
                    f"{origin.get_name()} ({', '.join(sorted(modules))})"
                    for origin, modules in list(tracer.modules_by_origin.items())
                    if isinstance(origin, asyncio.Task) and origin not in started and not origin.done()
                ]
                raise TimeoutError(f"{exc}; still running: {running}") from None
        finally:
            tracer.armed = False
        if not tracer.smtp_origins:
            raise RuntimeError("no frame of aiosmtplib or smtplib ran: the email was not sent by this process?")
        counted, left_out = tracer.counted(before)
        return {"modules": counted, "left_out": left_out}


def wrapper_chain(calls: list[tuple[str, str, Any, Any]], outer: Any, inner: Any) -> tuple[list[str], bool]:
    """The ASGI apps a request passed from ``outer`` until ``inner`` (Reflex's own app), in order,
    and whether it reached ``inner``. A method other than ``__call__`` with the ASGI signature is a
    step inside an app (Starlette's ``Router.app``, ``Mount.handle``), not an app of its own."""

    def is_app(code, this, app) -> bool:
        return this is app or (this is None and getattr(app, "__code__", None) is code)

    chain: list[str] = []
    seen: set[Any] = set()
    started = False
    for module, qualname, code, this in calls:
        if not started:
            if not is_app(code, this, outer):
                continue
            started = True
        if is_app(code, this, inner):
            return chain, True
        if this is not None and code.co_name != "__call__":
            continue
        key = id(this) if this is not None else code
        if key in seen:
            continue
        seen.add(key)
        owner = type(this) if this is not None else None
        chain.append(f"{owner.__module__}.{owner.__qualname__}" if owner else f"{module}.{qualname}")
    return chain, False


async def drive(site: Site) -> dict[str, Any]:
    """In the client's thread: warm up both paths, then measure each, then a page request."""
    import httpx

    async def answers() -> bool:
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                return (await http.get(site.base_url + "/ping")).status_code == 200
        except httpx.HTTPError:
            return False

    deadline = time.monotonic() + WAIT_S
    while not await answers():
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not answer /ping")
        await asyncio.sleep(0.1)
    subscriber = Subscriber(site)
    # Once each path, unmeasured: what a process does once is not what a subscribe crosses.
    warm_tab = await subscriber.open_tab()
    await subscriber.by_app(warm_tab, "warm-app@house.example")
    await warm_tab.close()
    await subscriber.by_post("warm-plain@house.example")

    background = site.startup_tasks
    visitor = await subscriber.open_tab()
    app_path = await subscriber.measured(lambda: subscriber.by_app(visitor, "app@house.example"), background, False)
    await visitor.close()
    plain_path = await subscriber.measured(lambda: subscriber.by_post("plain@house.example"), background, True)

    site.tracer.reset()
    site.tracer.record_asgi = site.tracer.armed = True
    try:
        async with httpx.AsyncClient(timeout=WAIT_S) as http:
            page = await http.get(site.base_url + "/")
    finally:
        site.tracer.record_asgi = site.tracer.armed = False
    if page.status_code != 200:
        raise RuntimeError(f"GET / answered {page.status_code}")
    chain, reached = wrapper_chain(site.tracer.asgi_calls, site.outer, site.inner)
    return {
        "app": app_path,
        "plain": plain_path,
        "wrappers": chain,
        "reached_reflex": reached,
        "subscribe_state": site.state,
    }


def site_environment(workdir: Path, mailbox: Mailbox) -> None:
    """The site's settings in the probe: a throwaway SQLite database under ``workdir`` (migrated by
    the operator's command), ``mailbox`` as its SMTP server, its states beside the database."""
    os.environ.update(
        {
            "REFLEX_DB_URL": f"sqlite:///{workdir / 'house.db'}",
            "PUBLISHER_GATEWAY_URL": "",
            "PUBLISHER_SMTP_URL": f"smtp://127.0.0.1:{mailbox.port}",
            "PUBLISHER_NOTIFY_TO": "books@house.example",
            "PUBLISHER_MAIL_FROM": "Animals We Confuse <site@house.example>",
            "PUBLISHER_LIST_SECRET": "house-list-secret-0123456789abcdef0123456789",
            "PUBLISHER_FORM_SECRET": "house-form-secret-0123456789abcdef0123456789",
            "REFLEX_STATES_WORKDIR": str(workdir / "states"),
            "LOGLEVEL": "warning",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_CHECK_LATEST_VERSION": "false",
        }
    )
    gateway_command = Path(sys.executable).parent / "publisher-gateway"
    subprocess.run([str(gateway_command), "migrate"], check=True, stdout=subprocess.DEVNULL)


def production_app() -> tuple[Any, Any, Any, list[int]]:
    """Reflex's app as publisher-serve runs it: its ASGI app, the site's wrappers around Reflex's own
    app and that app (a page request's wrappers lie between the two), and a count of the events
    the app has processed (the client waits on it)."""
    from reflex.app import EventNamespace
    from reflex.utils import prerequisites
    from reflex_base import constants
    from reflex_base.environment import environment
    from starlette.routing import Mount

    # As publisher-serve runs the app: the build as it is, mounted into the backend.
    environment.REFLEX_ENV_MODE.set(constants.Env.PROD)
    environment.REFLEX_SKIP_COMPILE.set(True)
    environment.REFLEX_MOUNT_FRONTEND_COMPILED_APP.set(True)
    app = prerequisites.get_app().app
    asgi = app()
    # Reflex mounts the site's api_transformer result at "" in its top app, around its own app
    # (reflex.app.App.__call__): a page request's wrappers are what lies between the two.
    outer = next((route.app for route in getattr(asgi, "routes", []) if isinstance(route, Mount)), None)
    inner = app._api

    events_received = [0]
    on_event = EventNamespace.on_event

    async def counted_on_event(self, sid, data):
        try:
            return await on_event(self, sid, data)
        finally:
            events_received[0] += 1

    EventNamespace.on_event = counted_on_event
    return asgi, outer, inner, events_received


def probe(output: Path) -> None:
    """Runs in the checkout (its folder, its interpreter, its code): measures a and b into ``output``."""
    import uvicorn

    mailbox = Mailbox()
    site_environment(output.parent, mailbox)  # the driver's temporary folder: the database goes with it
    asgi, outer, inner, events_received = production_app()
    state = subscribe_state_name()

    tracer = Tracer()
    tracer.ignored_threads.add(mailbox.controller._thread.ident)  # type: ignore[union-attr]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(asgi, lifespan="on", ws="wsproto", log_level="warning"))
    result: dict[str, Any] = {}

    async def serve_and_measure() -> None:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        await wait_until(lambda: server.started or serving.done(), "uvicorn started")
        if serving.done():
            serving.result()
        site = Site(
            base_url=base_url,
            loop=asyncio.get_running_loop(),
            tracer=tracer,
            mailbox=mailbox,
            outer=outer,
            inner=inner,
            startup_tasks=set(asyncio.all_tasks()),
            events_received=events_received,
            state=state,
        )
        failure: list[BaseException] = []

        def client() -> None:
            tracer.ignored_threads.add(threading.get_ident())
            try:
                result.update(asyncio.run(drive(site)))
            except BaseException as exc:  # noqa: BLE001 - handed to the server's side, which raises it
                failure.append(exc)

        thread = threading.Thread(target=client, name="house-client")
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.05)
        server.should_exit = True
        await serving
        if failure:
            raise failure[0]

    tracer.install()
    try:
        asyncio.run(serve_and_measure())
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        mailbox.stop()
    output.write_text(json.dumps(result, indent=2))


# --- The driver ------------------------------------------------------------------------------


def commit_of(checkout: Path) -> str:
    answer = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", "--", *COUNTED_FOLDERS],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = answer.stdout.strip() or "not a git checkout"
    return commit + (" + changes" if dirty.stdout.strip() else "")


def measure(checkout: Path) -> dict[str, Any]:
    python = checkout / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{checkout}: no .venv/bin/python: run `make setup-test` there first")
    if not (checkout / BUILD_INDEX).exists():
        raise SystemExit(f"{checkout}: no build: run `make build` there first")
    lines = {folder: python_lines(checkout / folder) for folder in COUNTED_FOLDERS}
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PUBLISHER_", "REFLEX_", "GRANIAN_", "VIRTUAL_ENV", "PYTHON"))
    }
    env["PYTHONPATH"] = str(checkout)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    with tempfile.TemporaryDirectory(prefix="house-") as tmp:
        output = Path(tmp) / "probe.json"
        log = Path(tmp) / "probe.log"
        with log.open("wb") as log_file:
            done = subprocess.run(
                [str(python), str(Path(__file__).resolve()), "--probe", str(output)],
                cwd=checkout,
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                timeout=PROBE_TIMEOUT_S,
                check=False,
            )
        if done.returncode != 0 or not output.exists():
            raise SystemExit(f"{checkout}: the probe failed ({done.returncode}):\n{log.read_text()[-4000:]}")
        probed = json.loads(output.read_text())
    return {
        "checkout": str(checkout),
        "commit": commit_of(checkout),
        "lines": lines,
        "recipe": recipe_files(checkout / RECIPE_DOC),
        **probed,
    }


def table(results: list[dict[str, Any]]) -> str:
    def recipe(result: dict[str, Any]) -> str:
        return "no recipe" if result["recipe"] is None else f"{len(result['recipe'])} files"

    rows = [
        ("", [Path(r["checkout"]).name or r["checkout"] for r in results]),
        ("commit", [r["commit"] for r in results]),
        ("a. modules a subscribe crosses, app's event", [str(len(r["app"]["modules"])) for r in results]),
        ("   ... from the plain POST", [str(len(r["plain"]["modules"])) for r in results]),
        ("b. ASGI wrappers a page request passes", [str(len(r["wrappers"])) for r in results]),
        ("c. lines of Python in publisher/", [f"{r['lines']['publisher'][1]:,}" for r in results]),
        ("   ... in tests/", [f"{r['lines']['tests'][1]:,}" for r in results]),
        (
            "   (*.py files in publisher/, tests/)",
            [f"{r['lines']['publisher'][0]}, {r['lines']['tests'][0]}" for r in results],
        ),
        ("d. files the form-field recipe names (docs/content.md)", [recipe(r) for r in results]),
    ]
    width = max(len(label) for label, _ in rows)
    column = max(len(value) for _, values in rows for value in values)
    return "\n".join(
        f"{label:<{width}}  " + "  ".join(f"{value:>{column}}" for value in values) for label, values in rows
    )


def details(result: dict[str, Any]) -> str:
    def listed(names: list[str]) -> str:
        return "\n".join(f"    {name}" for name in names) or "    (none)"

    recipe = result["recipe"]
    reached = "" if result["reached_reflex"] else " (answered before Reflex's app)"
    parts = [
        f"{result['checkout']} ({result['commit']}), subscribe state {result['subscribe_state']}",
        f"  a. the app's event, {len(result['app']['modules'])} modules:\n{listed(result['app']['modules'])}",
        f"     the plain POST, {len(result['plain']['modules'])} modules:\n{listed(result['plain']['modules'])}",
        "     only in background loops that did not send the email (not counted): "
        + (", ".join(sorted(set(result["app"]["left_out"]) | set(result["plain"]["left_out"]))) or "none"),
        f"  b. GET / passes {len(result['wrappers'])} wrappers{reached}:\n{listed(result['wrappers'])}",
        "  d. " + ("no recipe" if recipe is None else f"the recipe names {len(recipe)}:\n{listed(recipe)}"),
    ]
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkout",
        action="append",
        type=Path,
        help="a checkout to measure (set up and built); several: side by side (default: this one)",
    )
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.probe:
        probe(args.probe)
        return 0
    checkouts = [path.resolve() for path in (args.checkout or [ROOT])]
    results = [measure(checkout) for checkout in checkouts]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"\nThe house, {date.today()}, {platform.node()} ({os.cpu_count()} cores)")
    print(table(results))
    for result in results:
        print()
        print(details(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
