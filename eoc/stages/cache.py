"""The cache stage: a content-addressed LRU keyed by query id, bounded by entries and bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict

from eoc.errors import ConfigError, InvalidText
from eoc.query import Query, Stage, check_text
from eoc.stages.base import Answer, stage_figure, work_estimate

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
        try:
            qid = query.id
        except AttributeError:  # the hot path: a try costs nothing when it does not raise
            qid = qid_of(query)
        with self._lock:
            answer = self._entries.get(qid)
            if answer is not None:
                self._entries.move_to_end(qid)
                if answer.cost is None and not self._flat:
                    # the same id means the same prompt, so the figure is computed once per entry
                    answer.cost = work_estimate(Stage.CACHE, nbytes=query.size)
            return answer

    def remember(self, query: Query, payload: str, origin: str = "") -> str | None:
        """Cache ``payload`` as the answer to ``query``, made by ``origin`` ("" when no model
        made it), evicting the least recently used.

        Raises:
            InvalidText: ``payload`` or ``origin`` is not valid text (nothing is cached).
        """
        self._insert(qid_of(query), checked_answer(payload), checked_origin(origin))
        return None

    def _insert(self, qid: str, payload: str, origin: str = "") -> list[str] | None:
        """Store an answer; returns the ids evicted for it, or ``None`` if it was not stored."""
        with self._lock:
            plan = self._plan(qid, payload)
            if plan is None:
                return None
            self._apply(qid, payload, *plan, origin=origin)
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
        self, qid: str, payload: str, size: int, evicted: list[str], *, origin: str = ""
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
        self._entries[qid] = Answer(payload, None, origin)
        self._sizes[qid] = size
        self._bytes += size

    def forget(self, query: Query) -> bool:
        """Drop one entry; True if it was there."""
        qid = qid_of(query)
        with self._lock:
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
    "qid_of",
]
