"""Production serving: the prebuilt site and the backend from one process on one port.

`reflex run --env prod` rebuilds the frontend on every start. This command never
builds: it serves the output of `make build` (`reflex export --frontend-only
--no-zip`) through Reflex's own production backend runner (Granian), with the
compiled frontend mounted into the backend, exactly as `--single-port` does. A
container built once therefore starts in seconds and needs no Node at run time.

    HOST=0.0.0.0 PORT=8000 publisher-serve

With the embedded local gateway (no PUBLISHER_GATEWAY_URL), it first brings the
database to the current schema (Alembic, as `reflex db migrate`), once, before
the workers start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from publisher.settings import ConfigurationError, gateway_timeout_s, gateway_url, rate_limits

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
BUILD_INDEX = Path(".web") / "build" / "client" / "index.html"


class ServeError(RuntimeError):
    """The server cannot start; the message says what to do."""


def listen_address(environ: dict[str, str] | os._Environ = os.environ) -> tuple[str, int]:
    host = environ.get("HOST", "").strip() or DEFAULT_HOST
    raw_port = environ.get("PORT", "").strip() or str(DEFAULT_PORT)
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        raise ServeError(f"PORT must be a TCP port number (1-65535), got {raw_port!r}")
    return host, int(raw_port)


def check_redis(url: str | None) -> None:
    """With Redis configured, it must answer before any worker starts."""
    if not url:
        return
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3).ping()
    except (redis.RedisError, ValueError) as exc:
        raise ServeError(
            f"cannot reach Redis at REFLEX_REDIS_URL ({redact(url)}): {str(exc).rstrip('.')}. "
            "Start Redis or unset REFLEX_REDIS_URL to run one worker with in-memory state."
        ) from None


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def main() -> int:
    try:
        host, port = listen_address()
        if not BUILD_INDEX.exists():
            raise ServeError(
                f"No production build at {BUILD_INDEX.parent}: run `make build` "
                "(reflex export --frontend-only --no-zip) first."
            )
        uses_local_gateway = gateway_url() is None
        from reflex_base.config import get_config

        check_redis(get_config().redis_url)
        rate_limits()
        gateway_timeout_s()
    except (ServeError, ConfigurationError) as exc:
        print(f"publisher-serve: {exc}", file=sys.stderr)
        return 2

    from reflex import model
    from reflex.utils import exec as reflex_exec
    from reflex_base import constants
    from reflex_base.environment import environment

    if uses_local_gateway:
        model.migrate()
    environment.REFLEX_ENV_MODE.set(constants.Env.PROD)
    environment.REFLEX_SKIP_COMPILE.set(True)  # serve the build as it is; never recompile
    loglevel = constants.LogLevel(os.environ.get("LOGLEVEL", "info"))
    reflex_exec.run_backend_prod(host, port, loglevel.subprocess_level(), mount_frontend_compiled_app=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
