"""``publisher-serve``: the output of `make build` and the backend from one process on one port
(Granian, as `--single-port` does), never building, so a container starts in seconds without
Node; ``--prepare`` writes the page markers beforehand, so its root filesystem can be read-only."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

import redis
from reflex.utils import exec as reflex_exec
from reflex.utils import prerequisites
from reflex_base import config as reflex_config
from reflex_base import constants
from reflex_base.environment import environment

from publisher import reflex_internals
from publisher.config import secret_files, settings
from publisher.storage import database
from publisher.web import page_kinds, submissions

BUILD_INDEX = Path(".web") / "build" / "client" / "index.html"
# What a worker reads instead of evaluating the pages at start (and writes when missing).
STATEFUL_PAGES_MARKER = Path(".web") / "backend" / "stateful_pages.json"


class ServeError(RuntimeError):
    """The server cannot start; the message says what to do."""


def check_redis(url: str | None) -> None:
    """With Redis configured, it must answer before any worker starts."""
    if not url:
        return
    if secret_files.has_unencoded_delimiter(url):  # redis-py's error would quote a piece of the password
        raise ServeError(
            f"REFLEX_REDIS_URL ({secret_files.redact_url(url)}): percent-encode / ? # [ ] and @ in the user and "
            "password (%2F %3F %23 %5B %5D %40)."
        )
    try:
        redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3).ping()
    except (redis.RedisError, ValueError) as exc:
        raise ServeError(
            f"cannot reach Redis at REFLEX_REDIS_URL ({secret_files.redact_url(url)}): {str(exc).rstrip('.')}. "
            "Start Redis or unset REFLEX_REDIS_URL to run one worker with in-memory state."
        ) from None


def require_build() -> None:
    if not BUILD_INDEX.exists():
        raise ServeError(
            f"No production build at {BUILD_INDEX.parent}: run `make build` first "
            "(reflex export --frontend-only --no-zip)."
        )
    if not page_kinds.MANIFEST.exists():
        raise ServeError(
            f"The build at {BUILD_INDEX.parent} has no {page_kinds.MANIFEST} (which pages start the app): "
            "it is older than this code; run `make build` again."
        )


def _use_prebuilt_frontend() -> None:
    environment.REFLEX_ENV_MODE.set(constants.Env.PROD)
    environment.REFLEX_SKIP_COMPILE.set(True)  # serve the build as it is; never recompile


def prepare() -> int:
    """Write the backend's page markers for the current build, as a worker would at its first start."""
    try:
        require_build()
    except ServeError as exc:
        print(f"publisher-serve: {exc}", file=sys.stderr)
        return 2
    _use_prebuilt_frontend()
    STATEFUL_PAGES_MARKER.unlink(missing_ok=True)  # never keep one from an older build
    with tempfile.TemporaryDirectory() as states:
        environment.REFLEX_STATES_WORKDIR.set(Path(states))  # importing the app creates it
        prerequisites.get_app().app()  # what a worker does at start: evaluates pages, writes the marker
    if not STATEFUL_PAGES_MARKER.exists():
        print(f"publisher-serve: Reflex did not write {STATEFUL_PAGES_MARKER}", file=sys.stderr)
        return 1
    for kind in page_kinds.read_manifest().values():
        print(f"Page {kind.describe()}")
    return 0


# Granian allocates with jemalloc, which keeps freed pages: after a flood of tabs an idle worker stayed
# at its peak (benchmarks/flood.py: about 300 MB for 2,000 tabs); a background thread hands them back.
JEMALLOC_CONF_VAR = "_RJEM_MALLOC_CONF"
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"


def _exit_on_stop_signal(signum: int, _frame) -> None:
    # Until Granian takes over: as PID 1 in a container, a signal without a handler is ignored.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--prepare"]:
        return prepare()
    if args:
        print("usage: publisher-serve [--prepare]", file=sys.stderr)
        return 2
    for stop_signal in submissions.STOP_SIGNALS:
        signal.signal(stop_signal, _exit_on_stop_signal)
    try:
        values = settings.current()  # a malformed setting stops start-up, naming the variable
        require_build()
        check_redis(reflex_config.get_config().redis_url)
        settings.require_form_secret(values)
    except (ServeError, settings.ConfigurationError) as exc:
        print(f"publisher-serve: {exc}", file=sys.stderr)
        return 2
    for note in settings.notes_at_start():
        print(f"publisher-serve: note: {note}", file=sys.stderr)

    if values.gateway_url is None:  # the embedded gateway: its database first
        try:
            database.check()
            database.migrate()
        except database.DatabaseUnavailable as exc:
            print(f"publisher-serve: {exc}", file=sys.stderr)
            return 2
    _use_prebuilt_frontend()
    os.environ.setdefault(JEMALLOC_CONF_VAR, JEMALLOC_CONF)
    reflex_internals.wrap_worker_signals(submissions.handle_stop_signals)
    reflex_exec.run_backend_prod(
        values.host, values.port, values.loglevel.subprocess_level(), mount_frontend_compiled_app=True
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
