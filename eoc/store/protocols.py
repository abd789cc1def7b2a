"""What a store must provide: the Protocols a cache and a kv stage, and the graph's triple store,
read and write through.

A stage keeps its working set in memory (the cache's LRU order and bounds); a store is where the
answers live beyond it. The stage calls the store at fixed points, and the store may call the
stage back when another process changed what it holds:

==================  ===================================================================
the stage calls     when
==================  ===================================================================
``rows(newest)``    once, at start: the answers kept, oldest first
``kept_only(ids)``  once, after loading: what memory kept (the rest expired or is past
                    its bounds; a store whose rows are its own deletes them)
``put(row, gone)``  before memory changes: the answer written (and ``gone``, the ids
                    memory evicts for it); returns ``None`` once written, or
                    :data:`PENDING` when a shared store is down and holds the write
``delete(ids)``     entries seen expired, once no later write replaced them
``forget(ids, m)``  a forget: the ids memory holds that ``m`` picks, and, in a store
                    that holds more than this process's memory, every row ``m`` picks;
                    returns every id forgotten
``clear()``         everything is forgotten
``poll()``          at each lookup, where ``polls`` is true: a cheap look for changes
``listen(stage)``   once: the store calls the stage's :class:`CacheListener` methods
                    when another process wrote or forgot something
``close()``         with the stage
==================  ===================================================================

Every write is committed before ``put`` returns (or held, for :data:`PENDING`); a write that
fails raises :class:`~eoc.errors.StoreError` and leaves the store as it was, and memory is then
left as it was too. A row that fails its checks when read is never handed to the stage; it is
listed in ``damaged`` as ``(table, rowid, reason)``.

Implementations: :class:`eoc.store.memory.MemoryCacheStore` (nothing beyond memory, the
default), :class:`eoc.store.sqlite.SqliteCacheStore` and
:class:`eoc_native.store.postgres.PgCacheStore`. ``tests/native/test_store_contract.py`` runs one
suite against each; a new store is one module that passes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from eoc.store.entry import EntryMeta

PENDING = "pending"
"""What a store's write returns when it kept the answer in memory and will write it to a
shared store that is down now, once it is back."""

Damage = tuple[str, int, str]
"""A row a store did not serve: (table, rowid or 0, why)."""

Match = Callable[[str, "str | None", str, "EntryMeta | None"], bool]
"""A forget's choice (:mod:`eoc.store.forget`): ``match(key, prompt or None, origin, meta)``."""


@dataclass(frozen=True, slots=True)
class CacheRow:
    """One cached answer as a store keeps it: its query id, the answer, what made it ("" when
    no model did) and its record (:class:`eoc.store.entry.EntryMeta`)."""

    qid: str
    payload: str
    origin: str
    meta: EntryMeta


class CacheListener(Protocol):
    """What a cache store may call on its stage when another process changed the store."""

    def take(self, row: CacheRow) -> None:
        """Another process wrote ``row``: serve it here too."""
        ...

    def holds(self, qid: str) -> bool:
        """Whether memory holds ``qid`` (a store catching up reads only what it lacks)."""
        ...

    def keep_only(self, kept: Callable[[str, str], bool]) -> None:
        """Another process forgot something: drop every entry ``kept(qid, origin)`` refuses."""
        ...


@runtime_checkable
class CacheStore(Protocol):
    """Where a cache stage's answers live beyond its memory (the table in the module
    docstring says when the stage calls each method)."""

    damaged: list[Damage]
    polls: bool

    def rows(self, newest: int) -> Sequence[CacheRow]: ...

    def kept_only(self, kept: set[str]) -> None: ...

    def put(self, row: CacheRow, evicted: Sequence[str]) -> str | None: ...

    def delete(self, qids: Sequence[str]) -> None: ...

    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]: ...

    def clear(self) -> None: ...

    def poll(self) -> None: ...

    def listen(self, stage: CacheListener) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class KVRow:
    """One kv pair as a store keeps it: its key (the folded question, opened by its partition's
    tag: :func:`eoc.store.partition.keyed`), the question as asked, the answer, what made it, its
    record, and its vector for the kv's embedder (``None``: not stored for it; the stage embeds
    the question again). ``rowid`` names the row in a damage report (0 where the store has no
    such number)."""

    key: str
    prompt: str
    payload: str
    origin: str
    meta: EntryMeta
    vector: object | None = None
    rowid: int = 0


