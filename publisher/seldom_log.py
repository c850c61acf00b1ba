"""Log lines a stranger cannot flood: each message at most once a minute per owner, every text in it
a short escaped excerpt (a 200 KB header on every request writes one short line a minute)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

EVERY_S = 60.0
EXCERPT_CHARS = 100


def excerpt(text: str) -> str:
    """At most ``EXCERPT_CHARS`` characters of ``text``, anything unprintable escaped as ``repr`` does."""
    escaped = repr(text[:EXCERPT_CHARS])[1:-1]
    if len(text) <= EXCERPT_CHARS and len(escaped) <= EXCERPT_CHARS:
        return escaped
    return escaped[: EXCERPT_CHARS - 3] + "..."


class SeldomLog:
    """One owner's lines through ``logger``, each message at most once every ``EVERY_S``."""

    def __init__(self, logger: logging.Logger, clock: Callable[[], float] = time.monotonic):
        self.logger = logger
        self.clock = clock
        self._written_at: dict[str, float] = {}

    def log(self, level: int, message: str, *args: object, exc_info: bool = False) -> None:
        """``message`` with ``args`` (each text as its ``excerpt``), unless it was written less than a minute ago."""
        now = self.clock()
        last = self._written_at.get(message)
        if last is not None and now - last < EVERY_S:
            return
        self._written_at[message] = now
        shown = tuple(excerpt(arg) if isinstance(arg, str) else arg for arg in args)
        self.logger.log(level, message, *shown, exc_info=exc_info)

    def info(self, message: str, *args: object) -> None:
        self.log(logging.INFO, message, *args)

    def warning(self, message: str, *args: object) -> None:
        self.log(logging.WARNING, message, *args)
