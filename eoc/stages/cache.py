"""The cache stage: a content-addressed LRU keyed by query id, bounded by entries and bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict

from eoc.errors import ConfigError
from eoc.query import Query, Stage
from eoc.stages.base import Answer, stage_figure, work_estimate

_ENTRY_OVERHEAD_BYTES = 160  # id string, dict slot and Answer object, roughly


class CacheStage:
    """Remembers answers by query id; evicts the least recently used past either bound.

    Args:
        max_entries: most answers kept (at least 1).
        max_bytes: most bytes kept, counting UTF-8 payload plus a fixed overhead per entry.
        figure_uj: a flat per-hit figure (ESTIMATED). By default a hit is charged
            :func:`~eoc.stages.base.work_estimate`, which grows with the bytes of the prompt
            hashed to find it.
    """

    stage = Stage.CACHE

    def __init__(
        self, max_entries: int = 100_000, max_bytes: int = 64 << 20, *, figure_uj: int | None = None
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.figure = stage_figure(Stage.CACHE, figure_uj)
        self._flat = figure_uj is not None
        self._entries: OrderedDict[str, Answer] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def lookup(self, query: Query) -> Answer | None:
        qid = query.id
        with self._lock:
            answer = self._entries.get(qid)
            if answer is not None:
                self._entries.move_to_end(qid)
                if answer.cost is None and not self._flat:
                    # the same id means the same prompt, so the figure is computed once per entry
                    answer.cost = work_estimate(Stage.CACHE, nbytes=query.size)
            return answer

    def remember(self, query: Query, payload: str) -> None:
        self._insert(query.id, payload)

    def _insert(self, qid: str, payload: str) -> list[str] | None:
        """Store an answer; returns the ids evicted for it, or ``None`` if it was not stored."""
        size = len(payload.encode("utf-8")) + _ENTRY_OVERHEAD_BYTES
        if size > self.max_bytes:
            return None  # larger than the whole cache: never cached, and nothing is evicted for it
        evicted: list[str] = []
        with self._lock:
            old = self._sizes.pop(qid, None)
            if old is not None:
                self._bytes -= old
                del self._entries[qid]
            self._entries[qid] = Answer(payload)
            self._sizes[qid] = size
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                gone, _ = self._entries.popitem(last=False)
                self._bytes -= self._sizes.pop(gone)
                evicted.append(gone)
        return evicted

    def forget(self, query: Query) -> bool:
        """Drop one entry; True if it was there."""
        with self._lock:
            size = self._sizes.pop(query.id, None)
            if size is None:
                return False
            self._bytes -= size
            del self._entries[query.id]
            return True

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._bytes = 0

    @property
    def bytes_used(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, query: object) -> bool:
        return isinstance(query, Query) and query.id in self._entries


__all__ = ["CacheStage"]
