"""The cache stage: a content-addressed LRU keyed by query id, bounded by entries and bytes."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from eoc.entry import UNKNOWN, EntryMeta, Generation, checked_generation, checked_ttl
from eoc.errors import ConfigError, InvalidText
from eoc.query import Query, Stage, check_text
from eoc.stages.base import Answer, stage_figure, work_estimate
from eoc.text.forms import fold

_ENTRY_OVERHEAD_BYTES = 160  # id string, dict slot and Answer object, roughly
MAX_ANSWER_BYTES = 1 << 20
"""Largest answer cached, in UTF-8 bytes: the largest reply the neural stage accepts."""


def checked_answer(payload: object) -> str:
    """Validate an answer about to be cached (see :func:`eoc.query.check_text`).

    Raises:
        InvalidText: not text, lone surrogates, control characters, empty, or too long.
    """
    return check_text(payload, "a cached answer", max_bytes=MAX_ANSWER_BYTES)


MAX_ORIGIN_BYTES = 4096
"""Largest record of what made an answer (a model's identity and parameters), in UTF-8 bytes."""


def checked_origin(origin: object) -> str:
    """Validate what made an answer: "" (no model) or valid text of at most
    :data:`MAX_ORIGIN_BYTES` bytes.

    Raises:
        InvalidText: anything else.
    """
    if origin == "":
        return ""
    return check_text(origin, "an answer's origin", max_bytes=MAX_ORIGIN_BYTES)


def asked_of(question: str) -> str:
    """The digest a cache entry records of the question it answers (``EntryMeta.asked``): the
    first 32 hex digits of the SHA-256 of the question as the kv folds it."""
    return hashlib.sha256(fold(question).encode("utf-8")).hexdigest()[:32]


def new_meta(
    now: float,
    generation: Generation | None,
    ttl: object,
    *,
    what: str = "an entry's TTL",
    asked: str | None = None,
) -> EntryMeta:
    """The record of an entry remembered at ``now``: made by a model (``generation``) or not
    (``None``), expiring ``ttl`` seconds later (``None``: by the store's TTL only); ``asked``:
    for a cache entry, the question it answers (:func:`asked_of`).

    Raises:
        ConfigError: a bad ``ttl`` (see :func:`eoc.entry.checked_ttl`).
        InvalidText: a bad ``generation``.
    """
    seconds = checked_ttl(ttl, what)
    gen = None if generation is None else checked_generation(generation)
    expires = None if seconds is None else round(now + seconds, 3)
    return EntryMeta(round(now, 3), expires, gen, asked)


def replayed(origin: str, meta: EntryMeta | None) -> Generation | None:
    """What a remembered answer replays of its generation: the one kept, :data:`UNKNOWN` for a
    model's answer kept without one, ``None`` for an answer no model made."""
    if meta is not None and meta.generation is not None:
        return meta.generation
    return UNKNOWN if origin else None


def stale(answer_origin: str, meta: EntryMeta | None, now: float, ttl: float | None) -> bool:
    """Whether an entry may no longer be served: past its own expiry, or, under a store-wide
    ``ttl``, a model's answer older than it (or of unknown age). Answers no model made (the pack,
    the graph, a computation) are aged by their own TTL only."""
    if meta is None:
        return ttl is not None and bool(answer_origin)
    return meta.expired(now, ttl if answer_origin else None)


def qid_of(query: object) -> str:
    """The id of a :class:`Query`; anything else is :class:`InvalidText`, not AttributeError."""
    try:
        return query.id  # type: ignore[attr-defined,no-any-return]
    except AttributeError:
        raise InvalidText(f"a cache is asked with a Query, not {type(query).__name__}") from None


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
    """

    stage = Stage.CACHE

    def __init__(
        self,
        max_entries: int = 100_000,
        max_bytes: int = 64 << 20,
        *,
        figure_uj: int | None = None,
        ttl: float | str | None = None,
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

    def set_ttl(self, ttl: float | str | None) -> None:
        """Set the store-wide TTL (seconds, "7d", or ``None`` for none): from now on a model's
        answer older than it, or of unknown age, is never served.

        Raises:
            ConfigError: negative, zero, absurd (over a hundred years) or not a number.
        """
        self.ttl = checked_ttl(ttl, "the store's TTL")
        self._aging = self._aging or self.ttl is not None

    def lookup(self, query: Query) -> Answer | None:
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
        """Delete from the store's file what lookups saw expired (memory has no file)."""

    def peek(self, qid: str) -> Answer | None:
        """The entry for the query id ``qid`` when it may be served as it stands, without a
        :class:`Query` (the cascade's exact-repeat path, :meth:`eoc.cascade.Cascade.resolve`):
        this cache has no TTL and the entry's cost is already set. Moves it to the front of the
        LRU order like :meth:`lookup`. ``None`` sends the caller to :meth:`lookup`.

        It takes no lock: each of its two steps is one operation on the ``OrderedDict``, atomic
        under CPython's GIL (and Pyodide runs one thread), and an entry evicted between them is
        left to :meth:`lookup`."""
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

        Raises:
            InvalidText: ``payload``, ``origin`` or ``generation`` is not valid (nothing is
                cached).
            ConfigError: a bad ``ttl``.
        """
        meta = new_meta(self.now(), generation, ttl, asked=asked_of(query.prompt))
        self._insert(qid_of(query), checked_answer(payload), checked_origin(origin), meta)
        return None

    def _insert(
        self, qid: str, payload: str, origin: str = "", meta: EntryMeta | None = None
    ) -> list[str] | None:
        """Store an answer; returns the ids evicted for it, or ``None`` if it was not stored."""
        with self._lock:
            plan = self._plan(qid, payload)
            if plan is None:
                return None
            self._apply(qid, payload, *plan, origin=origin, meta=meta)
            return plan[1]

    def _plan(self, qid: str, payload: str) -> tuple[int, list[str]] | None:
        """What storing would do, without doing it: the entry's size and the ids it evicts.

        ``None`` if the answer is larger than the whole cache (never cached, nothing evicted).
        The caller holds ``_lock``. Planning apart from applying lets a store that writes
        through (:class:`eoc.persist.SqliteCache`) change memory only once the write committed.
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
        """Drop one entry; True if it was there."""
        qid = qid_of(query)
        with self._lock:
            return self._drop(qid)

    def forget_where(self, match: Callable[..., bool]) -> int:
        """Forget every entry ``match(qid, None, origin, meta)`` picks (:mod:`eoc.forget`);
        how many."""
        with self._lock:
            gone = self._matching(match)
            for qid in gone:
                self._drop(qid)
        return len(gone)

    def _matching(self, match: Callable[..., bool]) -> list[str]:
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


__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_ORIGIN_BYTES",
    "CacheStage",
    "checked_answer",
    "checked_origin",
    "new_meta",
    "qid_of",
    "replayed",
    "stale",
]
