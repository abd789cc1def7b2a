"""The cache stage: a content-addressed LRU keyed by query id, bounded by entries and bytes.

Its answers live in a store (:mod:`eoc.store`): the memory store by default, SQLite's or
PostgreSQL's where they must survive the process. The stage keeps the working set in memory and
writes through the store before memory changes."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from eoc.errors import ConfigError
from eoc.query import Query, Stage
from eoc.stages.base import Answer, stage_figure, work_estimate
from eoc.store.entry import EntryMeta, Generation, checked_ttl
from eoc.store.memory import MemoryCacheStore
from eoc.store.protocols import CacheRow, CacheStore, Damage, Match
from eoc.store.rules import (
    MAX_ANSWER_BYTES,
    MAX_ORIGIN_BYTES,
    asked_of,
    checked_answer,
    checked_origin,
    new_meta,
    qid_of,
    replayed,
    stale,
)

_ENTRY_OVERHEAD_BYTES = 160  # id string, dict slot and Answer object, roughly


class CacheStage:
    """Remembers answers by query id; evicts the least recently used past either bound.

    Args:
        max_entries: most answers kept (at least 1).
        max_bytes: most bytes kept, counting UTF-8 payload plus a fixed overhead per entry.
        figure_uj: a flat per-hit figure (ESTIMATED). By default a hit is charged
            :func:`~eoc.stages.base.work_estimate`, which grows with the bytes of the prompt
            hashed to find it.
        ttl: the store-wide TTL in seconds (or a duration text, "7d"): a model's answer older
            than it is never served (nor one of unknown age); ``None``: none. An entry's own
            TTL (``remember(..., ttl=)``) applies either way.
        store: where the answers live beyond memory (:class:`eoc.store.CacheStore`); by default
            :class:`~eoc.store.memory.MemoryCacheStore`, which keeps nothing beyond memory. The
            answers it holds are read once, at construction, newest ``max_entries`` kept.

    Raises (with a store): what the store raises opening or reading, before anything is served.
    """

    stage = Stage.CACHE

    def __init__(
        self,
        max_entries: int = 100_000,
        max_bytes: int = 64 << 20,
        *,
        figure_uj: int | None = None,
        ttl: float | str | None = None,
        store: CacheStore | None = None,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.ttl = checked_ttl(ttl, "the store's TTL")
        self.now: Callable[[], float] = time.time  # Unix seconds (tests set a fake clock)
        self._latest = 0.0  # the latest time read (a clock set back never revives an entry)
        self._expired: list[str] = []  # seen expired: removed from the store after the lookup
        self._aging = self.ttl is not None  # True once any entry may expire
        self.figure = stage_figure(Stage.CACHE, figure_uj)
        self._flat = figure_uj is not None
        self._entries: OrderedDict[str, Answer] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # one writer: memory changes in the store's order
        self.store: CacheStore = MemoryCacheStore() if store is None else store
        self._polls = bool(self.store.polls)
        self._load()
        self.store.listen(self)

    @property
    def damaged(self) -> list[Damage]:
        """The rows the store did not serve: (table, rowid, why)."""
        return self.store.damaged

    def _load(self) -> None:
        """Read the store's answers (oldest first), keeping what memory's bounds allow and no
        expired one, and tell the store what was kept."""
        rows = self.store.rows(self.max_entries)
        if not rows:
            return
        now = self.now()
        with self._lock:
            for row in rows:
                if not stale(row.origin, row.meta, now, self.ttl):
                    self._place(row)
            kept = set(self._entries)
        self.store.kept_only(kept)

    def _place(self, row: CacheRow) -> None:
        """Put ``row`` in memory, evicting for it; the caller holds ``_lock``."""
        plan = self._plan(row.qid, row.payload)
        if plan is not None:
            self._apply(row.qid, row.payload, *plan, origin=row.origin, meta=row.meta)

    # -- what a store calls (eoc.store.CacheListener) ---------------------------------

    def take(self, row: CacheRow) -> None:
        """Another process wrote ``row`` to the store: serve it here too (not when expired)."""
        if stale(row.origin, row.meta, self.now(), self.ttl):
            return
        with self._lock:
            self._place(row)

    def holds(self, qid: str) -> bool:
        return qid in self._entries

    def keep_only(self, kept: Callable[[str, str], bool]) -> None:
        """Another process forgot something: drop every entry ``kept(qid, origin)`` refuses."""
        with self._lock:
            for qid in [q for q, a in self._entries.items() if not kept(q, a.origin)]:
                self._drop(qid)

    def set_ttl(self, ttl: float | str | None) -> None:
        """Set the store-wide TTL (seconds, "7d", or ``None`` for none): from now on a model's
        answer older than it, or of unknown age, is never served.

        Raises:
            ConfigError: negative, zero, absurd (over a hundred years) or not a number.
        """
        self.ttl = checked_ttl(ttl, "the store's TTL")
        self._aging = self._aging or self.ttl is not None

    def lookup(self, query: Query) -> Answer | None:
        if self._polls:
            self.store.poll()
        try:
            qid = query.id
        except AttributeError:  # the hot path: a try costs nothing when it does not raise
            qid = qid_of(query)
        with self._lock:
            answer = self._entries.get(qid)
            if answer is None:
                return None
            if self._aging and stale(answer.origin, answer.meta, self._clock(), self.ttl):
                self._drop(qid)  # expired: never served, removed from memory now
                self._expired.append(qid)
                answer = None
            else:
                self._entries.move_to_end(qid)
                if answer.cost is None and not self._flat:
                    # the same id means the same prompt, so the figure is computed once per entry
                    answer = replace(answer, cost=work_estimate(Stage.CACHE, nbytes=query.size))
                    self._entries[qid] = answer
        if answer is None:
            self._remove_expired()
        return answer

    def _clock(self) -> float:
        """Now, for expiry: the clock, but never earlier than a time this stage has read, so an
        entry once seen expired is not served again when the clock is set back."""
        t = self.now()
        if t < self._latest:
            return self._latest
        self._latest = t
        return t

    def _remove_expired(self) -> None:
        """Remove from the store what lookups saw expired (memory drops it at once; a store
        that keeps a file deletes the rows, so no later start with an earlier clock serves
        them)."""
        with self._lock:
            qids, self._expired = self._expired, []
        if qids:
            self._delete_expired(qids)

    def _delete_expired(self, qids: list[str]) -> None:
        """Delete from the store what lookups saw expired, unless written again meanwhile:
        expiry, once seen, is final, whatever a later start's clock says."""
        with self._write_lock:
            with self._lock:
                gone = [q for q in qids if q not in self._entries]
            if gone:
                self.store.delete(gone)

    def peek(self, qid: str) -> Answer | None:
        """The entry for the query id ``qid`` when it may be served as it stands, without a
        :class:`Query` (the cascade's exact-repeat path, :meth:`eoc.cascade.Cascade.resolve`):
        this cache has no TTL and the entry's cost is already set. Moves it to the front of the
        LRU order like :meth:`lookup`. ``None`` sends the caller to :meth:`lookup`.

        It takes no lock: each of its two steps is one operation on the ``OrderedDict``, atomic
        under CPython's GIL (and Pyodide runs one thread), and an entry evicted between them is
        left to :meth:`lookup`."""
        if self._polls:
            self.store.poll()
        if self._aging:
            return None
        entries = self._entries
        answer = entries.get(qid)
        if answer is None or answer.cost is None:
            return None
        try:
            entries.move_to_end(qid)
        except KeyError:  # evicted or forgotten meanwhile
            return None
        return answer

    def remember(
        self,
        query: Query,
        payload: str,
        origin: str = "",
        *,
        generation: Generation | None = None,
        ttl: float | str | None = None,
    ) -> str | None:
        """Cache ``payload`` as the answer to ``query``, made by ``origin`` ("" when no model
        made it) as ``generation`` says, evicting the least recently used. ``ttl``: seconds
        (or "12h") after which it is never served.

        Returns ``None`` once written through the store, or :data:`~eoc.store.PENDING` when a
        shared store is down and holds the write until it is back.

        Raises:
            InvalidText: ``payload``, ``origin`` or ``generation`` is not valid (nothing is
                cached).
            ConfigError: a bad ``ttl``.
            StoreError: the store's write failed; memory and store are as they were.
        """
        qid, payload, origin = qid_of(query), checked_answer(payload), checked_origin(origin)
        meta = new_meta(self.now(), generation, ttl, asked=asked_of(query.prompt))
        row = CacheRow(qid, payload, origin, meta)
        with self._write_lock:
            with self._lock:
                plan = self._plan(qid, payload)
            if plan is None:
                return None  # larger than the whole cache: never cached
            said = self.store.put(row, plan[1])
            with self._lock:  # lookups may have reordered entries meanwhile: planned again
                self._place(row)
        return said

    def _plan(self, qid: str, payload: str) -> tuple[int, list[str]] | None:
        """What storing would do, without doing it: the entry's size and the ids it evicts.

        ``None`` if the answer is larger than the whole cache (never cached, nothing evicted).
        The caller holds ``_lock``. Planning apart from applying lets the stage tell the store
        what memory evicts, and change memory only once the store's write committed.
        """
        size = len(payload.encode("utf-8")) + _ENTRY_OVERHEAD_BYTES
        if size > self.max_bytes:
            return None
        old = self._sizes.get(qid)
        count = len(self._entries) + (old is None)
        total = self._bytes - (old or 0) + size
        evicted: list[str] = []
        for gone in self._entries:  # oldest first; the entry itself moves to the newest end
            if count <= self.max_entries and total <= self.max_bytes:
                break
            if gone != qid:
                evicted.append(gone)
                count -= 1
                total -= self._sizes[gone]
        return size, evicted

    def _apply(
        self,
        qid: str,
        payload: str,
        size: int,
        evicted: list[str],
        *,
        origin: str = "",
        meta: EntryMeta | None = None,
    ) -> None:
        """Carry out a plan from :meth:`_plan`; the caller holds ``_lock``."""
        for gone in evicted:
            dropped = self._sizes.pop(gone, None)
            if dropped is not None:
                self._bytes -= dropped
                del self._entries[gone]
        old = self._sizes.pop(qid, None)
        if old is not None:
            self._bytes -= old
            del self._entries[qid]
        answer = Answer(payload, None, origin, meta=meta, generation=replayed(origin, meta))
        if meta is not None and meta.expires_at is not None:
            self._aging = True
        self._entries[qid] = answer
        self._sizes[qid] = size
        self._bytes += size

    def forget(self, query: Query) -> bool:
        """Forget one entry, in the store and then in memory; True if memory held it."""
        qid = qid_of(query)
        with self._write_lock:
            with self._lock:
                held = qid in self._entries  # (a shared store may drop it from memory itself)
            self.store.forget([qid])
            with self._lock:
                self._drop(qid)
            return held

    def forget_where(self, match: Match) -> int:
        """Forget every entry ``match(qid, None, origin, meta)`` picks (:mod:`eoc.store.forget`), in
        the store (every row it picks, in a store that holds more than memory) and then in
        memory; how many."""
        with self._write_lock:
            with self._lock:
                held = self._matching(match)
            gone = self.store.forget(held, match)
            with self._lock:
                for qid in gone:
                    self._drop(qid)
        return len(gone)

    def _matching(self, match: Match) -> list[str]:
        """The ids of the entries ``match`` picks; the caller holds ``_lock``."""
        return [q for q, a in self._entries.items() if match(q, None, a.origin, a.meta)]

    def _drop(self, qid: str) -> bool:
        """Drop one entry from memory; the caller holds ``_lock``."""
        size = self._sizes.pop(qid, None)
        if size is None:
            return False
        self._bytes -= size
        del self._entries[qid]
        return True

    def clear(self) -> None:
        """Forget every answer, in the store and then in memory."""
        with self._write_lock:
            self.store.clear()
            with self._lock:
                self._entries.clear()
                self._sizes.clear()
                self._bytes = 0

    def close(self) -> None:
        """Close the store (a file, a pool); the memory store holds nothing open."""
        self.store.close()

    @property
    def bytes_used(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, query: object) -> bool:
        return isinstance(query, Query) and query.id in self._entries


__all__ = ["MAX_ANSWER_BYTES", "MAX_ORIGIN_BYTES", "CacheStage"]
