"""The default hit guard, :class:`EntityGuard`: it asks the rule table
(:data:`eoc.stages.guard.rules.RULES`) whether a similar stored question asks the same thing."""

from __future__ import annotations

from collections.abc import Hashable

from eoc.compute import is_computation
from eoc.stages.guard.analysis import Analysis, Said, _read
from eoc.stages.guard.case import Case
from eoc.stages.guard.reading import corrections, symbols
from eoc.stages.guard.rules import refusal
from eoc.stages.guard.wordkeys import asked_keys, stored_keys


class EntityGuard:
    """Serve a similar stored question only if it asks the same thing (the rules are
    :data:`~eoc.stages.guard.rules.RULES`, described in :mod:`eoc.stages.guard`; :meth:`refusal`
    says why a pair was refused).

    ``allows`` and ``refusal`` take texts or their :meth:`prepare` analyses; the decision is the same.
    """

    name = "entities"
    fingerprint_id = "entities/1"
    """Names :meth:`fingerprint` where a store keeps it (PostgreSQL with pgvector): change it
    with what :meth:`fingerprint` reads, so a store's fingerprints of the old kind are read again."""

    def __init__(self, *, rewordings: bool = False) -> None:
        self.rewordings = rewordings

    @staticmethod
    def prepare(text: str) -> Analysis:
        """The analysis of ``text`` that :meth:`allows` reads (reuse it across checks)."""
        return Analysis(text)

    @staticmethod
    def fingerprint(text: str) -> Hashable | None:
        """The numbers and the operators in order; ``None`` when the text corrects itself, as a
        corrected query may carry numbers it took back (so fingerprints cannot rule a pair out)."""
        if corrections(text):
            return None
        return _read(text)[4], symbols(text)

    @staticmethod
    def refuses_every(text: str) -> bool:
        """Whether every stored question would be refused for ``text`` whatever it says: a
        computation is answered by computing it, never by a similar question (the first rule),
        so the kv need not embed it to find candidates."""
        return is_computation(text)

    @staticmethod
    def stored_keys(stored: str | Analysis) -> frozenset[str]:
        """The keys of a stored question's words (:mod:`eoc.stages.guard.wordkeys`), from its
        text or its analysis (:meth:`prepare`)."""
        return stored_keys(stored if isinstance(stored, Analysis) else Said(stored))

    def asked_keys(self, query: str | Analysis) -> tuple[frozenset[str], ...] | None:
        """For each word ``query`` asks, keys a stored question must share one of to pass
        (:mod:`eoc.stages.guard.wordkeys`); ``None`` when this guard may serve a stored question
        that shares none (``rewordings``, or a query that corrects itself). A judge of meaning
        may serve such a pair even so: the kv stage asks only when it has none."""
        if self.rewordings:
            return None
        return asked_keys(query if isinstance(query, Analysis) else Said(query))

    def allows(self, query: str | Analysis, stored: str | Analysis) -> bool:
        return not self.refusal(query, stored)

    def refusal(self, query: str | Analysis, stored: str | Analysis) -> str:
        """Why the stored question may not answer the query ("" when it may)."""
        q = query if isinstance(query, Analysis) else Analysis(query)
        s = stored if isinstance(stored, Analysis) else Analysis(stored)
        return refusal(Case(q, s, rewordings=self.rewordings))
