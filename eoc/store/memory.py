"""The store that keeps nothing beyond memory: a cache stage's default (and the browser's).

Every answer lives in the stage's own working set and ends with the process. It fails no write,
holds no row another process could change, and forgets exactly what memory held.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eoc.store.protocols import (
    CacheListener,
    CacheRow,
    Damage,
    Embedding,
    KVListener,
    KVRow,
    Match,
)


class MemoryCacheStore:
    """A :class:`~eoc.store.protocols.CacheStore` that keeps nothing beyond memory."""

    polls = False

    def __init__(self) -> None:
        self.damaged: list[Damage] = []

    def rows(self, newest: int) -> Sequence[CacheRow]:
        return ()

    def kept_only(self, kept: set[str]) -> None:
        return None

    def put(self, row: CacheRow, evicted: Sequence[str]) -> str | None:
        return None

    def delete(self, qids: Sequence[str]) -> None:
        return None

    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]:
        return list(qids)

    def clear(self) -> None:
        return None

    def poll(self) -> None:
        return None

    def listen(self, stage: CacheListener) -> None:
        return None

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return "MemoryCacheStore()"


class MemoryKVStore:
    """A :class:`~eoc.store.protocols.KVStore` that keeps nothing beyond memory (so a bulk
    load, the knowledge pack, may be embedded at its first use: ``defers``)."""

    polls = False
    defers = True

    def __init__(self) -> None:
        self.damaged: list[Damage] = []

    def rows(self, embedder: Embedding, dense: bool) -> Sequence[KVRow]:
        return ()

    def searcher(self, embedder: Embedding, dense: bool) -> None:
        """No search of its own: the stage reads the pairs and searches them in memory."""
        return None

    def holds(self, key: str, payload: str, origin: str) -> bool:
        return False

    def put(self, rows: Sequence[KVRow]) -> str | None:
        return None

    def delete(self, keys: Sequence[str]) -> None:
        return None

    def forget(self, keys: Sequence[str], match: Match | None = None) -> list[str]:
        return list(keys)

    def poll(self) -> None:
        return None

    def listen(self, stage: KVListener) -> None:
        return None

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return "MemoryKVStore()"


class MemoryTripleRows:
    """A :class:`~eoc.store.protocols.TripleRows` that keeps nothing beyond memory."""

    def __init__(self) -> None:
        self.damaged: list[Damage] = []

    def rows(self) -> Sequence[tuple[str, str, str, int]]:
        return ()

    def put(self, triples: Sequence[tuple[str, str, str]]) -> None:
        return None

    def listen(self, take: Callable[[Sequence[tuple[str, str, str, int]]], None]) -> None:
        return None

    def close(self) -> None:
        return None


__all__ = ["MemoryCacheStore", "MemoryKVStore", "MemoryTripleRows"]
