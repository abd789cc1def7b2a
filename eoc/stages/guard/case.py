"""What every rule of the entity guard reads: the pair (:class:`Case`), a rule's record in the
table (:class:`Rule`) and the two kinds of refusal, decisive or for want of evidence
(:class:`Wording`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from eoc.stages.guard.analysis import Analysis
from eoc.stages.guard.frame import Frame, _one_sided


class Wording(str):
    """A refusal for want of evidence, never for a difference that decides the answer: the
    query says the stored question in other words, changes or adds a word that may or may not
    matter (:meth:`Frame.wording`), names an action or a pole the other side does not say at all
    ("begin" / "start", "descale" / "remove limescale"), or asks a kind of answer where the
    other asks none ("oakfield primary start time" / "What time does school start?"). Where no
    decisive difference is there besides, also: a name one side adds with no name in its place
    ("HMRC"), a time one side names and the other leaves open ("last night"), both poles of an
    axis joined by "or" or "and" on one side ("before or after"). A judge of meaning
    (:mod:`eoc.stages.judging`) may decide such a pair; every other refusal is final: numbers,
    operators and symbols, a name in place of another, capitals and the order of names,
    negation, ranks, opposite poles and different actions both sides name, the sides of a
    transfer, who does what to whom, two different times, the tense, and question words both
    sides ask."""

    __slots__ = ()


def judgeable(reason: str) -> bool:
    """Whether a guard's refusal leaves the pair to a judge of meaning: only a refusal for
    want of evidence (:class:`Wording`), never a decisive difference."""
    return isinstance(reason, Wording) and bool(reason)


class Case:
    """One pair the rules read: the query's analysis ``q``, the stored question's ``s``, and what
    several rules share, each found when a rule first asks for it (most pairs are refused before
    the frame is ever needed)."""

    def __init__(self, q: Analysis, s: Analysis, *, rewordings: bool = False) -> None:
        self.q = q
        self.s = s
        self.rewordings = rewordings  # a rewording in other words is left to similarity
        # a query that takes words back ("no sorry", "I mean") may carry what it took back
        self.corrected = q.corrected

    @functools.cached_property
    def turned(self) -> bool:
        """Whether the names may come in another order: "X's code", "the code of X" and "X
        code" name the same things."""
        q, s = self.q, self.s
        return q.possessive or s.possessive or ("of" in q.words) != ("of" in s.words)

    @functools.cached_property
    def frame(self) -> Frame:
        """How the two differ in their content words (:class:`~eoc.stages.guard.frame.Frame`)."""
        return Frame(self.q, self.s)

    @functools.cached_property
    def one_sided(self) -> frozenset[str]:
        """The axes of opposites one side touches and the other not at all."""
        return _one_sided(self.q, self.s)


Check = Callable[[Analysis, Analysis, Case], "str | None"]
"""A rule: given the query's analysis, the stored question's and the pair, ``None`` when it has
nothing to say, else the reason it decides with ("" when it lets the pair through)."""


@dataclass(frozen=True)
class Rule:
    """One row of the rule table (:data:`eoc.stages.guard.rules.RULES`)."""

    name: str
    check: Check
    notes: bool = False
    """Whether a :class:`Wording` this rule gives is noted and the rules go on: a difference
    only meaning tells apart refuses only after every decisive rule has had its say."""


def _subsequence(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)
