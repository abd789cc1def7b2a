"""A judge of meaning for the kv stage, and the rule that says when it pays for its joules.

The rule guard (:mod:`eoc.stages.guard`) is precise but narrow: it refuses a stored question
whose wording differs more than it can vouch for ("carry-on" / "hand luggage"). Such a refusal
is for want of evidence (:class:`~eoc.stages.guard.Wording`), not for a difference that decides
the answer. A *judge* reads the two questions and says whether one answer fits both; the kv stage
asks it only about those pairs, never about a pair the guard refused for a decisive difference
(numbers, operators, names, negation, opposites, ranks, sides, roles, times, actions).

Judging costs joules (a 1.5B model reads ~100 tokens per pair), so :func:`energy_rule` runs the
judge only where its expected cost is below the expected saving: the probability that the pair
is served times what the answering model would spend on the question (its own record of the
stored answer, else the neural stage's estimate). ``EOC_JUDGE=on`` / ``off`` overrides the rule.

A *student* (a small classifier distilled from the judge, sub-millisecond) may sit in front:
sure of itself, it decides alone; unsure, it hands the pair to the judge and gives the energy
rule its probability. :class:`Judging` holds the three and counts every decision
(:class:`JudgeRecord`), which the server shows on ``/metrics``.

This module is pure Python (the browser has no judge, but the kv stage's hook is the same); the
judge and the student live in the native extra (``eoc_native.judge``).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from eoc.cost import JouleCost
from eoc.errors import ConfigError

ENV_JUDGE = "EOC_JUDGE"
MODES = ("auto", "on", "off")
"""``auto``: the energy rule decides each pair; ``on``: every judgeable pair is judged;
``off``: none is (the guard alone decides)."""

JUDGE_CANDIDATES = 2
"""Stored questions a missed lookup may hand to the judge, best cosine first."""
REMEMBERED = 4096
"""Judged pairs remembered per kv stage (approved and refused), the oldest forgotten first."""
PRIOR_SERVED = 0.5
"""The probability that a judged pair is served, before the judge has decided any here."""


def checked_mode(mode: str | None, where: str = ENV_JUDGE) -> str:
    """``mode`` (``None``: ``$EOC_JUDGE``, else ``auto``) checked against :data:`MODES`."""
    if mode is None:
        mode = os.environ.get(ENV_JUDGE, "").strip().lower() or "auto"
    if mode not in MODES:
        raise ConfigError(f"{where} is one of {', '.join(MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class Verdict:
    """What judging one pair decided.

    ``same``: the stored answer answers the query. ``probability``: the decider's probability
    that it does. ``by``: ``"student"`` or the judge's name. ``cost``: the judge's joules for
    this pair (``None`` for the student, whose microseconds are the kv's own work).
    """

    same: bool
    probability: float
    by: str
    cost: JouleCost | None = None
    rule: str = ""
    """Why the judge ran: the energy rule's figures, or the mode that overrode it."""

    def note(self) -> str:
        """One line for an answer's basis."""
        said = "the same question" if self.same else "another question"
        spent = "" if self.cost is None else f", {self.cost.uj / 1e6:.3g} J {self.cost.provenance}"
        why = f"; ran as {self.rule}" if self.rule else ""
        return f"a judge decided ({self.by}: {said}, p {self.probability:.2f}{spent}{why})"


@runtime_checkable
class Judge(Protocol):
    """A judge of meaning: whether a stored question's answer answers a query.

    ``name``: what the basis and the metrics call it. ``expected_uj()``: its µJ per judgement
    (measured or estimated; at least 1), for the energy rule. ``judge`` decides one pair;
    ``reason`` is why the guard would not serve it ("" when only the cosine was short).
    """

    name: str

    def expected_uj(self) -> int: ...

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict: ...


@runtime_checkable
class Student(Protocol):
    """A cheap classifier in front of the judge: ``probability`` that the pair is the same
    question; ``serve_at``/``refuse_at``: at or past these it decides alone."""

    @property
    def name(self) -> str: ...

    @property
    def serve_at(self) -> float: ...

    @property
    def refuse_at(self) -> float: ...

    def probability(self, query: str, stored: str, *, reason: str, cosine: float) -> float: ...


@dataclass(frozen=True)
class Decision:
    """The energy rule's decision for one pair, with the figures it used."""

    run: bool
    why: str
    p_served: float
    saving_uj: int | None
    judge_uj: int


def energy_rule(mode: str, p_served: float, saving_uj: int | None, judge_uj: int) -> Decision:
    """Whether to judge a pair: in ``auto`` mode when ``p_served × saving_uj > judge_uj`` (the
    expected saving exceeds what judging costs); ``on`` always; ``off`` never. An unknown saving
    (``None``: no model to compare with) is no saving: the judge does not run."""

    def d(run: bool, why: str) -> Decision:
        return Decision(run, why, p_served, saving_uj, judge_uj)

    if mode == "off":
        return d(False, f"{ENV_JUDGE}=off")
    if mode == "on":
        return d(True, f"{ENV_JUDGE}=on")
    if saving_uj is None:
        return d(False, "no figure for what the model would spend: nothing to save")
    expected = p_served * saving_uj
    said = (
        f"expected saving {expected / 1e6:.3g} J (p {p_served:.2f} × {saving_uj / 1e6:.3g} J) "
        f"{'>' if expected > judge_uj else '<='} a judgement {judge_uj / 1e6:.3g} J"
    )
    return d(expected > judge_uj, said)


OUTCOMES = (
    "served",
    "refused",
    "student_served",
    "student_refused",
    "skipped_energy",
    "failed",
)
"""How a judgeable pair ended: the judge served or refused it, the student decided alone, the
energy rule skipped it, or the judge failed (the pair is refused; the error is counted)."""


@dataclass
class JudgeRecord:
    """Counts of decisions by outcome and the judge's joules, for ``/metrics`` and the ledger."""

    decisions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    joules_uj: int = 0
    """The judge's µJ over every judgement (served or not)."""
    measured_uj: int = 0
    """The part of :attr:`joules_uj` read from a live counter."""
    last: Decision | None = None
    last_error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, outcome: str, cost: JouleCost | None = None) -> None:
        with self.lock:
            self.decisions[outcome] += 1
            if cost is not None:
                self.joules_uj += cost.uj
                if cost.measured:
                    self.measured_uj += cost.uj

    def served_rate(self) -> float:
        """The share of the judge's own decisions that served, with one served and one refused
        assumed beforehand (:data:`PRIOR_SERVED` before any)."""
        with self.lock:
            served, refused = self.decisions["served"], self.decisions["refused"]
        return (served + 1) / (served + refused + 2)

    def snapshot(self) -> dict[str, object]:
        with self.lock:
            return {
                "decisions": dict(self.decisions),
                "joules": self.joules_uj / 1e6,
                "joules_measured": self.measured_uj / 1e6,
            }


