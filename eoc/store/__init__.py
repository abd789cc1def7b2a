"""Where answers live beyond a stage's memory: the store Protocols (:mod:`eoc.store.protocols`),
the rules every store keeps for an entry (:mod:`eoc.store.rules`), the stores that keep nothing
beyond memory (:mod:`eoc.store.memory`) and SQLite's (:mod:`eoc.store.sqlite`); PostgreSQL's
are ``eoc_native.store.postgres``. A stage of :mod:`eoc.stages` takes one (``store=``); this
floor imports no stage."""

from eoc.store.memory import MemoryCacheStore, MemoryKVStore, MemoryTripleRows
from eoc.store.protocols import (
    PENDING,
    CacheListener,
    CacheRow,
    CacheStore,
    Damage,
    KVListener,
    KVRow,
    KVStore,
    Match,
    TripleRows,
)

__all__ = [
    "PENDING",
    "CacheListener",
    "CacheRow",
    "CacheStore",
    "Damage",
    "KVListener",
    "KVRow",
    "KVStore",
    "Match",
    "MemoryCacheStore",
    "MemoryKVStore",
    "MemoryTripleRows",
    "TripleRows",
]
