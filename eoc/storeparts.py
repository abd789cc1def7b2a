"""What a store gives the assembly (:mod:`eoc.assemble`): its cache, kv and triple store.

A store is chosen by the ``--store`` text: a file path (SQLite, :func:`eoc.persist.open_store`)
or ``SCHEME://...``, opened by the ``eoc.stores`` entry point named ``SCHEME`` (the native
extra's ``postgresql``). A third party adds a store the same way: a function
``open_store(location, kv_options)`` returning :class:`StoreParts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eoc.stages.cache import CacheStage
from eoc.stages.kv import KVStage
from eoc.store.triples import TripleStore


@dataclass(frozen=True, slots=True)
class StoreParts:
    """An opened store's three parts and how to watch it.

    ``start`` runs once the pack is written (PostgreSQL starts listening to other replicas);
    ``health`` says why the store cannot take writes now ("" when it can); ``pending`` counts
    writes held until it can. The last two are ``None`` for a store that is always there.
    """

    cache: CacheStage
    kv: KVStage
    triples: TripleStore
    start: Callable[[], None] | None = None
    health: Callable[[], str] | None = None
    pending: Callable[[], int] | None = None

    def close(self) -> None:
        """Close each part (a store whose parts share one connection closes it once: a second
        close does nothing)."""
        for part in (self.cache, self.kv, self.triples):
            close: Any = getattr(part, "close", None)
            if callable(close):
                close()


__all__ = ["StoreParts"]
