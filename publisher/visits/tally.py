"""One worker's counts between two flushes, in memory. Past ``max_keys`` distinct keys of a kind in
one flush, new keys fold into ``(other)``: a flood of forged tags or referrers from many addresses
cannot grow the worker's memory, and the real pages, a few dozen keys, are never folded."""

from __future__ import annotations

from collections import Counter
from datetime import date

from publisher.rules.visit_rules import OTHER, VisitKind
from publisher.storage.visit_counts import Batch


class Tally:
    """Views and seen visitors of one flush window. Used on the event loop only (no lock)."""

    def __init__(self, max_keys: int):
        self.max_keys = max_keys
        self._batch = Batch()
        self._keys_per_kind: Counter[str] = Counter()

    def _capped(self, day: date, kind: str, key: str) -> tuple[date, str, str]:
        counted = (day, kind, key)
        if counted in self._batch.views:
            return counted
        if self._keys_per_kind[kind] >= self.max_keys:
            return (day, kind, OTHER)
        self._keys_per_kind[kind] += 1
        return counted

    def view(self, day: date, kind: str, key: str, visitor: bytes | None) -> None:
        """One view of ``key``, by ``visitor`` (None when today's salt is not known yet)."""
        counted = self._capped(day, kind, key)
        self._batch.views[counted] = self._batch.views.get(counted, 0) + 1
        if visitor is not None:
            self._batch.seen.add((*counted, visitor))

    def seen_only(self, day: date, kind: str, key: str, visitor: bytes) -> None:
        """A visitor seen under ``key`` without a view counted (the minute, for visitors now)."""
        self._batch.seen.add((day, kind, key, visitor))

    def bot(self, day: date) -> None:
        """One view by a bot: counted apart, as one figure a day, with no visitor."""
        self.view(day, VisitKind.BOT, "", None)

    def take(self) -> Batch:
        """Everything counted since the last take; the tally starts again empty."""
        batch, self._batch = self._batch, Batch()
        self._keys_per_kind = Counter()
        return batch

    def is_empty(self) -> bool:
        return not self._batch.views and not self._batch.seen
