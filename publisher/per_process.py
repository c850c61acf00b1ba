"""One object per process (a gateway client, a rate limiter, an outbox sender): made on first use
when it has a factory, set by the code that runs it when it has none, replaced by tests."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerProcess(Generic[T]):
    def __init__(self, make: Callable[[], T] | None = None):
        self._make = make
        self._value: T | None = None

    def get(self) -> T:
        """The object, made now if there is none yet and a factory makes one."""
        if self._value is None:
            if self._make is None:
                raise LookupError("nothing is set here and there is no factory to make it")
            self._value = self._make()
        return self._value

    def peek(self) -> T | None:
        """The object if there is one, without making it."""
        return self._value

    def set(self, value: T | None) -> None:
        """Replace the object (tests, or the code that runs it), or forget it with None."""
        self._value = value


def worker_name() -> str:
    """``host:pid:tag``, the holder of a lease: mail/campaign.py frees the leases of a dead process on
    the same host by it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:64]
