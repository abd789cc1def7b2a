"""Where answers live beyond a stage's memory: the store Protocols (:mod:`eoc.store.protocols`),
the rules every store keeps for an entry (:mod:`eoc.store.rules`) and the store that keeps
nothing beyond memory (:mod:`eoc.store.memory`). SQLite's store is :mod:`eoc.persist`;
PostgreSQL's is ``eoc_native.store.postgres``."""

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
