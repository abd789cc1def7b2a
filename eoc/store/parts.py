"""What a store gives the assembly (:mod:`eoc.assemble`): a cache's, a kv's and a graph's store.

A store is chosen by the ``--store`` text: a file path (SQLite, :func:`eoc.store.sqlite.open_store`)
or ``SCHEME://...``, opened by the ``eoc.stores`` entry point named ``SCHEME`` (the native
extra's ``postgresql``). A third party adds a store the same way: one module with a
:class:`~eoc.store.CacheStore`, a :class:`~eoc.store.KVStore` and a
:class:`~eoc.store.TripleRows`, and a function ``open_store(location)`` returning
:class:`StoreParts`; ``tests/native/test_store_contract.py`` is the suite it must pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eoc.store.protocols import CacheStore, KVStore, TripleRows


@dataclass(frozen=True, slots=True)
class StoreParts:
    """An opened store's three parts and how to watch it.

    ``start`` runs once the pack is written (PostgreSQL starts listening to other replicas);
    ``health`` says why the store cannot take writes now ("" when it can); ``pending`` counts
    writes held until it can. The last two are ``None`` for a store that is always there.
    """

    cache: CacheStore
    kv: KVStore
    triples: TripleRows
    start: Callable[[], None] | None = None
    health: Callable[[], str] | None = None
    pending: Callable[[], int] | None = None
    note: Callable[[], str] | None = None
    """What a user should know of how the store works once the stages are built ("" for
    nothing): where the kv's vectors are searched, and what that costs (``eoc serve`` prints it)."""
    unconfirmed: Callable[[], int] | None = None
    """How many forgets returned before every other replica had dropped what they forgot (a
    replica that did not answer in time: it drops it when it hears the forget or reconnects)."""

    def close(self) -> None:
        """Close each part (a store whose parts share one connection closes it once: a second
        close does nothing)."""
        for part in (self.cache, self.kv, self.triples):
            part.close()


__all__ = ["StoreParts"]
