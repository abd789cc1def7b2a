"""The graph stage: an in-memory triple store and a question matcher over it."""

from __future__ import annotations

import re

from eoc.compute import compute
from eoc.query import Query, Stage
from eoc.stages.base import Answer, stage_figure, work_estimate
from eoc.stages.factwords import FactWords
from eoc.stages.questions import Ask, QuestionMatcher, Relation, Vocabulary
from eoc.store.triples import MAX_TERM_BYTES, TripleSource, TripleStore
from eoc.text.forms import normalize

KIND_PREDICATE = "is a"
"""The predicate that says what kind of thing a subject is ("France is a country")."""

ALIAS_PREDICATE = "also called"
"""The predicate that gives a subject another name ("United States also called USA")."""

_STRUCTURE = frozenset({KIND_PREDICATE, ALIAS_PREDICATE})
_LEADING_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


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
        vocabulary: how questions name the store's relations (:class:`Vocabulary`); without
            one, each relation is asked by its own name.

    A question that reads two ways with two different answers is passed on, not guessed.
    """

    stage = Stage.GRAPH

    def __init__(
        self,
        store: TripleSource | None = None,
        *,
        figure_uj: int | None = None,
        computed: bool = True,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        self.store: TripleSource = store if store is not None else TripleStore()
        self.computed = computed
        self.vocabulary = vocabulary or Vocabulary()
        self.figure = stage_figure(Stage.GRAPH, figure_uj)
        self._flat = figure_uj is not None
        self._matcher: QuestionMatcher | None = None
        self._matcher_preds: tuple[str, ...] = ()
        self._words: FactWords | None = None  # both made again with the matcher
        self._forms: FactWords | None = None

    def _get_matcher(self) -> QuestionMatcher:
        preds = tuple(self.store.predicates())
        if self._matcher is None or preds != self._matcher_preds:
            asked = [p for p in preds if normalize(p) not in _STRUCTURE]
            self._matcher = QuestionMatcher(asked, self.vocabulary)
            self._matcher_preds = preds
            self._words = self._forms = None
        return self._matcher

    def close(self) -> None:
        """Close the triple store where it holds something open (an Oxigraph folder, a
        PostgreSQL pool)."""
        close = getattr(self.store, "close", None)
        if callable(close):
            close()

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
        distinct = self._answers(text)
        repairs: tuple[tuple[str, str], ...] = ()
        if not distinct and self._may_read_repaired(text):
            # nothing found as written: the question's slips repaired, if any
            repaired, repairs = self._fact_words().repair(text)
            if repairs:
                distinct = self._answers(repaired)
        if len(distinct) != 1:
            return None  # nothing found, or two readings with two answers: passed on
        # Matching scales with the prompt, so the charge does too (not one flat figure).
        figure = self.figure if self._flat else work_estimate(Stage.GRAPH, nbytes=query.size)
        if repairs:
            read = ", ".join(f"{a!r} as {b!r}" for a, b in repairs)
            return Answer(distinct[0], figure.with_basis(f"read {read}; {figure.basis}"))
        return Answer(distinct[0]) if self._flat else Answer(distinct[0], figure)

    def _answers(self, text: str) -> list[str]:
        """The distinct answers of every reading of normalized ``text``."""
        answers = []
        for ask in self._get_matcher().parse(text):
            found = self._resolve(ask)
            if found is not None:
                answers.append(found)
        return list(dict.fromkeys(answers))

    def _may_read_repaired(self, text: str) -> bool:
        """Whether a pattern could read ``text`` once its question words' slips are repaired
        (a name's repair never makes a question readable: names fill the patterns' slots). So
        a question about something else ("write one short sentence about the sea", most of
        what reaches a model) is passed on without indexing the store's names."""
        matcher = self._get_matcher()
        if self._forms is None:
            self._forms = FactWords(matcher.words(), ())
        return matcher.could_ask(self._forms.repair(text)[0])

    def _fact_words(self) -> FactWords:
        """The words the graph reads, for repairing slips (:mod:`eoc.stages.factwords`): the
        question forms' and relations' words and the names of every thing of a kind the
        vocabulary names (up to :data:`MAX_NAMES`; a larger store repairs the forms' words
        only), with what each is also called (up to :data:`MAX_ALIAS_LOOKUPS` names)."""
        matcher = self._get_matcher()
        if self._words is None:
            names: list[str] = []
            for kind in sorted(set(self.vocabulary.kinds.values())):
                names += self.store.subjects(KIND_PREDICATE, kind)
                if len(names) > MAX_NAMES:
                    names = []
                    break
            # what each is also called: one lookup a name, so only for a store of few names
            # (the pack's 409); a larger one repairs toward the names as they are stored
            aliases = (
                [a for n in names for a in self.store.objects(n, ALIAS_PREDICATE)]
                if len(names) <= MAX_ALIAS_LOOKUPS
                else []
            )
            self._words = FactWords(matcher.words(), [*names, *aliases])
        return self._words

    def _names(self, name: str) -> list[str]:
        """``name`` as written, without a leading "the", then the one thing it is also called."""
        out = [name]
        if name.startswith("the ") and len(name) > 4:
            out.append(name[4:])
        for n in list(out):
            owners = {normalize(s) for s in self.store.subjects(ALIAS_PREDICATE, n)}
            if len(owners) == 1:
                out.append(owners.pop())
        return out

    def _kinds(self, subject: str) -> set[str]:
        return {normalize(k) for k in self.store.objects(subject, KIND_PREDICATE)}

    def _resolve(self, ask: Ask) -> str | None:
        if ask.direction == "members":
            return _counted(self.store.subjects(KIND_PREDICATE, ask.kind), "")
        rel = self.vocabulary.relation(ask.predicate)
        if ask.direction == "object":
            for name in self._names(ask.name):
                found = self.store.objects(name, ask.predicate)
                if found:
                    return _answer(ask, rel, found)
            return None
        if ask.direction == "subject":
            values = [ask.name, ask.name.removeprefix("the "), *self._short(ask, rel)]
            for value in dict.fromkeys(values):
                found = self.store.subjects(ask.predicate, value)
                kinds = {s: self._kinds(s) for s in found} if len(found) > 1 or ask.kind else {}
                if ask.kind and any(kinds.values()):
                    # a store that says what things are: keep the kind asked for
                    found = [s for s in found if ask.kind in kinds[s]]
                elif len({frozenset(k) for k in kinds.values()}) > 1:
                    return None  # "what does N stand for": things of several kinds, not one answer
                if found:
                    plain = Relation(rel.predicate, note=rel.note, count=rel.count)
                    return _answer(ask, plain, found)
            return None
        return self._extreme(ask, rel)

    def _short(self, ask: Ask, rel: Relation) -> list[str]:
        """For a relation whose values may be named short ("the yen"): the one value that ends
        with the name asked ("Japanese Yen"); none when no value or several do ("the franc")."""
        if not rel.short:
            return []
        name = normalize(ask.name.removeprefix("the "))
        ending = f" {name}"
        values = {
            normalize(value)
            for kind in ([ask.kind] if ask.kind else rel.subjects)
            for _, value in self._values_of_kind(kind, ask.predicate)
        }
        matches = [v for v in values if v.endswith(ending)]
        return matches if len(matches) == 1 else []

    def _values_of_kind(self, kind: str, predicate: str) -> list[tuple[str, str]]:
        fast = getattr(self.store, "values_of_kind", None)  # one query where a store offers it
        if fast is not None:
            return list(fast(kind, predicate))
        return [
            (thing, value)
            for thing in self.store.subjects(KIND_PREDICATE, kind)
            for value in self.store.objects(thing, predicate)
        ]

    def _extreme(self, ask: Ask, rel: Relation) -> str | None:
        best: list[tuple[float, str, str]] = []
        for thing, value in sorted(self._values_of_kind(ask.kind, ask.predicate)):
            m = _LEADING_NUMBER.match(value.replace(",", ""))
            if m is None:
                continue
            x = float(m.group())
            if not best or (x > best[0][0] if ask.largest else x < best[0][0]):
                best = [(x, thing, value)]
            elif x == best[0][0]:
                best.append((x, thing, value))
        if not best:
            return None
        unit = f" {rel.unit}" if rel.unit else ""
        shown = ", ".join(f"{thing} ({value}{unit})" for _, thing, value in best)
        return shown + (f" ({rel.note})" if rel.note else "")


