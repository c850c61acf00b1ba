"""Each worker's background loop: its tally to the database every few seconds, the salts, the
clean-up. A failure costs that batch only, with a warning: the loop never dies of a database or
Redis that is away."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import date, datetime

from publisher.rules import visit_rules
from publisher.storage.visit_counts import Batch
from publisher.visits.recorder import Recorder
from publisher.visits.salts import SaltStore
from publisher.visits.visitor_sets import RedisVisitorSets

logger = logging.getLogger(__name__)

Flush = Callable[[Batch, bool], None]  # (batch, seen_done): storage/visit_counts.flush


class FlushLoop:
    def __init__(
        self,
        recorder: Recorder,
        store: SaltStore,
        flush: Flush,
        daily_chores: Callable[[datetime], None],
        interval_s: float,
        visitor_sets: RedisVisitorSets | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        """``flush`` and ``daily_chores`` run in a thread (they block on the database); ``visitor_sets``:
        Redis's seen sets, None where the database keeps them."""
        self.recorder = recorder
        self.store = store
        self.flush = flush
        self.daily_chores = daily_chores
        self.interval_s = interval_s
        self.visitor_sets = visitor_sets
        self.sleep = sleep
        self._chores_done_on: date | None = None

    async def load_salts(self) -> None:
        """A failure is logged and counting goes on with views only until a later turn fetches the salt."""
        try:
            await self.recorder.salts.refresh(self.store, self.recorder.clock())
        except Exception as exc:  # noqa: BLE001 - any store failure: count views without visitors
            logger.warning("Visits: the day's salt is not available (%s); counting views only", type(exc).__name__)

    async def _mark_visitors(self, batch: Batch) -> None:
        """With Redis: which of the batch's visitors are new. Redis away: the views are kept, the
        visitors of this window are lost (the database's seen rows would count them twice)."""
        assert self.visitor_sets is not None
        try:
            await self.visitor_sets.mark(batch)
        except Exception as exc:  # noqa: BLE001 - Redis away: keep the views
            logger.warning("Visits: Redis did not answer (%s); this window's visitors are lost", type(exc).__name__)
            batch.seen = set()
            batch.new_visitors = {}

    async def flush_once(self) -> None:
        """Write what was counted since the last turn; on an error only this batch is lost."""
        if self.recorder.tally.is_empty():
            return
        batch = self.recorder.tally.take()
        if self.visitor_sets is not None:
            await self._mark_visitors(batch)
        try:
            await asyncio.to_thread(self.flush, batch, self.visitor_sets is not None)
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
            await asyncio.to_thread(self.daily_chores, now)
        except Exception as exc:  # noqa: BLE001 - tried again at the next turn
            logger.warning("Visits: the daily clean-up failed (%s); trying again", type(exc).__name__)
            return
        self._chores_done_on = today

    async def run(self) -> None:
        """Turn every ``interval_s`` until cancelled."""
        while True:
            await self.sleep(self.interval_s)
            try:
                await self.flush_once()
                await self.load_salts()
                await self.chores_once_a_day()
            except Exception as exc:  # noqa: BLE001 - the loop outlives any one turn
                logger.error("Visits: a turn of the flush loop failed (%s); the next one goes on", type(exc).__name__)
