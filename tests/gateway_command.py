"""``publisher-gateway`` run in the test process as its own process would run: the installed command costs
seconds a call. What only a process shows: tests/services/test_cli.py."""

from __future__ import annotations

import contextlib
import contextvars
import io
import logging
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from unittest import mock

from reflex import model as rx_model
from reflex_base import config as reflex_config
from reflex_base.registry import RegistrationContext

# The environment, the standard streams and Reflex's configuration are the process's: one call at a time.
_ONE_AT_A_TIME = threading.Lock()
# What the subprocess was given before it was killed; a call that takes longer has hung.
HANG_S = 120


def run(
    command: list[str], argv: list[str], environ: Mapping[str, str | None], project: Path, cwd: Path | None = None
) -> tuple[int, str, str]:
    """``main(argv)``'s status, stdout and stderr in ``cwd`` (default the project), ``environ`` added (None unsets)."""
    from publisher.cli import main

    with (
        _ONE_AT_A_TIME,
        contextlib.chdir(cwd or project),
        # A process whose output is a pipe formats its help for 80 columns (shutil.get_terminal_size).
        _environment({"COLUMNS": os.environ.get("COLUMNS", "80"), **environ}),
        # Output as a pipe reads it (universal newlines); stdin empty, as DEVNULL: nobody answers a question.
        contextlib.redirect_stdout(io.StringIO(newline=None)) as out,
        contextlib.redirect_stderr(io.StringIO(newline=None)) as err,
        mock.patch.object(sys, "stdin", io.StringIO()),
        _warnings_to(err),
        _engines_closed_after(),
        _configuration(project),
    ):
        status = _in_a_thread(lambda: _exit_status(main.main, argv), command)
    return status, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """The environment restored exactly afterwards (patch.dict): rxconfig.py and Reflex write to it too."""
    with mock.patch.dict(os.environ, {name: value for name, value in changes.items() if value is not None}):
        for name in [name for name, value in changes.items() if value is None]:
            os.environ.pop(name, None)
        yield


@contextlib.contextmanager
def _warnings_to(err: io.StringIO) -> Iterator[None]:
    """Warnings on stderr, as logging.lastResort shows them in the process; pytest's handlers would keep them."""
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


@contextlib.contextmanager
def _engines_closed_after() -> Iterator[None]:
    """The command's engines closed, as at its process's end: no pooled connection holds a lock or a database."""
    before = set(rx_model._ENGINE)
    try:
        yield
    finally:
        for url in set(rx_model._ENGINE) - before:
            rx_model._ENGINE.pop(url).dispose()


@contextlib.contextmanager
def _configuration(project: Path) -> Iterator[None]:
    """Reflex's configuration from ``project``'s rxconfig.py with the call's environment; the test's own back after."""
    context = RegistrationContext.ensure_context()
    saved = context._config
    try:
        context._set_config(reflex_config._get_config(project))
    except Exception:  # noqa: BLE001 - left unloaded, the command meets the failure itself and reports it
        context._set_config(None)
    try:
        yield
    finally:
        context._set_config(saved)


def _exit_status(main, argv: list[str]) -> int:
    """As the interpreter ends: the status, sys.exit's code, or an escaping exception's traceback and 1."""
    try:
        return main(argv)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends a process: shown, status 1
        traceback.print_exc(file=sys.stderr)
        return 1


def _in_a_thread(call, command: list[str]) -> int:
    """On a thread of its own, so the command's ``asyncio.run`` works under an async test's running loop."""
    context = contextvars.copy_context()
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(context.run(call)), name="publisher-gateway", daemon=True)
    worker.start()
    worker.join(HANG_S)
    if not outcome:
        raise subprocess.TimeoutExpired(command, HANG_S)
    return outcome[0]
