"""The graph stage: an in-memory triple store and a question matcher over it."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from eoc.compute import compute
from eoc.errors import FactFileError
from eoc.query import Query, Stage, check_text
from eoc.stages.base import Answer, stage_figure, work_estimate
from eoc.stages.facts import (
    MAX_FIELD_CHARS,
    Triple,
    read_fact_file,
    read_ntriples,
    read_tsv_triples,
)
from eoc.stages.text import normalize


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


def _checked(subject: str, predicate: str, obj: str) -> tuple[str, str, str]:
    """The three terms stripped, each valid text (so it can be encoded, hashed and printed)."""
    for name, value in (("subject", subject), ("predicate", predicate), ("object", obj)):
        check_text(value, f"a triple's {name}", max_bytes=MAX_TERM_BYTES)
    return subject.strip(), predicate.strip(), obj.strip()


class TripleStore:
    """Triples indexed both ways, matched case-insensitively on normalized labels."""

    def __init__(self, triples: Iterable[Triple] = ()) -> None:
        self._by_sp: dict[tuple[str, str], list[str]] = {}
        self._by_po: dict[tuple[str, str], list[str]] = {}
        self._preds: dict[str, int] = {}
        self._triples: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()
        self.add_all(triples)

    def add(self, subject: str, predicate: str, obj: str) -> bool:
        """Add one triple; False if it was already there.

        Raises:
            InvalidText: a term is not text, is empty, holds lone surrogates or control
                characters, or is longer than :data:`MAX_TERM_BYTES`; nothing is added.
        """
        return self._insert(*_checked(subject, predicate, obj))

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
        """Add each triple in turn (see :meth:`add`); the number that were new."""
        return sum(self.add(*t) for t in triples)

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
        triples = reader(read_fact_file(p), str(p))
        # Every triple is checked before the first is stored, so a bad file changes nothing.
        checked = [_checked(*t) for t in triples]
        return sum(self._insert(*t) for t in checked)

    def objects(self, subject: str, predicate: str) -> list[str]:
        return list(self._by_sp.get((_key(subject), _key(predicate)), ()))

    def subjects(self, predicate: str, obj: str) -> list[str]:
        return list(self._by_po.get((_key(predicate), _key(obj)), ()))

    def predicates(self) -> list[str]:
        return list(self._preds)

    def __len__(self) -> int:
        return len(self._triples)


_PREFIX = (
    r"(?:(?:what|which|who|where) (?:is|are|was|were) |(?:tell me|give me|name|show me) )?(?:the )?"
)
_TYPE = r"(?:country|nation|state|city|element|planet|place|one|thing)"


class QuestionMatcher:
    """Turns a question into ``(direction, predicate, name)`` lookups.

    Handles "what is the capital of France", "capital of France?", "France's
    capital", "Paris is the capital of which country?" and "which country has
    Paris as its capital".
    """

    def __init__(self, predicates: Iterable[str]) -> None:
        preds = sorted({_key(p) for p in predicates if p}, key=len, reverse=True)
        self.predicates = preds
        alt = "|".join(re.escape(p) for p in preds) or r"(?!x)x"
        self._forward = re.compile(rf"^{_PREFIX}(?P<p>{alt}) of (?:the )?(?P<s>.+)$")
        self._possessive = re.compile(rf"^{_PREFIX}(?P<s>.+?)'s? (?P<p>{alt})$")
        self._reverse = (
            re.compile(
                rf"^(?:the )?(?P<o>.+?) is (?:the )?(?P<p>{alt}) of (?:which|what) {_TYPE}$"
            ),
            re.compile(
                rf"^(?:which|what) {_TYPE} has (?:the )?(?P<o>.+?) as (?:its |the )?(?P<p>{alt})$"
            ),
            re.compile(rf"^(?:which|what|whose) {_TYPE}'?s? (?P<p>{alt}) is (?:the )?(?P<o>.+)$"),
            re.compile(
                rf"^(?:of )?(?:which|what) {_TYPE} is (?:the )?(?P<o>.+?) the (?P<p>{alt})(?: of)?$"
            ),
        )

    def parse(self, text: str) -> list[tuple[str, str, str]]:
        """Candidate lookups for normalized ``text``: ``("object"|"subject", predicate, name)``."""
        asks: list[tuple[str, str, str]] = []
        for rx in self._reverse:
            m = rx.match(text)
            if m:
                asks.append(("subject", m["p"], m["o"]))
        for rx in (self._forward, self._possessive):
            m = rx.match(text)
            if m:
                asks.append(("object", m["p"], m["s"]))
        return asks


class GraphStage:
    """Answers questions about stored triples, and computes what can be computed.

    Before its store, the stage asks :func:`eoc.compute.compute`: exact arithmetic ("17*23",
    "sqrt of 2"), unit conversion ("10 miles to km") and clock and calendar arithmetic ("09:15
    plus 2 hours 50 minutes"). A computed answer's basis says it was computed and how.

    Args:
        store: any :class:`TripleSource`; defaults to an empty :class:`TripleStore`.
        figure_uj: a flat per-hit figure (ESTIMATED). By default a hit is charged
            :func:`~eoc.stages.base.work_estimate`, which grows with the bytes of the prompt
            matched.
        computed: ``False`` to answer from the store alone.
    """

    stage = Stage.GRAPH

    def __init__(
        self,
        store: TripleSource | None = None,
        *,
        figure_uj: int | None = None,
        computed: bool = True,
    ) -> None:
        self.store: TripleSource = store if store is not None else TripleStore()
        self.computed = computed
        self.figure = stage_figure(Stage.GRAPH, figure_uj)
        self._flat = figure_uj is not None
        self._matcher: QuestionMatcher | None = None
        self._matcher_preds: tuple[str, ...] = ()

    def _get_matcher(self) -> QuestionMatcher:
        preds = tuple(self.store.predicates())
        if self._matcher is None or preds != self._matcher_preds:
            self._matcher = QuestionMatcher(preds)
            self._matcher_preds = preds
        return self._matcher

    def lookup(self, query: Query) -> Answer | None:
        """The computed or stored answer to ``query`` (all matches, comma-joined), or ``None``
        to pass."""
        if self.computed:
            done = compute(query.prompt)
            if done is not None:
                figure = (
                    self.figure if self._flat else work_estimate(Stage.GRAPH, nbytes=query.size)
                )
                return Answer(done.answer, figure.with_basis(f"{done.how}; {figure.basis}"))
        text = normalize(query.prompt)
        for direction, pred, name in self._get_matcher().parse(text):
            if direction == "object":
                found = self.store.objects(name, pred)
            else:
                found = self.store.subjects(pred, name)
            if found:
                if self._flat:
                    return Answer(", ".join(found))
                # Matching scales with the prompt, so the charge does too (not one flat figure).
                return Answer(", ".join(found), work_estimate(Stage.GRAPH, nbytes=query.size))
        return None


__all__ = ["MAX_TERM_BYTES", "GraphStage", "QuestionMatcher", "TripleSource", "TripleStore"]