def _asked(pair: Hashable) -> Hashable:
    """The question of a pair key: its first item (the kv's keys are ``(folded question, stored
    key, stored question)``), or the key itself."""
    return pair[0] if isinstance(pair, tuple) and pair else pair


class Judging:
    """The kv stage's judge, student, mode and record, and the pairs already judged.

    Args:
        judge: the judge of meaning (``None``: the student alone decides, where sure).
        student: the cheap classifier in front (``None``: every judgeable pair goes to the rule).
        mode: ``auto`` / ``on`` / ``off`` (``None``: ``$EOC_JUDGE``, else ``auto``).
        floor: the least cosine of a stored question the judge may see (below the kv's threshold:
            a rewording in other words scores lower than a few words changed).
        candidates: stored questions handed over per missed lookup, best first.
    """

    def __init__(
        self,
        judge: Judge | None = None,
        student: Student | None = None,
        *,
        mode: str | None = None,
        floor: float = 0.5,
        candidates: int = JUDGE_CANDIDATES,
    ) -> None:
        if judge is None and student is None:
            raise ConfigError("Judging needs a judge, a student or both")
        if not (0.0 < floor <= 1.0):
            raise ConfigError(f"the judge's floor is a cosine in (0, 1], got {floor!r}")
        if candidates < 1:
            raise ConfigError(f"the judge sees at least one candidate, got {candidates!r}")
        self.judge = judge
        self.student = student
        self.mode = checked_mode(mode)
        self.floor = float(floor)
        self.candidates = int(candidates)
        self.record = JudgeRecord()
        self._seen: OrderedDict[Hashable, Verdict] = OrderedDict()
        self._served_for: dict[Hashable, int] = {}  # a pair's first item -> remembered serves
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        parts = [p.name for p in (self.student, self.judge) if p is not None]
        return " + ".join(parts)

    def remembered(self, pair: Hashable) -> Verdict | None:
        with self._lock:
            found = self._seen.get(pair)
            if found is not None:
                self._seen.move_to_end(pair)
            return found

    def _remember(self, pair: Hashable, verdict: Verdict) -> None:
        with self._lock:
            before = self._seen.get(pair)
            if before is not None and before.same:
                self._count_served(pair, -1)
            self._seen[pair] = verdict
            if verdict.same:
                self._count_served(pair, 1)
            while len(self._seen) > REMEMBERED:
                dropped, was = self._seen.popitem(last=False)
                if was.same:
                    self._count_served(dropped, -1)

    def _count_served(self, pair: Hashable, step: int) -> None:
        asked = _asked(pair)
        n = self._served_for.get(asked, 0) + step
        if n > 0:
            self._served_for[asked] = n
        else:
            self._served_for.pop(asked, None)

    def forget(self) -> None:
        """Drop every remembered verdict (the stored questions changed)."""
        with self._lock:
            self._seen.clear()
            self._served_for.clear()

    def cannot_serve(self, asked: Hashable, saving_uj: int | None) -> bool:
        """Whether :meth:`decide` would serve no pair of the question ``asked`` (the first item
        of the caller's pair keys) where serving any stored answer would save at most
        ``saving_uj`` (``None``: no figure, nothing to save): mode ``off``; or ``auto`` with a
        judge the energy rule would not run even for a pair sure to be served, a student that
        never serves alone (or none), and no remembered verdict that served ``asked``. A kv then
        need not embed a question for the judge's sake (:mod:`eoc.stages.kv`)."""
        if self.mode == "off":
            return True
        if self.mode != "auto" or self.judge is None:
            return False
        if self.student is not None and self.student.serve_at < 1.0:
            return False  # the student may serve alone, whatever the joules
        with self._lock:
            if asked in self._served_for:
                return False  # a verdict that served is served again at no cost
        judge_uj = max(1, int(self.judge.expected_uj()))
        best = energy_rule(self.mode, 1.0, saving_uj, judge_uj)
        if best.run:
            return False
        self.record.last = best  # as decide() records its own: the rule, not a pair
        return True

    def decide(
        self,
        pair: Hashable,
        query: str,
        stored: str,
        *,
        reason: str,
        cosine: float,
        saving_uj: int | None,
    ) -> Verdict | None:
        """The verdict on one judgeable pair, or ``None`` when nothing decided it (the energy
        rule skipped the judge, or no judge is there for a pair the student is unsure of).

        A pair decided before (``pair``: the caller's key for it) gets the same verdict, at no
        cost: the approved pair is served from then on, the refused one not judged again.
        """
        if self.mode == "off":
            return None
        known = self.remembered(pair)
        if known is not None:
            return Verdict(known.same, known.probability, known.by, None, "decided before")
        p = None
        judge_uj = 1 if self.judge is None else max(1, int(self.judge.expected_uj()))
        if self.judge is not None and (self.student is None or self.student.serve_at >= 1.0):
            # a student that never serves alone is worth running only where the judge may run:
            # where even a sure pair's saving is below a judgement, neither runs
            best = energy_rule(self.mode, 1.0, saving_uj, judge_uj)
            if not best.run:
                self.record.last = best
                self.record.count("skipped_energy")
                return None
        if self.student is not None:
            p = self.student.probability(query, stored, reason=reason, cosine=cosine)
            if p >= self.student.serve_at or p <= self.student.refuse_at or self.judge is None:
                if p >= self.student.serve_at:
                    verdict = Verdict(True, p, self.student.name)
                    self.record.count("student_served")
                elif p <= self.student.refuse_at:
                    verdict = Verdict(False, p, self.student.name)
                    self.record.count("student_refused")
                else:
                    return None  # unsure, and no judge to ask
                self._remember(pair, verdict)
                return verdict
        assert self.judge is not None
        p_served = self.record.served_rate() if p is None else p
        decision = energy_rule(self.mode, p_served, saving_uj, judge_uj)
        self.record.last = decision
        if not decision.run:
            self.record.count("skipped_energy")
            return None
        try:
            verdict = self.judge.judge(query, stored, reason=reason, cosine=cosine)
        except Exception as exc:  # a judge that fails serves nothing: the model answers
            self.record.last_error = f"{type(exc).__name__}: {exc}"
            self.record.count("failed")
            return None
        verdict = Verdict(verdict.same, verdict.probability, verdict.by, verdict.cost, decision.why)
        self.record.count("served" if verdict.same else "refused", verdict.cost)
        self._remember(pair, verdict)
        return verdict


__all__ = [
    "ENV_JUDGE",
    "JUDGE_CANDIDATES",
    "MODES",
    "OUTCOMES",
    "Decision",
    "Judge",
    "JudgeRecord",
    "Judging",
    "Student",
    "Verdict",
    "checked_mode",
    "energy_rule",
]
