"""The kv over a store that searches its own vectors (PostgreSQL with pgvector): memory holds a
bounded set of recent entries, the store holds the rest.

:class:`HotEntries` is the stage's entry map in that case: at most ``capacity`` entries, the
least recently stored or found dropped first (a dropped one is read again from the store when a
search or an exact lookup finds it; a search's rows are held until its guard has checked them,
unless more than ``capacity`` other rows are held meanwhile by concurrent searches, which makes
a candidate a miss, never another answer). :class:`StoreIndex` stands where the stage's vector index
stands: ``add`` and ``remove`` do nothing (the store wrote or deleted the row with its vector in
the same transaction as the pair), and ``search`` asks the store for the nearest rows, hands
them to the stage to hold, then offers them to ``prefilter`` and ``accept`` best first, as the
in-memory indexes do.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from eoc.errors import ConfigError
from eoc.stages.index import MAX_SCORED, Offers
from eoc.store.protocols import KVRow, VectorSearch

HOT_ENTRIES = 20_000
"""Entries a kv over a searching store keeps in memory, at most (about 1 KB each with the guard's
analysis of the question): what a replica holds whatever the store holds."""
FIRST_ROWS = 8
"""Rows a search asks the store for first, per hit wanted (four times as many, up to
``MAX_SCORED`` per hit, only when every one of them cleared the threshold and was refused)."""

MIN_HOT = 4 * MAX_SCORED
"""The fewest entries a hot set may be made to hold: more than one search can hold at once (at
most ``MAX_SCORED`` rows a hit asked for), so the rows a search just read are still held while
its guard checks them."""

V = TypeVar("V")


class HotEntries(Generic[V]):
    """A dict of at most ``capacity`` items that drops its least recently set or read one."""

    def __init__(self, capacity: int = HOT_ENTRIES) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < MIN_HOT:
            raise ConfigError(
                f"capacity must be a whole number of at least {MIN_HOT}, got {capacity!r}"
            )
        self.capacity = capacity
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is None:
                return default
            self._items.move_to_end(key)
            return value

    def __setitem__(self, key: str, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def pop(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._items.pop(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def values(self) -> list[V]:
        with self._lock:
            return list(self._items.values())

    def items(self) -> list[tuple[str, V]]:
        with self._lock:
            return list(self._items.items())


class StoreIndex:
    """The stage's vector index over a store's own search (see the module).

    Args:
        search: the store's search.
        hold: takes the rows a search found (the stage keeps them among its hot entries) and
            returns the key memory holds each under, in order (``None`` for a row it refused).
    """

    kind = "store"
    accepts_prefilter = True

    def __init__(
        self, search: VectorSearch, hold: Callable[[Sequence[KVRow]], list[str | None]]
    ) -> None:
        self.store_search = search
        self._hold = hold

    def add(self, key: Hashable, vec: Any) -> None:
        """Nothing: the store wrote the vector with its pair."""

    def remove(self, key: Hashable) -> bool:
        """Nothing: the store deletes the vector with its pair."""
        return False

    def search(
        self,
        vec: Any,
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
        *,
        prefilter: Callable[[Hashable], bool] | None = None,
        parts: Sequence[str] | None = None,
    ) -> list[tuple[float, Hashable]]:
        """Up to ``limit`` ``(cosine, key)`` at or above ``threshold``, best first, among the
        store's nearest rows of the partitions ``parts`` (``None``: all); at most
        ``MAX_SCORED`` × ``limit`` are handed to ``accept``."""
        offers = Offers(threshold, limit, accept, prefilter)
        k = FIRST_ROWS * limit
        while True:
            found = self.store_search.nearest(vec, k, parts)
            # held worst first, so the best are the most recently held: the last dropped
            keys = self._hold([row for _, row in reversed(found)])[::-1]
            if offers.take(zip([score for score, _ in found], keys, strict=True)):
                return offers.hits
            if len(found) < k or k >= MAX_SCORED * limit:
                return offers.hits
            k = min(k * 4, MAX_SCORED * limit)

    def __len__(self) -> int:
        return self.store_search.count()


__all__ = ["FIRST_ROWS", "HOT_ENTRIES", "MIN_HOT", "HotEntries", "StoreIndex"]
