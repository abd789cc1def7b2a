"""Vector indexes for the kv stage over dense unit vectors (cosine = dot product).

* :class:`ExactIndex` — numpy brute force: every stored vector scored; right by definition.
* :class:`AnnIndex` — an HNSW graph from ``faiss`` (Meta, MIT) for large stores; its
  candidates are re-scored exactly, so a served hit's cosine is never approximate, only the
  candidate list is.
* :class:`AutoIndex` — exact while the store is small, HNSW once it passes ``switch_at``.

All three implement :class:`eoc.stages.index.VectorIndex`, and, like the core's
:class:`~eoc.stages.index.SparseIndex`, take a cheap ``prefilter`` that candidates must pass
before ``accept`` sees them, and hand ``accept`` at most
:data:`~eoc.stages.index.MAX_SCORED` candidates per hit asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from eoc.errors import BadEmbedding, ConfigError
from eoc.stages.index import MAX_SCORED
from eoc_native import require


def _vector(vec: Any, dim: int) -> Any:
    np = require("numpy")
    v = np.asarray(vec, dtype=np.float32).reshape(-1)
    if v.shape[0] != dim:
        raise BadEmbedding(f"embedding has {v.shape[0]} dimensions; this index has {dim}")
    if not np.isfinite(v).all():
        raise BadEmbedding("embedding holds NaN or infinity")
    n = float(np.linalg.norm(v))
    if n == 0.0:
        raise BadEmbedding("embedding is all zeros, so it has no direction")
    return v / n


def _check(threshold: float, limit: int) -> None:
    if not (isinstance(threshold, (int, float)) and -1.0 <= threshold <= 1.0):
        raise ConfigError(f"threshold must be a cosine in [-1, 1], got {threshold!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit must be a whole number of at least 1, got {limit!r}")


class ExactIndex:
    """Brute-force cosine search over a growing float32 matrix."""

    kind = "exact"
    accepts_prefilter = True

    def __init__(self, dim: int = 384) -> None:
        np = require("numpy")
        self.dim = dim
        self._m = np.zeros((1024, dim), np.float32)
        self._keys: list[Hashable] = []
        self._row: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, vec: Any) -> None:
        np = require("numpy")
        v = _vector(vec, self.dim)
        with self._lock:
            row = self._row.get(key)
            if row is None:
                row = len(self._keys)
                if row == self._m.shape[0]:
                    self._m = np.concatenate([self._m, np.zeros_like(self._m)])
                self._keys.append(key)
                self._row[key] = row
            self._m[row] = v

    def remove(self, key: Hashable) -> bool:
        with self._lock:
            row = self._row.pop(key, None)
            if row is None:
                return False
            last = len(self._keys) - 1
            if row != last:  # move the last row into the hole
                self._m[row] = self._m[last]
                moved = self._keys[last]
                self._keys[row] = moved
                self._row[moved] = row
            self._keys.pop()
            return True

    def scores(self, keys: Sequence[Hashable], q: Any) -> list[tuple[float, Hashable]]:
        """Exact cosine of a unit query against the stored vectors of ``keys`` (absent keys skipped)."""
        with self._lock:
            return [
                (float(self._m[row] @ q), key)
                for key in keys
                if (row := self._row.get(key)) is not None
            ]

    def vectors(self) -> tuple[list[Hashable], Any]:
        with self._lock:
            return list(self._keys), self._m[: len(self._keys)].copy()

    def search(
        self,
        vec: Any,
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
        *,
        prefilter: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]:
        """Up to ``limit`` ``(cosine, key)`` pairs at or above ``threshold``, best first.

        Keys refused by ``prefilter`` are skipped; at most ``MAX_SCORED`` × ``limit`` of the
        rest are handed to ``accept`` (near-duplicates all refused would otherwise each be
        checked), so a candidate past those is not served.
        """
        np = require("numpy")
        _check(threshold, limit)
        q = _vector(vec, self.dim)
        budget = MAX_SCORED * limit
        with self._lock:
            n = len(self._keys)
            if n == 0:
                return []
            scores = self._m[:n] @ q
            # compared as Python floats were before (float32 would round the threshold)
            above = np.flatnonzero(scores.astype(np.float64) >= threshold)
            order = above[np.argsort(-scores[above], kind="stable")]
            hits: list[tuple[float, Hashable]] = []
            keys = self._keys
            for i in order.tolist():
                key = keys[i]
                if prefilter is not None and not prefilter(key):
                    continue
                if budget == 0:
                    break
                budget -= 1
                if accept is None or accept(key):
                    hits.append((min(float(scores[i]), 1.0), key))
                    if len(hits) >= limit:
                        break
        return hits

    def __len__(self) -> int:
        return len(self._keys)


class AnnIndex:
    """HNSW (faiss) candidates, re-scored exactly against the stored vectors.

    faiss's HNSW cannot delete, so a removed or replaced key is a tombstone that searches skip;
    the graph is rebuilt once a quarter of it is tombstones.
    """

    kind = "hnsw"
    accepts_prefilter = True

    def __init__(self, dim: int = 384, *, expansion: int = 128, connectivity: int = 32) -> None:
        self._faiss = require("faiss", package="faiss-cpu", why="the approximate kv index")
        self.dim = dim
        self.expansion = expansion
        self.connectivity = connectivity
        self._exact = ExactIndex(dim)  # keeps the vectors for exact re-scoring and rebuilds
        self._ids: dict[Hashable, int] = {}  # live key -> faiss id
        self._keys: dict[int, Hashable] = {}  # faiss id -> key (live or tombstone)
        self._dead: set[int] = set()
        self._lock = threading.Lock()
        self._new_graph()

    def _new_graph(self) -> None:
        f = self._faiss
        self._index = f.IndexHNSWFlat(self.dim, self.connectivity, f.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = 128
        self._index.hnsw.efSearch = self.expansion
        self._keys = {}
        self._dead = set()

    def add(self, key: Hashable, vec: Any) -> None:
        self.add_many([key], [vec])

    def add_many(self, keys: Sequence[Hashable], vecs: Any) -> None:
        np = require("numpy")
        if not len(keys):
            return
        rows = np.stack([_vector(v, self.dim) for v in vecs]).astype(np.float32)
        with self._lock:
            for key in keys:
                old = self._ids.pop(key, None)
                if old is not None:
                    self._dead.add(old)
            start = self._index.ntotal
            self._index.add(rows)
            for offset, (key, row) in enumerate(zip(keys, rows, strict=True)):
                self._ids[key] = start + offset
                self._keys[start + offset] = key
                self._exact.add(key, row)
            self._maybe_rebuild()

    def _maybe_rebuild(self) -> None:
        if len(self._dead) > max(1024, self._index.ntotal // 4):
            keys, rows = self._exact.vectors()
            self._new_graph()
            self._ids = {}
            if keys:
                self._index.add(rows)
                for i, key in enumerate(keys):
                    self._ids[key] = i
                    self._keys[i] = key

    def remove(self, key: Hashable) -> bool:
        with self._lock:
            i = self._ids.pop(key, None)
            if i is None:
                return False
            self._dead.add(i)
            self._exact.remove(key)
            self._maybe_rebuild()
            return True

    def search(
        self,
        vec: Any,
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
        *,
        prefilter: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]:
        """Up to ``limit`` hits among the graph's nearest candidates, re-scored exactly;
        ``prefilter`` drops keys before they are re-scored or handed to ``accept``."""
        _check(threshold, limit)
        q = _vector(vec, self.dim)
        with self._lock:
            if not self._ids:
                return []
            k = min(max(limit * 8, 16) + len(self._dead), self._index.ntotal)
            _, found = self._index.search(q.reshape(1, -1), k)
            keys = [self._keys[int(i)] for i in found[0] if i >= 0 and int(i) not in self._dead]
        if prefilter is not None:
            keys = [key for key in keys if prefilter(key)]
        hits = [
            (min(s, 1.0), key)
            for s, key in self._exact.scores(keys, q)
            if s >= threshold and (accept is None or accept(key))
        ]
        hits.sort(key=lambda h: h[0], reverse=True)
        return hits[:limit]

    def __len__(self) -> int:
        return len(self._ids)


class AutoIndex:
    """Exact search while small, HNSW once the store passes ``switch_at`` entries."""

    accepts_prefilter = True

    def __init__(self, dim: int = 384, *, switch_at: int = 20_000) -> None:
        self.dim = dim
        self.switch_at = switch_at
        self._made: ExactIndex | AnnIndex | None = None  # made on first use: numpy costs 0.1 s
        self._lock = threading.Lock()

    @property
    def _impl(self) -> ExactIndex | AnnIndex:
        if self._made is None:
            with self._lock:
                if self._made is None:
                    self._made = ExactIndex(self.dim)
        return self._made

    @property
    def kind(self) -> str:
        return "exact" if self._made is None else self._made.kind

    def add(self, key: Hashable, vec: Any) -> None:
        made = self._impl  # before the lock: making it takes the lock
        with self._lock:
            made = self._made or made
            made.add(key, vec)
            if isinstance(made, ExactIndex) and len(made) > self.switch_at:
                keys, rows = made.vectors()
                ann = AnnIndex(self.dim)
                ann.add_many(keys, rows)
                self._made = ann

    def remove(self, key: Hashable) -> bool:
        return False if self._made is None else self._made.remove(key)

    def search(
        self,
        vec: Any,
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
        *,
        prefilter: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]:
        return self._impl.search(vec, threshold, limit, accept, prefilter=prefilter)

    def __len__(self) -> int:
        return 0 if self._made is None else len(self._made)


__all__ = ["AnnIndex", "AutoIndex", "ExactIndex"]
