"""Visits, sources and buy presses, counted by the server that answers the pages (docs/privacy.md):
on the request path in the worker's memory (never an await, never an error), flushed every few
seconds in one transaction; with counting off, ``destroying`` deletes what an earlier one left."""

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
from publisher.per_process import PerProcess
from publisher.reflex_internals.state_managers import shared_redis, shared_redis_sync
from publisher.rules import visit_rules
from publisher.seldom_log import SeldomLog
from publisher.storage import visit_counts
from publisher.storage.tables import utc_now
from publisher.visits import visitor_sets
from publisher.visits.flush_loop import FlushLoop
from publisher.visits.recorder import Recorder
from publisher.visits.salts import DatabaseSalts, DaySalts, RedisSalts
from publisher.visits.tally import Tally

logger = logging.getLogger(__name__)

# Each worker writes its tally this often: a database that is away loses at most this window.
FLUSH_INTERVAL_S = 5
# "Visitors now" on the dashboard: the distinct visitors of the last this many minutes.
VISITORS_NOW_MINUTES = 5
# The dashboard's chart of visitors and views per day covers this many days.
CHART_DAYS = 90
# Past this many distinct keys of one kind in one flush, new keys count as "(other)".
MAX_KEYS_PER_FLUSH = 1000
# At a worker's stop, its last flush may take this long; then it goes without it.
LAST_FLUSH_WAIT_S = 3.0
# Counting off, a database away when expired salts are due to go: tried again this often.
DESTROY_RETRY_S = 60.0


def _configured_recorder() -> Recorder:
    return Recorder(Tally(MAX_KEYS_PER_FLUSH), DaySalts(), reflex_config.get_config().trusted_proxy_hops)


shared_recorder: PerProcess[Recorder] = PerProcess(_configured_recorder)
# A fault on every request must not flood the log: each kind of failure once a minute.
_failures = SeldomLog(logger)


def count_views_on(routes: Iterable[str], route_of: Callable[[str], str]) -> None:
    """The declared pages whose views count, and how a request's path names its route (given by
    publisher/publisher.py: the web layer is above this one)."""
    shared_recorder.get().count_views_on(routes, route_of)


def _log_failure(what: str, exc: Exception) -> None:
    _failures.log(
        logging.ERROR, f"Visits: a {what} was not counted (%s; logged at most once a minute)", type(exc).__name__
    )


def record_page_view(scope: Any, status: int) -> None:
    """The middleware's hook at a page's response start: never raises, never awaits."""
    try:
        shared_recorder.get().page_view(scope, status)
    except Exception as exc:  # noqa: BLE001 - counting is never worth a page
        _log_failure("page view", exc)


def record_buy(scope: Any, slug: str, store: str) -> None:
    """A press of a book's buy button the beacon found genuine."""
    try:
        shared_recorder.get().buy(scope, slug, store)
    except Exception as exc:  # noqa: BLE001 - counting is never worth the beacon's answer
        _log_failure("buy press", exc)


def visitors_now(now: datetime) -> int:
    """Distinct visitors in the last VISITORS_NOW_MINUTES minutes: from Redis when the site uses it
    (its sets know them), else from the database's seen rows."""
    redis = shared_redis_sync()
    if redis is None:
        return visit_counts.visitors_now(now, minutes=VISITORS_NOW_MINUTES)
    try:
        return visitor_sets.visitors_now(redis, now, VISITORS_NOW_MINUTES)
    finally:
        redis.close()


def _daily_chores(now: datetime, db_url: str | None = None) -> None:
    visit_counts.drop_expired(now, db_url)
    visit_counts.prune(visit_rules.day_of(now), settings.current().visits_keep_days, db_url)


def configured_loop(recorder: Recorder, db_url: str | None = None) -> FlushLoop:
    """The flush loop on Redis when Reflex uses it (salts and seen sets), else on the database; the
    counts always go to the database."""
    redis = shared_redis()
    return FlushLoop(
        recorder,
        DatabaseSalts(db_url) if redis is None else RedisSalts(redis),
        functools.partial(visit_counts.flush, db_url=db_url),
        functools.partial(_daily_chores, db_url=db_url),
        FLUSH_INTERVAL_S,
        visitor_sets=None if redis is None else visitor_sets.RedisVisitorSets(redis),
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
