"""Visits, sources and buy presses, counted by the server that answers the pages (docs/privacy.md):
the middleware's and the beacon's hooks, each worker's flush loop and the lifespan task."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import date, datetime
from typing import Any

from reflex_base import config as reflex_config

from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.rules import visit_rules
from publisher.seldom_log import SeldomLog
from publisher.storage import visit_counts
from publisher.storage.tables import utc_now
from publisher.visits.recorder import Recorder

logger = logging.getLogger(__name__)

# Each worker writes its tally this often: a database that is away loses at most this window.
FLUSH_INTERVAL_S = 5
# The dashboard's chart of visitors and views per day covers this many days.
CHART_DAYS = 90
# At a worker's stop, its last flush may take this long; then it goes without it.
LAST_FLUSH_WAIT_S = 3.0
# Counting off, a database away when expired salts are due to go: tried again this often.
DESTROY_RETRY_S = 60.0


shared_recorder: PerProcess[Recorder] = PerProcess(lambda: Recorder(reflex_config.get_config().trusted_proxy_hops))
# A fault on every request must not flood the log: each kind of failure once a minute.
_failures = SeldomLog(logger)


def record_page_view(scope: Any, status: int, route: str) -> None:
    """The middleware's hook at a page's response start: never raises, never awaits."""
    try:
        shared_recorder.get().page_view(scope, status, route)
    except Exception as exc:  # noqa: BLE001 - counting is never worth a page
        _failures.log(
            logging.ERROR, "Visits: a page view was not counted (%s; logged at most once a minute)", type(exc).__name__
        )


class FlushLoop:
    """A worker's turn every FLUSH_INTERVAL_S: its tally to the database (``db_url``: a test's, else Reflex's),
    the day's salt, the daily clean-up. Each database call runs in a thread, and a failure costs that
    turn's part only: the loop never dies of a database away."""

    def __init__(
        self, recorder: Recorder, db_url: str | None = None, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    ):
        self.recorder = recorder
        self.db_url = db_url
        self.sleep = sleep
        self._chores_done_on: date | None = None

    async def load_salts(self) -> None:
        """A failure is logged and counting goes on with views only until a later turn fetches the salt."""
        try:
            salt_for = functools.partial(visit_counts.salt_for, db_url=self.db_url)
            await self.recorder.salts.refresh(salt_for, self.recorder.clock())
        except Exception as exc:  # noqa: BLE001 - any database failure: count views without visitors
            logger.warning("Visits: the day's salt is not available (%s); counting views only", type(exc).__name__)

    async def flush_once(self) -> None:
        """Write what was counted since the last turn; on an error only this batch is lost."""
        if self.recorder.tally.is_empty():
            return
        batch = self.recorder.tally.take()
        try:
            await asyncio.to_thread(visit_counts.flush, batch, self.db_url)
        except Exception as exc:  # noqa: BLE001 - a database away loses this window only
            views = sum(count for (_, kind, _), count in batch.views.items() if kind == visit_rules.VisitKind.SITE)
            # The error's type only: its text may quote the batch's visitor ids.
            logger.warning("Visits: %d page views lost, the database did not take them (%s)", views, type(exc).__name__)

    async def chores_once_a_day(self) -> None:
        """The expired salts and seen rows dropped, old counts pruned: on the first turn of each day."""
        now = self.recorder.clock()
        today = visit_rules.day_of(now)
        if self._chores_done_on == today:
            return
        try:
            await asyncio.to_thread(_daily_chores, now, self.db_url)
        except Exception as exc:  # noqa: BLE001 - tried again at the next turn
            logger.warning("Visits: the daily clean-up failed (%s); trying again", type(exc).__name__)
            return
        self._chores_done_on = today

    async def run(self) -> None:
        while True:
            await self.sleep(FLUSH_INTERVAL_S)
            try:
                await self.flush_once()
                await self.load_salts()
                await self.chores_once_a_day()
            except Exception as exc:  # noqa: BLE001 - the loop outlives any one turn
                logger.error("Visits: a turn of the flush loop failed (%s); the next one goes on", type(exc).__name__)


def _daily_chores(now: datetime, db_url: str | None = None) -> None:
    visit_counts.drop_expired(now, db_url)
    visit_counts.prune(visit_rules.day_of(now), settings.current().visits_keep_days, db_url)


@asynccontextmanager
async def running(flush_loop: FlushLoop, last_flush_s: float = LAST_FLUSH_WAIT_S) -> AsyncIterator[None]:
    """The salt first (a bounded wait), the loop while the worker serves, a last flush at its stop."""
    await flush_loop.load_salts()
    task = asyncio.create_task(flush_loop.run(), name="publisher visits: flush loop")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await asyncio.wait_for(flush_loop.flush_once(), last_flush_s)
        except TimeoutError:
            logger.warning("Visits: the last flush took over %g s; its counts are lost", last_flush_s)


async def destroying(
    db_url: str | None = None,
    clock: Callable[[], datetime] = utc_now,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Counting off after it was on: the salts and seen rows it left are deleted at once (a start
    after a long stop), then each at its time, 48 hours after its day began; then nothing runs."""
    while True:
        try:
            first_left = await asyncio.to_thread(visit_counts.drop_expired, clock(), db_url)
        except Exception as exc:  # noqa: BLE001 - a database away: tried again later
            logger.warning("Visits: the expired salts were not deleted (%s); trying again", type(exc).__name__)
            await sleep(DESTROY_RETRY_S)
            continue
        if first_left is None:
            return
        await sleep(max((visit_rules.salt_destroyed_at(first_left) - clock()).total_seconds(), 1.0))


@asynccontextmanager
async def counting(*_: Any) -> AsyncIterator[None]:
    """The app's lifespan task. Off (``PUBLISHER_VISITS=off``), it only destroys the salts an earlier
    counting left; with no embedded gateway (no database) it starts nothing."""
    values = settings.current()
    if values.visits_on:
        async with running(FlushLoop(shared_recorder.get())):
            yield
        return
    task = asyncio.create_task(destroying(), name="publisher visits: destroying") if values.dashboard_on else None
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