MAX_LISTED = 20
"""Most things a count names after its number; a larger count is the number alone."""

MAX_NAMES = 50_000
"""The most names :meth:`GraphStage._fact_words` indexes for repairing slips."""
MAX_ALIAS_LOOKUPS = 5_000
"""The most names whose other names :meth:`GraphStage._fact_words` looks up (one lookup each:
an Oxigraph or PostgreSQL store answers each in tens of microseconds)."""


def _counted(found: list[str], note: str) -> str | None:
    """A count: how many distinct things were found, then (up to :data:`MAX_LISTED`) which, so
    the answer shows what it counted; ``None`` for none (a count of 0 is never said: the store
    may not hold what was asked about)."""
    things = sorted({normalize(v): v for v in found}.values(), key=lambda v: (v.casefold(), v))
    if not things:
        return None
    text = str(len(things))
    if len(things) <= MAX_LISTED:
        text += f" ({', '.join(things)})"
    return text + (f" ({note})" if note else "")


def _answer(ask: Ask, rel: Relation, found: list[str]) -> str | None:
    """The values found, or how many when the question asks for a count."""
    if ask.count:
        return _counted(found, "" if rel.count == "yes" else rel.count)
    return _shown(rel, found)


def _shown(rel: Relation, found: list[str]) -> str:
    """The answer: the values in one order whatever the store (sorted), with unit and note."""
    unit = f" {rel.unit}" if rel.unit else ""
    text = ", ".join(f"{v}{unit}" for v in sorted(set(found), key=lambda v: (v.casefold(), v)))
    return text + (f" ({rel.note})" if rel.note else "")


__all__ = [
    "ALIAS_PREDICATE",
    "KIND_PREDICATE",
    "MAX_LISTED",
    "MAX_TERM_BYTES",
    "GraphStage",
    "QuestionMatcher",
    "TripleSource",
    "TripleStore",
    "Vocabulary",
]
