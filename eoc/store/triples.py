"""The graph's triples: indexed both ways in memory, kept beyond it by a rows store.

:class:`TripleStore` is what the graph stage reads (a :class:`TripleSource`: a SPARQL store can
stand in). Its triples live in a :class:`~eoc.store.protocols.TripleRows`: the memory one by
default (nothing beyond the process), SQLite's (:class:`eoc.store.sqlite.SqliteTripleRows`) or
PostgreSQL's (``eoc_native.store.postgres.PgTripleRows``). Every write checks every triple
before the first is kept, goes through the rows store, and changes memory only once it returned.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from eoc.errors import EocError, FactFileError, InputError
from eoc.query import check_text
from eoc.store.memory import MemoryTripleRows
from eoc.store.protocols import Damage, TripleRows
from eoc.text.facts import (
    MAX_FIELD_CHARS,
    Triple,
    read_fact_file,
    read_ntriples,
    read_tsv_triples,
)
from eoc.text.forms import normalize


@runtime_checkable
class TripleSource(Protocol):
    """What the graph stage asks of a store (a SPARQL store can stand in)."""

    def objects(self, subject: str, predicate: str) -> list[str]: ...

    def subjects(self, predicate: str, obj: str) -> list[str]: ...

    def predicates(self) -> list[str]: ...


MAX_TERM_BYTES = 4 * MAX_FIELD_CHARS
"""Largest subject, predicate or object accepted, in UTF-8 bytes: any term a fact file holds."""


def _key(label: str) -> str:
    return normalize(label)


def checked_triple(subject: str, predicate: str, obj: str) -> tuple[str, str, str]:
    """The three terms stripped, each valid text (so it can be encoded, hashed and printed).

    Raises:
        InvalidText: a term is not text, is empty, holds lone surrogates or control characters,
            or is longer than :data:`MAX_TERM_BYTES`.
    """
    for name, value in (("subject", subject), ("predicate", predicate), ("object", obj)):
        check_text(value, f"a triple's {name}", max_bytes=MAX_TERM_BYTES)
    return subject.strip(), predicate.strip(), obj.strip()


class TripleStore:
    """Triples indexed both ways, matched case-insensitively on normalized labels.

    Args:
        triples: triples to add at once (checked as :meth:`add_all` checks them).
        rows: where the triples live beyond memory (:class:`~eoc.store.protocols.TripleRows`);
            by default the memory one. Its triples are read at construction; one the graph
            refuses is listed in ``damaged``, never served.
    """

    def __init__(self, triples: Iterable[Triple] = (), *, rows: TripleRows | None = None) -> None:
        self._by_sp: dict[tuple[str, str], list[str]] = {}
        self._by_po: dict[tuple[str, str], list[str]] = {}
        self._preds: dict[str, int] = {}
        self._triples: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # one writer: memory changes in the store's order
        self.rows: TripleRows = MemoryTripleRows() if rows is None else rows
        self._take(self.rows.rows())
        self.rows.listen(self._take)
        self.add_all(triples)

    @property
    def damaged(self) -> list[Damage]:
        """The rows the store did not serve: (table, rowid, why)."""
        return self.rows.damaged

    def _take(self, found: Sequence[tuple[str, str, str, int]]) -> None:
        """Serve what the rows store holds (read at start, or written by another process)."""
        for s, p, o, rowid in found:
            try:
                self._insert(*checked_triple(s, p, o))
            except EocError as exc:  # a term the graph refuses (e.g. longer than it takes)
                self.rows.damaged.append(("triples", rowid, exc.reason))

    def add(self, subject: str, predicate: str, obj: str) -> bool:
        """Add one triple; False if it was already there.

        Raises:
            InvalidText: a term is not text, is empty, holds lone surrogates or control
                characters, or is longer than :data:`MAX_TERM_BYTES`; nothing is added.
            StoreError: the rows store's write failed; nothing is added.
        """
        return self.add_all([(subject, predicate, obj)]) == 1

    def _insert(self, s: str, p: str, o: str) -> bool:
        sk, pk, ok = _key(s), _key(p), _key(o)
        with self._lock:
            if (sk, pk, ok) in self._triples:
                return False
            self._triples.add((sk, pk, ok))
            self._by_sp.setdefault((sk, pk), []).append(o)
            self._by_po.setdefault((pk, ok), []).append(s)
            self._preds[pk] = self._preds.get(pk, 0) + 1
        return True

    def add_all(self, triples: Iterable[Triple | tuple[str, str, str]]) -> int:
        """Add many triples, written through the rows store in one go; the number that were new.

        Every triple is checked before the first is kept, so a bad one changes nothing.

        Raises:
            InputError: a triple that is not (subject, predicate, object), or a bad term.
            StoreError: the rows store's write failed; nothing is added.
        """
        try:
            items = list(triples)
        except TypeError:
            raise InputError("add_all takes an iterable of (subject, predicate, object)") from None
        checked = []
        for t in items:
            if not isinstance(t, (tuple, list)) or len(t) != 3:
                raise InputError(f"a triple is (subject, predicate, object), not {t!r:.80}")
            checked.append(checked_triple(*t))
        with self._write_lock:
            seen: set[tuple[str, str, str]] = set()
            fresh = []
            for s, p, o in checked:
                k = (_key(s), _key(p), _key(o))
                if k not in seen and k not in self._triples:
                    seen.add(k)
                    fresh.append((s, p, o))
            if fresh:
                self.rows.put(fresh)
            return sum(self._insert(*t) for t in fresh)

    def load(self, path: str | Path) -> int:
        """Load a ``.nt`` (N-Triples) or ``.tsv`` file; a bad file is rejected whole."""
        p = Path(path)
        if p.suffix == ".nt":
            reader = read_ntriples
        elif p.suffix in (".tsv", ".txt"):
            reader = read_tsv_triples
        else:  # refused before reading: a wrong file is not read at all
            raise FactFileError(
                "unknown fact file type: use .nt (N-Triples) or .tsv", source=str(p)
            )
        return self.add_all(reader(read_fact_file(p), str(p)))

    def objects(self, subject: str, predicate: str) -> list[str]:
        return list(self._by_sp.get((_key(subject), _key(predicate)), ()))

    def subjects(self, predicate: str, obj: str) -> list[str]:
        return list(self._by_po.get((_key(predicate), _key(obj)), ()))

    def predicates(self) -> list[str]:
        return list(self._preds)

    def __len__(self) -> int:
        return len(self._triples)

    def __contains__(self, triple: object) -> bool:
        if not isinstance(triple, tuple) or len(triple) != 3:
            return False
        s, p, o = triple
        if not all(isinstance(x, str) for x in triple):
            return False
        return (_key(s), _key(p), _key(o)) in self._triples

    def close(self) -> None:
        """Close the rows store (a file, a pool); the memory one holds nothing open."""
        self.rows.close()


__all__ = ["MAX_TERM_BYTES", "TripleSource", "TripleStore", "checked_triple"]
