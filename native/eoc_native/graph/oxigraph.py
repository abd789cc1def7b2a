"""The graph stage's triples in Oxigraph, a SPARQL database on disk (``pyoxigraph``).

It answers the graph stage as the core's :class:`~eoc.stages.graph.TripleStore` does, with
SPARQL: things and relations are found by their label, matched as the core matches it
(case, spacing and quotes folded by :func:`~eoc.text.forms.normalize`). The data stays RDF in
the default graph, IRIs and all; beside it, the named graph ``urn:eoc:keys`` holds what a
question is matched on:

* ``<term> eoc:label "Label"`` and ``<term> eoc:key "label"`` for every IRI or blank node (its
  label is the IRI's last segment, ``_`` as spaces, as the core's N-Triples reader gives it);
* ``<s> <p> "key of the object"`` for every triple, so a reverse question ("which country has
  Paris as its capital") is one indexed lookup;
* ``eoc:predicates eoc:has <p>`` for every predicate.

Triples given as labels (the pack, a ``.tsv`` file) get IRIs under ``urn:eoc:term:``.
Files load streaming (:meth:`OxigraphStore.load`): N-Triples, Turtle and N-Quads (whose graph
names are dropped: every triple lands in the default graph). A file is checked whole before
the first triple of it is stored, so a bad file changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pyoxigraph as ox

from eoc.errors import FactFileError, StoreUnusable
from eoc.store.triples import MAX_TERM_BYTES, checked_triple
from eoc.text.facts import iri_label, read_fact_file, read_tsv_triples
from eoc.text.forms import normalize

KEYS = ox.NamedNode("urn:eoc:keys")
KEY = ox.NamedNode("urn:eoc:key")
LABEL = ox.NamedNode("urn:eoc:label")
PREDICATES = ox.NamedNode("urn:eoc:predicates")
HAS = ox.NamedNode("urn:eoc:has")
TERM = "urn:eoc:term:"

FORMATS = {
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ttl": ox.RdfFormat.TURTLE,
    ".nq": ox.RdfFormat.N_QUADS,
}
"""File types :meth:`OxigraphStore.load` reads as RDF (``.tsv`` is read as labels)."""

BATCH = 20_000
"""Triples written per transaction while loading a file."""


def _term(label: str) -> ox.NamedNode:
    return ox.NamedNode(TERM + quote(label, safe=""))


def _label(term: Any) -> str:
    if isinstance(term, ox.NamedNode):
        if term.value.startswith(TERM):
            return unquote(term.value[len(TERM) :])
        return iri_label(term.value)
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return str(term.value)


def _keyed(s: Any, p: Any, o: Any, seen: set[Any] | None = None) -> Iterator[ox.Quad]:
    """The data quad and the key quads that let a question find it (the label and key of a
    term in ``seen`` are not written again)."""
    yield ox.Quad(s, p, o)
    for t in (s, p, o) if not isinstance(o, ox.Literal) else (s, p):
        if seen is not None:
            if t in seen:
                continue
            seen.add(t)
        label = _label(t)
        yield ox.Quad(t, LABEL, ox.Literal(label), KEYS)
        yield ox.Quad(t, KEY, ox.Literal(normalize(label)), KEYS)
        if t is p:
            yield ox.Quad(PREDICATES, HAS, p, KEYS)
    yield ox.Quad(s, p, ox.Literal(normalize(_label(o))), KEYS)


def _check_term(term: Any, source: str, n: int) -> None:
    text = _label(term) if not isinstance(term, ox.Literal) else term.value
    if not text.strip() or len(text.encode("utf-8", "surrogatepass")) > MAX_TERM_BYTES:
        raise FactFileError(
            f"triple {n}: a term is empty or over {MAX_TERM_BYTES:,} bytes", source=source
        )


class OxigraphStore:
    """A :class:`~eoc.stages.graph.TripleSource` in an Oxigraph store.

    Args:
        path: the store's folder (made if missing); ``None`` for a store in memory.
        read_only: open an existing store without writing to it (another process may hold it).

    Raises:
        StoreUnusable: the folder cannot be opened as an Oxigraph store (another process
            holds it for writing, or it holds something else).
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path = None if path is None else Path(path)
        try:
            if self.path is None:
                self._store = ox.Store()
            elif read_only:
                self._store = ox.Store.read_only(str(self.path))
            else:
                self._store = ox.Store(str(self.path))
        except OSError as exc:
            raise StoreUnusable(
                f"cannot open the Oxigraph store at {self.path}: {exc}. If another eoc holds it, "
                "stop that one or open this one read-only"
            ) from None
        self.read_only = read_only
        self._preds: list[str] | None = None

    # -- writing -----------------------------------------------------------------------------

    def add(self, subject: str, predicate: str, obj: str) -> bool:
        """Add one triple given as labels; False if it was already there."""
        s, p, o = checked_triple(subject, predicate, obj)
        quad = ox.Quad(_term(s), _term(p), ox.Literal(o))
        if quad in self._store:
            return False
        self._store.extend(list(_keyed(quad.subject, quad.predicate, quad.object)))
        self._preds = None
        return True

    def add_all(self, triples: Iterable[Any]) -> int:
        """Add triples given as labels, in one transaction; the number that were new."""
        checked = [checked_triple(*t) for t in triples]
        before = len(self)
        quads: list[ox.Quad] = []
        seen: set[Any] = set()
        for s, p, o in checked:
            quads.extend(_keyed(_term(s), _term(p), ox.Literal(o), seen))
        self._store.extend(quads)
        self._preds = None
        return len(self) - before

    def load(self, path: str | Path, *, progress: Any = None) -> int:
        """Load an ``.nt``, ``.ttl``, ``.nq`` or ``.tsv`` file, streaming; the triples added.

        The file is read twice: once to check all of it, once to store it in batches of
        :data:`BATCH`. ``progress``, if given, is called with the triples stored so far.

        Raises:
            FactFileError: an unknown file type, a syntax error (with its line), an empty or
                oversized term; nothing of the file is stored.
        """
        p = Path(path)
        source = str(p)
        if p.suffix in (".tsv", ".txt"):
            return self.add_all(read_tsv_triples(read_fact_file(p), source))
        fmt = FORMATS.get(p.suffix)
        if fmt is None:
            raise FactFileError(
                "unknown fact file type: use .nt (N-Triples), .ttl (Turtle), .nq (N-Quads) or .tsv",
                source=source,
            )
        if not p.is_file():
            raise FactFileError("no such file", source=source)
        n = 0
        for n, quad in enumerate(self._parse(p, fmt, source), 1):
            for t in (quad.subject, quad.predicate, quad.object):
                _check_term(t, source, n)
        before = len(self)
        batch: list[ox.Quad] = []
        stored = 0
        seen: set[Any] = set()
        for quad in self._parse(p, fmt, source):
            if len(seen) > 1_000_000:
                seen.clear()  # bounded: a term seen again only writes its keys again
            batch.extend(_keyed(quad.subject, quad.predicate, quad.object, seen))
            stored += 1
            if stored % BATCH == 0:
                self._store.bulk_extend(batch)
                batch = []
                if progress is not None:
                    progress(stored)
        if batch:
            self._store.bulk_extend(batch)
        self._store.flush()
        self._preds = None
        if progress is not None:
            progress(stored)
        return len(self) - before

    @staticmethod
    def _parse(path: Path, fmt: Any, source: str) -> Iterator[ox.Quad]:
        try:
            with path.open("rb") as f:
                for quad in ox.parse(f, fmt):
                    if isinstance(quad.subject, ox.Triple) or isinstance(quad.object, ox.Triple):
                        raise FactFileError("RDF-star triples are not read", source=source)
                    yield quad
        except SyntaxError as exc:
            raise FactFileError(f"not valid RDF: {exc}", source=source) from None

    # -- reading (the graph stage's TripleSource) --------------------------------------------

    def _select(self, query: str) -> list[Any]:
        return list(self._store.query(query))  # type: ignore[arg-type]

    def objects(self, subject: str, predicate: str) -> list[str]:
        q = f"""
            SELECT ?o ?ol WHERE {{
              GRAPH {KEYS} {{ ?s {KEY} {ox.Literal(normalize(subject))} .
                              ?p {KEY} {ox.Literal(normalize(predicate))} }}
              ?s ?p ?o .
              OPTIONAL {{ GRAPH {KEYS} {{ ?o {LABEL} ?ol }} }}
            }}"""
        out = []
        for row in self._select(q):
            label = row["ol"]
            out.append(label.value if label is not None else _label(row["o"]))
        return list(dict.fromkeys(out))

    def subjects(self, predicate: str, obj: str) -> list[str]:
        q = f"""
            SELECT DISTINCT ?sl WHERE {{
              GRAPH {KEYS} {{ ?p {KEY} {ox.Literal(normalize(predicate))} .
                              ?s ?p {ox.Literal(normalize(obj))} .
                              ?s {LABEL} ?sl }}
            }}"""
        return [row["sl"].value for row in self._select(q)]

    def values_of_kind(self, kind: str, predicate: str) -> list[tuple[str, str]]:
        """``(thing, value)`` for every thing of ``kind`` with a ``predicate``: one query."""
        q = f"""
            SELECT ?sl ?o WHERE {{
              GRAPH {KEYS} {{ ?k {KEY} "is a" . ?s ?k {ox.Literal(normalize(kind))} .
                              ?p {KEY} {ox.Literal(normalize(predicate))} . ?s {LABEL} ?sl }}
              ?s ?p ?o .
            }}"""
        return [(row["sl"].value, _label(row["o"])) for row in self._select(q)]

    def predicates(self) -> list[str]:
        """Every predicate's label (kept until this store writes again)."""
        if self._preds is None:
            q = f"SELECT DISTINCT ?l WHERE {{ GRAPH {KEYS} {{ {PREDICATES} {HAS} ?p . ?p {LABEL} ?l }} }}"
            self._preds = sorted(row["l"].value for row in self._select(q))
        return list(self._preds)

    def __len__(self) -> int:
        rows = self._select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        return int(rows[0]["n"].value)

    def close(self) -> None:
        """Write what is pending and let the folder go (other processes may open it then)."""
        if not self.read_only:
            self._store.flush()
        del self._store


__all__ = ["BATCH", "FORMATS", "KEYS", "OxigraphStore"]
