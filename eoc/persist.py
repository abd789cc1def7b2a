"""The stages over SQLite, in one call each: ``SqliteCache(path)``, ``SqliteKV(path)`` and
``SqliteTripleStore(path)`` build the memory stage (or triple store) over SQLite's store in
:mod:`eoc.store.sqlite`; several may share one file. ``Cascade(default_stages(store=path))``
builds all of them (:func:`eoc.assemble.assemble`).

Each raises, when opened, :class:`~eoc.errors.StoreUnusable`,
:class:`~eoc.errors.StoreVersionError` or :class:`~eoc.errors.StoreCorrupt`, before anything
is read or written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eoc.stages.cache import CacheStage
from eoc.stages.kv import KVStage
from eoc.store.sqlite import SqliteCacheStore, SqliteKVStore, SqliteTripleRows
from eoc.store.triples import TripleStore


def SqliteCache(
    path: str | Path,
    max_entries: int = 100_000,
    max_bytes: int = 64 << 20,
    *,
    key: bytes | None = None,
    **kw: Any,
) -> CacheStage:
    """The cache stage written through to SQLite: ``CacheStage(store=SqliteCacheStore(path))``."""
    return CacheStage(max_entries, max_bytes, store=SqliteCacheStore(path, key=key), **kw)


def SqliteKV(path: str | Path, *, key: bytes | None = None, **kwargs: Any) -> KVStage:
    """The kv stage written through to SQLite: ``KVStage(store=SqliteKVStore(path), ...)``."""
    return KVStage(store=SqliteKVStore(path, key=key), **kwargs)


def SqliteTripleStore(path: str | Path, *, key: bytes | None = None) -> TripleStore:
    """The graph's triples written through to SQLite:
    ``TripleStore(rows=SqliteTripleRows(path))``."""
    return TripleStore(rows=SqliteTripleRows(path, key=key))


__all__ = ["SqliteCache", "SqliteKV", "SqliteTripleStore"]
