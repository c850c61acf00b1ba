"""Visits, sources and buy presses, counted by the server that answers the pages (docs/privacy.md):
the middleware's and the beacon's hooks, and the lifespan task that flushes and destroys."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from reflex_base import config as reflex_config

from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.reflex_internals.state_managers import shared_redis, shared_redis_sync
from publisher.rules import visit_rules
from publisher.seldom_log import SeldomLog
from publisher.storage import visit_counts
from publisher.storage.tables import utc_now
from publisher.visits import flush_loop
from publisher.visits.flush_loop import DatabaseStore, FlushLoop, RedisStore
from publisher.visits.recorder import Recorder

logger = logging.getLogger(__name__)

# Each worker writes its tally this often: a database that is away loses at most this window.
FLUSH_INTERVAL_S = 5
# "Visitors now" on the dashboard: the distinct visitors of the last this many minutes.
VISITORS_NOW_MINUTES = 5
# The dashboard's chart of visitors and views per day covers this many days.
CHART_DAYS = 90
# At a worker's stop, its last flush may take this long; then it goes without it.
LAST_FLUSH_WAIT_S = 3.0
# Counting off, a database away when expired salts are due to go: tried again this often.
DESTROY_RETRY_S = 60.0


def _configured_recorder() -> Recorder:
    return Recorder(reflex_config.get_config().trusted_proxy_hops)


shared_recorder: PerProcess[Recorder] = PerProcess(_configured_recorder)
# A fault on every request must not flood the log: each kind of failure once a minute.
_failures = SeldomLog(logger)


def count_views_on(routes: Iterable[str]) -> None:
    """The page routes whose views count (declared above this layer: publisher.py tells them)."""
    shared_recorder.get().count_views_on(routes)


def record_page_view(scope: Any, status: int, route: str) -> None:
    """The middleware's hook at a page's response start: never raises, never awaits."""
    try:
        shared_recorder.get().page_view(scope, status, route)
    except Exception as exc:  # noqa: BLE001 - counting is never worth a page
        _failures.log(
            logging.ERROR, "Visits: a page view was not counted (%s; logged at most once a minute)", type(exc).__name__
        )


def record_buy(scope: Any, slug: str, store: str) -> None:
    """A press the beacon found genuine (the beacon logs a failure, at most once a minute)."""
    shared_recorder.get().buy(scope, slug, store)


def visitors_now(now: datetime) -> int:
    """Distinct visitors in the last VISITORS_NOW_MINUTES minutes, where the seen sets are."""
    redis = shared_redis_sync()
    if redis is None:
        return visit_counts.visitors_now(now, minutes=VISITORS_NOW_MINUTES)
    try:
        return flush_loop.visitors_now(redis, now, VISITORS_NOW_MINUTES)
    finally:
        redis.close()


def _daily_chores(now: datetime, db_url: str | None = None) -> None:
    visit_counts.drop_expired(now, db_url)
    visit_counts.prune(visit_rules.day_of(now), settings.current().visits_keep_days, db_url)


def configured_loop(recorder: Recorder, db_url: str | None = None) -> FlushLoop:
    """Salts and seen sets in Redis when the site uses it, else in the database; counts in the database."""
    redis = shared_redis()
    return FlushLoop(
        recorder,
        DatabaseStore(db_url) if redis is None else RedisStore(redis),
        functools.partial(visit_counts.flush, db_url=db_url),
        functools.partial(_daily_chores, db_url=db_url),
        FLUSH_INTERVAL_S,
    )


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
        async with running(configured_loop(shared_recorder.get())):
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