class VectorSearch(Protocol):
    """A store's own search over the kv vectors it holds (PostgreSQL with pgvector): the stage
    then keeps no vector and only a bounded set of recent entries in memory
    (:class:`eoc.stages.kv_hot.HotEntries`), and asks the store for the rest.

    ``nearest(vec, k, parts)``: up to ``k`` stored rows nearest ``vec`` as ``(cosine, row)``,
    best first, among rows of the partitions tagged ``parts`` (``None``: every partition), each
    row checked as ``rows`` checks it; ``fetch(keys)``: the rows stored under ``keys``, checked;
    ``count()``: how many rows the store holds; ``what``: the search, in words, for a status."""

    what: str

    def nearest(
        self, vec: object, k: int, parts: Sequence[str] | None
    ) -> list[tuple[float, KVRow]]: ...

    def fetch(self, keys: Sequence[str]) -> list[KVRow]: ...

    def count(self) -> int: ...


class KVListener(Protocol):
    """What a kv store may call on its stage when another process changed the store."""

    def take(self, rows: Sequence[KVRow]) -> None:
        """Another process wrote ``rows``: serve them here too."""
        ...

    def keep_only(self, kept: Callable[[str, str], bool]) -> None:
        """Another process forgot something: drop every entry ``kept(key, origin)`` refuses."""
        ...


class Embedding(Protocol):
    """What a kv store reads of the kv's embedder: its name (a stored vector is reused only for
    the embedder that made it), its dimensions and whether its vectors are dense."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...


@runtime_checkable
class KVStore(Protocol):
    """Where a kv stage's pairs live beyond its memory, with their vectors.

    As a :class:`CacheStore`, with these differences: ``rows(embedder, dense)`` reads the pairs
    and their vectors for ``embedder`` (which the store then writes beside each vector it is
    given); ``holds(key, payload, origin)`` says whether the store already holds that very pair
    (a bulk load skips it); ``put(rows)`` writes rows, vectors given, in one transaction; a
    ``forget`` returns the key memory serves each forgotten pair under; ``defers`` is true for
    a store that keeps nothing beyond memory, so the stage may embed a bulk load lazily;
    ``searcher`` gives the store's own vector search where it has one (asked before ``rows``:
    with one, ``rows`` is not read)."""

    damaged: list[Damage]
    polls: bool
    defers: bool

    def rows(self, embedder: Embedding, dense: bool) -> Sequence[KVRow]: ...

    def holds(self, key: str, payload: str, origin: str) -> bool: ...

    def put(self, rows: Sequence[KVRow]) -> str | None: ...

    def delete(self, keys: Sequence[str]) -> None: ...

    def forget(self, keys: Sequence[str], match: Match | None = None) -> list[str]: ...

    def poll(self) -> None: ...

    def listen(self, stage: KVListener) -> None: ...

    def close(self) -> None: ...

    def searcher(self, embedder: Embedding, dense: bool) -> VectorSearch | None:
        """The store's own search over ``embedder``'s vectors, or ``None``: the stage reads
        every pair at start (``rows``) and searches them in memory."""
        ...


class TripleRows(Protocol):
    """Where a triple store's triples live beyond memory (:class:`eoc.store.triples.TripleStore`
    indexes them in memory): ``rows()`` once, at start, as (subject, predicate, object, rowid);
    ``put(triples)`` the new ones, checked, in one transaction, before memory changes;
    ``listen(take)`` once: the store calls ``take(rows)`` with what another process wrote."""

    damaged: list[Damage]

    def rows(self) -> Sequence[tuple[str, str, str, int]]: ...

    def put(self, triples: Sequence[tuple[str, str, str]]) -> None: ...

    def listen(self, take: Callable[[Sequence[tuple[str, str, str, int]]], None]) -> None: ...

    def close(self) -> None: ...


__all__ = [
    "PENDING",
    "CacheListener",
    "CacheRow",
    "CacheStore",
    "Damage",
    "Embedding",
    "KVListener",
    "KVRow",
    "KVStore",
    "Match",
    "TripleRows",
    "VectorSearch",
]
