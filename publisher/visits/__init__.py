"""Visits, sources and buy presses, counted by the server that answers the pages (docs/privacy.md).

A page view is counted in the worker's memory on the request path (microseconds, never an await,
never an error), and each worker flushes its tally to the database every few seconds in one
transaction. A visitor is known for one day only, by a keyed hash under a salt every worker
shares (the database, or Redis) and that is destroyed 48 hours after its day began.

CONTRACT (issue 42): the signatures below are fixed; the engine helper fills them in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

FLUSH_INTERVAL_S = 5
VISITORS_NOW_MINUTES = 5
CHART_DAYS = 90
MAX_KEYS_PER_FLUSH = 1000


def record_page_view(scope: Any, status: int) -> None:
    """The middleware's hook at a page's response start: never raises, never awaits."""
    raise NotImplementedError


def record_buy(scope: Any, slug: str, store: str) -> None:
    """A press of a book's buy button the beacon found genuine."""
    raise NotImplementedError


def visitors_now(now: datetime) -> int:
    """Distinct visitors in the last VISITORS_NOW_MINUTES minutes."""
    raise NotImplementedError


@asynccontextmanager
async def counting(*_: Any) -> AsyncIterator[None]:
    """The app's lifespan task: the day's salt, then a flush every FLUSH_INTERVAL_S, a last one at stop."""
    raise NotImplementedError
    yield
