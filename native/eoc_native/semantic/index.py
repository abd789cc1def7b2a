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

import hashlib
import json
import os
import threading
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

from eoc.errors import BadEmbedding, ConfigError, StoreCorrupt, StoreError
from eoc.files.trust import open_checked
from eoc.stages.index import MAX_SCORED, Offers
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


_MAGIC = b"eoc-hnsw 1\n"
_MAGIC_LINE = 4096
_CHUNK = 16 << 20
"""Bytes a saved index is read in, at a time (hashed, then handed to faiss)."""
"""The header (magic and JSON) is read from the first bytes of a saved index, at most this many."""

EXPANSION = 64
"""Candidates an HNSW search walk keeps (faiss's ``efSearch``), chosen with
``bench/kvscale.py`` on real MiniLM embeddings: recall@1 against exact search at this width is
in the benchmark's figures."""
SAME_VECTOR = 0.9999
"""A key stored again with a vector at least this close to its stored one keeps its row."""
FIRST_CANDIDATES = 4
"""Candidates an HNSW search asks faiss for first, per hit wanted; more (four times as many, up
to ``4 × MAX_SCORED`` per hit) only when every one of them cleared the threshold and was refused."""
CONNECTIVITY = 32
"""Links per HNSW node (faiss's ``M``)."""
CONSTRUCTION = 64
"""Candidates kept while inserting into the HNSW graph (faiss's ``efConstruction``)."""


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
    """An HNSW graph from ``faiss`` (Meta, MIT) over the stored vectors, which faiss keeps.

    The cosine a search returns is exact: faiss scores the graph's candidates against the
    stored float32 vectors themselves (no quantisation), so a served hit's cosine is never
    approximate, only which candidates the graph walks to is. Nothing is kept twice: the
    vectors live in faiss's storage only, and eoc keeps one list slot and one dict entry per key.

    faiss's HNSW cannot delete, so a removed key, or one stored again with another vector,
    leaves a tombstone: a row no key names, skipped when found (a search whose candidates were
    all tombstones or refused asks again, four times wider, up to ``4 × MAX_SCORED`` per hit);
    a key stored again with the same vector (a question answered anew) keeps its row. The graph
    is rebuilt from its own stored vectors once a quarter of it is tombstones. Until then, a
    live entry behind more tombstones than that, all nearer the question, is missed: a miss,
    never another answer. (faiss's filtered walk, an ``IDSelector``, was tried and measured
    worse: it stops once it has passed ``efSearch`` candidates, tombstones included.)

    Args:
        dim: the vectors' dimensions.
        expansion: candidates the search walk keeps (faiss's ``efSearch``): higher finds the
            true nearest more often and costs more per search.
        connectivity: links per node (``M``): memory per entry grows with it by 8 bytes a link.
        construction: candidates kept while inserting (``efConstruction``): the graph's
            quality, paid for at build time.
    """

    kind = "hnsw"
    accepts_prefilter = True

    def __init__(
        self,
        dim: int = 384,
        *,
        expansion: int = EXPANSION,
        connectivity: int = CONNECTIVITY,
        construction: int = CONSTRUCTION,
    ) -> None:
        self._faiss = require("faiss", package="faiss-cpu", why="the approximate kv index")
        for name, value in (
            ("expansion", expansion),
            ("connectivity", connectivity),
            ("construction", construction),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 4096:
                raise ConfigError(f"{name} must be a whole number from 2 to 4096, got {value!r}")
        self.dim = dim
        self.expansion = expansion
        self.connectivity = connectivity
        self.construction = construction
        self._lock = threading.Lock()
        self._new_graph()

    def _new_graph(self) -> None:
        f = self._faiss
        self._index = f.IndexHNSWFlat(self.dim, self.connectivity, f.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = self.construction
        self._index.hnsw.efSearch = self.expansion
        self._key_of: list[Hashable | None] = []  # faiss row -> key (None: a tombstone)
        self._row_of: dict[Hashable, int] = {}  # live key -> faiss row
        self._dead = 0

    def add(self, key: Hashable, vec: Any) -> None:
        self.add_many([key], [vec])

    def add_many(self, keys: Sequence[Hashable], vecs: Any) -> None:
        """Add (or replace) many keys at once: faiss inserts a batch on every core."""
        np = require("numpy")
        if not len(keys):
            return
        rows = np.stack([_vector(v, self.dim) for v in vecs]).astype(np.float32, copy=False)
        if rows.shape[0] != len(keys):
            raise BadEmbedding(f"{len(keys)} keys but {rows.shape[0]} vectors")
        with self._lock:
            latest: dict[Hashable, int] = {}  # a key given twice: its last vector wins
            old = self._index
            for offset, key in enumerate(keys):
                row = self._row_of.get(key)
                vec = rows[offset]
                # the same question stored again (a new answer, a refreshed one) keeps its row:
                # no tombstone, which would crowd the walk near a question answered many times
                if row is not None and float(old.reconstruct(row) @ vec) >= SAME_VECTOR:
                    latest.pop(key, None)
                    continue
                latest[key] = offset
            if len(latest) < len(keys):
                keys = list(latest)
                rows = rows[list(latest.values())]
            if not keys:
                return
            for key in keys:
                self._bury(key)
            start = self._index.ntotal
            self._index.add(rows)
            for offset, key in enumerate(keys):
                self._key_of.append(key)
                self._row_of[key] = start + offset
            self._maybe_rebuild()

    def _bury(self, key: Hashable) -> bool:
        """Make ``key``'s row a tombstone (lock held); False if the key is not live."""
        row = self._row_of.pop(key, None)
        if row is None:
            return False
        self._key_of[row] = None
        self._dead += 1
        return True

    def _maybe_rebuild(self) -> None:
        """Rebuild the graph from its live rows once a quarter of it is tombstones (lock held)."""
        if self._dead <= max(1024, self._index.ntotal // 4):
            return
        np = require("numpy")
        rows = [row for row, key in enumerate(self._key_of) if key is not None]
        keys = [self._key_of[row] for row in rows]
        old = self._index
        vectors = np.empty((len(rows), self.dim), np.float32)
        for start in range(0, len(rows), 65_536):  # bounded temporary copies
            chunk = np.asarray(rows[start : start + 65_536], np.int64)
            vectors[start : start + len(chunk)] = old.reconstruct_batch(chunk)
        self._new_graph()
        if keys:
            self._index.add(vectors)
            for row, key in enumerate(keys):
                self._key_of.append(key)
                self._row_of[key] = row

    def remove(self, key: Hashable) -> bool:
        with self._lock:
            if not self._bury(key):
                return False
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
        """Up to ``limit`` hits among the graph's nearest live candidates, best first, each with
        its exact cosine; ``prefilter`` drops keys before ``accept`` sees them, and at most
        ``MAX_SCORED`` × ``limit`` candidates are handed to ``accept``."""
        _check(threshold, limit)
        q = _vector(vec, self.dim).reshape(1, -1)
        offers = Offers(threshold, limit, accept, prefilter)
        k = FIRST_CANDIDATES * limit
        while True:
            ranked, total = self._nearest(q, k)
            if offers.take(ranked):
                return offers.hits
            # every candidate cleared the threshold and was refused, or was a tombstone: ask
            # again, wider
            if k >= total or k >= MAX_SCORED * limit * 4 or len(ranked) < k:
                return offers.hits
            k *= 4

    def _nearest(self, q: Any, k: int) -> tuple[list[tuple[float, Hashable | None]], int]:
        """The graph's ``k`` nearest live rows to ``q`` as ``(cosine, key)``, best first, and how
        many rows the graph holds."""
        f = self._faiss
        with self._lock:
            total = self._index.ntotal
            if not self._row_of:
                return [], total
            k = min(k, total)
            if k > self.expansion:
                params = f.SearchParametersHNSW(efSearch=k)
                scores, found = self._index.search(q, k, params=params)
            else:
                scores, found = self._index.search(q, k)
            key_of = self._key_of
            return [
                (s, key_of[i])
                for s, i in zip(scores[0].tolist(), found[0].tolist(), strict=True)
                if i >= 0
            ], total

    def __len__(self) -> int:
        return len(self._row_of)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the graph, its vectors and its keys (each a ``str``) to ``path``, whole or not
        at all (a temporary file renamed over it), with a SHA-256 of what follows the header, so
        :meth:`open` reads it back without building the graph again.

        Raises:
            ConfigError: a key is not a string; StoreError: the file cannot be written.
        """
        if any(not isinstance(k, str) for k in self._row_of):
            raise ConfigError("only an index whose keys are all strings can be saved")
        np = require("numpy")
        with self._lock:
            keys = json.dumps(self._key_of, ensure_ascii=False).encode("utf-8")
            graph = self._faiss.serialize_index(self._index)
            params = [self.expansion, self.connectivity, self.construction]
        digest = hashlib.sha256(keys)
        digest.update(memoryview(np.ascontiguousarray(graph)))
        head = {
            "dim": self.dim,
            "params": params,
            "keys_bytes": len(keys),
            "graph_bytes": int(graph.nbytes),
            "sha256": digest.hexdigest(),
        }
        target = Path(path)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as out:
                out.write(_MAGIC + json.dumps(head).encode("ascii") + b"\n")
                out.write(keys)
                out.write(memoryview(graph))
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(
                f"cannot write the vector index {target}: {exc.strerror or exc}"
            ) from None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, dim: int | None = None) -> AnnIndex:
        """Read an index :meth:`save` wrote: only from a file no one else could have written
        (:mod:`eoc.files.trust`), and only when its digest matches, so a damaged or altered file
        is refused before faiss reads a byte of it.

        Raises:
            UntrustedFile: another user could have written it; StoreCorrupt: it is not a whole
            index eoc saved (damaged, cut short, altered, or of ``dim`` other dimensions);
            FileNotFoundError: there is none.
        """
        target = Path(path)
        fd = open_checked(target, what="the saved vector index")
        with os.fdopen(fd, "rb") as src:
            size = os.fstat(src.fileno()).st_size
            first = src.read(_MAGIC_LINE)
            if not first.startswith(_MAGIC) or b"\n" not in first:
                raise StoreCorrupt(
                    f"{target} is not a vector index eoc saved: delete it, and the "
                    "kv builds its index again"
                )
            line = first[len(_MAGIC) :].partition(b"\n")[0]
            try:
                head = json.loads(line)
                dims, params = int(head["dim"]), [int(v) for v in head["params"]]
                key_bytes, graph_bytes = int(head["keys_bytes"]), int(head["graph_bytes"])
                want = str(head["sha256"])
            except (ValueError, KeyError, TypeError):
                raise StoreCorrupt(f"{target}'s header is damaged: delete the file") from None
            start = len(_MAGIC) + len(line) + 1
            if key_bytes < 2 or graph_bytes < 1 or start + key_bytes + graph_bytes != size:
                raise StoreCorrupt(f"{target} is cut short or has bytes added: delete the file")
            if dim is not None and dims != dim:
                raise StoreCorrupt(f"{target} holds {dims}-dimensional vectors, not {dim}")
            # first the digest of everything after the header, read in chunks (never the whole
            # file in memory); faiss reads the graph only once it matches
            src.seek(start)
            key_raw = src.read(key_bytes)
            if len(key_raw) != key_bytes:
                raise StoreCorrupt(f"{target} was cut short while it was read: delete it")
            digest = hashlib.sha256(key_raw)
            left = graph_bytes
            while left:
                chunk = src.read(min(_CHUNK, left))
                if not chunk:
                    raise StoreCorrupt(f"{target} was cut short while it was read: delete it")
                digest.update(chunk)
                left -= len(chunk)
            if digest.hexdigest() != want:
                raise StoreCorrupt(
                    f"{target} does not match its digest (damaged or altered): delete it"
                )
            src.seek(start + key_bytes)
            try:
                keys = json.loads(key_raw.decode("utf-8"))
                expansion, connectivity, construction = params
                index = cls(
                    dims, expansion=expansion, connectivity=connectivity, construction=construction
                )
                graph, unread = _read_graph(index._faiss, src, graph_bytes)
            except (ValueError, RuntimeError, ConfigError) as exc:
                raise StoreCorrupt(f"{target} could not be read back ({exc}): delete it") from None
            if unread:
                raise StoreCorrupt(f"{target} has bytes after its graph: delete it")
        if (
            not isinstance(keys, list)
            or graph.ntotal != len(keys)
            or graph.d != dims
            or any(k is not None and not isinstance(k, str) for k in keys)
        ):
            raise StoreCorrupt(f"{target}'s keys do not match its graph: delete it")
        graph.hnsw.efSearch = index.expansion
        index._index = graph
        index._key_of = keys
        for row, key in enumerate(keys):
            if key is None:
                index._dead += 1
            else:
                index._row_of[key] = row
        if len(index._row_of) + index._dead != len(keys):
            raise StoreCorrupt(f"{target} names a key twice: delete it")
        return index


def _read_graph(faiss: Any, src: Any, size: int) -> tuple[Any, int]:
    """faiss's index read from ``src``'s next ``size`` bytes through a callback (no copy of the
    whole graph in Python's memory), and how many of them it left unread."""
    left = size

    def take(n: int) -> bytes:
        nonlocal left
        data: bytes = src.read(min(n, left))
        left -= len(data)
        return data

    return faiss.read_index(faiss.PyCallbackIOReader(take, _CHUNK)), left


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
