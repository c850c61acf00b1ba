"""``publisher-gateway`` run inside the test process, looking from outside as the installed one does.

Starting the installed command imports Reflex again: seconds a call, and the tests call it
about ninety times. Here ``publisher.cli.main.main`` runs in this process instead, with what
a process of its own would have had: the environment it was given, empty standard input,
its standard output and error captured, its working directory, Reflex's configuration read
afresh from the project's rxconfig.py, an exit status, and no pooled connection left open when
it ends. What only a process of its own can show (an exit status from the shell, a broken
pipe, Ctrl-C, a start in another directory) is tested on the installed command:
tests/services/test_cli.py.
"""

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

from reflex import model as rx_model
from reflex_base import config as reflex_config
from reflex_base.registry import RegistrationContext

# The environment, the standard streams and Reflex's configuration are the process's: one call at a time.
_ONE_AT_A_TIME = threading.Lock()
# What the subprocess was given before it was killed; a call that takes longer has hung.
HANG_S = 120
# A process whose output is a pipe formats its help and usage for 80 columns (shutil.get_terminal_size).
PIPE_COLUMNS = "80"


def run(
    command: list[str], argv: list[str], environ: Mapping[str, str | None], project: Path, cwd: Path | None = None
) -> tuple[int, str, str]:
    """``main(argv)``'s exit status, standard output and standard error, run in ``cwd`` (the project's
    folder unless given) with ``environ`` added to this process's environment (a None unsets that
    variable); ``command`` names it in a hang's TimeoutExpired."""
    from publisher.cli import main

    with (
        _ONE_AT_A_TIME,
        contextlib.chdir(cwd or project),
        _environment({"COLUMNS": os.environ.get("COLUMNS", PIPE_COLUMNS), **environ}),
        _standard_streams() as (out, err),
        _warnings_to(err),
        _engines_closed_after(),
        _configuration(project),
    ):
        status = _in_a_thread(lambda: _exit_status(main.main, argv), command)
    return status, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """``changes`` made for the call (None: unset); afterwards the environment exactly as it was
    (rxconfig.py and Reflex may write to it too: PUBLISHER_DB_PASSWORD_FILE, ALEMBIC_CONFIG)."""
    saved = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name in set(os.environ) - set(saved):
            del os.environ[name]
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextlib.contextmanager
def _standard_streams() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Output and errors captured as text read from a pipe is (universal newlines); standard input
    empty and no terminal, like the subprocess's DEVNULL: nobody answers a question."""
    out, err = io.StringIO(newline=None), io.StringIO(newline=None)
    stdin = sys.stdin
    sys.stdin = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield out, err
    finally:
        sys.stdin = stdin


@contextlib.contextmanager
def _warnings_to(err: io.StringIO) -> Iterator[None]:
    """The command configures no logging, so its process shows warnings on standard error
    (logging.lastResort); pytest's own handlers would otherwise keep them from ``err``."""
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
    """The engines the command made are closed and forgotten, as at its process's end: no pooled
    connection holds a lock, keeps a template database busy or outlives a stopped server."""
    before = set(rx_model._ENGINE)
    try:
        yield
    finally:
        for url in set(rx_model._ENGINE) - before:
            rx_model._ENGINE.pop(url).dispose()


@contextlib.contextmanager
def _configuration(project: Path) -> Iterator[None]:
    """Reflex's configuration loaded from ``project``'s rxconfig.py with the call's environment (its
    REFLEX_DB_URL), on the test's registration context; the test's own (or none) back afterwards."""
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
    """What the interpreter makes of ``main``: its status, sys.exit's code (argparse's usage error
    is 2), or for an exception that escapes it the traceback on standard error and 1."""
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
    """``call`` on a thread of its own, in a copy of the caller's context: the command's
    ``asyncio.run`` works even when the caller is an async test with its event loop running."""
    context = contextvars.copy_context()
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(context.run(call)), name="publisher-gateway", daemon=True)
    worker.start()
    worker.join(HANG_S)
    if not outcome:
        raise subprocess.TimeoutExpired(command, HANG_S)
    return outcome[0]
