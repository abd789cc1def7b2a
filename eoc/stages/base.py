"""What every stage shares: the answer type, the stage protocol, default figures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from eoc.cost import JouleCost
from eoc.errors import ConfigError
from eoc.query import Stage
from eoc.response import Response
from eoc.store.entry import EntryMeta, Generation


class Built:
    """What the cascade last built for one answer a stage hands out again and again (a cache
    entry): the charge, the query id and the response, so a repeat hit with the same charge
    reuses the response; and what the savings ledger last found for it (:mod:`eoc.ledger`): by
    query id, what making it cost (when recorded) and what the model would have spent on it.
    Written by the cascade only; it is never part of an answer's value."""

    __slots__ = ("avoided", "cost", "qid", "response")

    def __init__(self) -> None:
        self.cost: JouleCost | None = None
        self.qid: str | None = None
        self.response: Response | None = None
        self.avoided: tuple[str, JouleCost | None, JouleCost | None, str] | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """A stage's answer (a value: frozen): the payload, if the stage reports one its own cost,
    and what made it.

    ``cost`` is ``None`` when the stage reports no figure for this answer; the cascade then
    charges the stage's documented default figure. ``built`` is the cascade's note of what it
    last built for the answer (:class:`Built`), not part of its value.
    """

    payload: str
    cost: JouleCost | None = None
    # what made a remembered answer: "" for one no model made (the pack, the graph, a
    # computation), else the model and its answer-changing parameters (NeuralStage.origin)
    origin: str = ""
    memo: bool = True  # False: the cascade must not remember it (see eoc.stages.neural)
    unkept: str = ""  # why a model's answer is not remembered, when it is broken
    tokens: tuple[int, int] | None = None  # a model's (tokens in, tokens out)
    # how a model generated it (eoc.store.entry): a fresh model answer's, or a remembered one's as
    # kept (UNKNOWN when kept before eoc recorded it); None when no model made it
    generation: Generation | None = None
    meta: EntryMeta | None = None  # a remembered entry's record (age, expiry)
    own_estimate: JouleCost | None = None  # a local backend's fallback (Reply.estimate)
    built: Built = field(default_factory=Built, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        return f"Answer({self.payload!r:.40}, cost={self.cost!r})"


DEFAULT_FIGURE_UJ: dict[Stage, int] = {
    Stage.CACHE: 10,
    Stage.KV: 1_000,
    Stage.GRAPH: 500,
    Stage.NEURAL: 5_000_000,
}
"""Documented per-stage estimates in µJ, used when a stage reports no figure of its own.

* cache — 10 µJ: about 1 µs of one core at about 10 W.
* kv — 1,000 µJ: a similarity lookup of about 100 µs at about 10 W.
* graph — 500 µJ: a question match and an index lookup, about 50 µs at about 10 W.
* neural — 5,000,000 µJ (5 J): a short answer from a small local model on a CPU
  (about 50 tokens at about 0.1 J a token).

They are orders of magnitude, not measurements; override them per stage with
``figure_uj=``. On a host with a live counter, ``eoc hit-cost`` shows what a hit
really takes.
"""

_WHY = {
    Stage.CACHE: "about 1 µs of one core at about 10 W",
    Stage.KV: "a similarity lookup of about 100 µs at about 10 W",
    Stage.GRAPH: "a question match of about 50 µs at about 10 W",
    Stage.NEURAL: "a short answer from a small local model on a CPU",
}


def stage_figure(stage: Stage, uj: int | None = None) -> JouleCost:
    """The stage's own ESTIMATED figure: the documented default, or ``uj`` when given."""
    if uj is None:
        return JouleCost.estimated(
            DEFAULT_FIGURE_UJ[stage], f"{stage.value} stage estimate ({_WHY[stage]})"
        )
    if isinstance(uj, bool) or not isinstance(uj, int) or uj < 1:
        raise ConfigError(
            f"{stage.value} figure_uj must be a whole number of µJ, at least 1; got {uj!r}"
        )
    return JouleCost.estimated(uj, f"{stage.value} stage figure set by the caller")


@dataclass(frozen=True)
class WorkRates:
    """How a stage's ESTIMATED figure scales with the work one answer took.

    ``base_uj`` + ``per_byte_nj`` × prompt bytes processed + ``per_candidate_uj`` × stored
    candidates scored + ``per_token_in_uj`` × prompt tokens + ``per_token_out_uj`` × tokens
    generated, rounded up to a whole µJ (at least 1).
    """

    base_uj: float
    per_byte_nj: float = 0.0
    per_candidate_uj: float = 0.0
    per_token_in_uj: float = 0.0
    per_token_out_uj: float = 0.0
    why: str = ""


WORK_RATES: dict[Stage, WorkRates] = {
    Stage.CACHE: WorkRates(10.0, per_byte_nj=10.0, why="1 µs + 1 ns per byte hashed, at 10 W"),
    Stage.KV: WorkRates(
        100.0,
        per_byte_nj=10_000.0,
        per_candidate_uj=20.0,
        why="10 µs + 1 µs per byte embedded + 2 µs per candidate checked, at 10 W",
    ),
    Stage.GRAPH: WorkRates(
        300.0, per_byte_nj=4_000.0, why="30 µs + 0.4 µs per byte matched, at 10 W"
    ),
    Stage.NEURAL: WorkRates(
        0.0,
        per_token_in_uj=10_000.0,
        per_token_out_uj=100_000.0,
        why="a small local model on a CPU at 10 W: 1 ms per prompt token, 10 ms per token generated",
    ),
}
"""The rates behind each stage's work-scaled estimate (all at an assumed 10 W for one core).

Measured on the development VM (CPython 3.11): SHA-256 about 0.85 ns/byte; the hashed n-gram
embedder 0.6–1.7 µs/byte; a graph question 65 µs for 29 bytes, 450 µs for 1 KB. A neural
backend that reports no figure is charged by tokens, counted as :func:`approx_tokens`. The kv's
per-byte share is the hashed embedder's: an embedder that estimates its own work
(``embed_estimate``, MiniLM's) is charged that instead for a hit it embedded the question for.
They are orders of magnitude, not measurements: on a host with a live counter, ``eoc hit-cost``
shows what a hit really takes, and neural answers are bracketed.
"""


def work_estimate(
    stage: Stage,
    *,
    nbytes: int = 0,
    candidates: int = 0,
    tokens_in: int = 0,
    tokens_out: int = 0,
    rates: WorkRates | None = None,
) -> JouleCost:
    """The ESTIMATED figure for one answer of ``stage`` that took this much work."""
    r = rates or WORK_RATES[stage]
    uj = (
        r.base_uj
        + r.per_byte_nj * nbytes / 1000
        + r.per_candidate_uj * candidates
        + r.per_token_in_uj * tokens_in
        + r.per_token_out_uj * tokens_out
    )
    parts = [f"{r.base_uj:g} µJ"] if r.base_uj else []
    if r.per_byte_nj:
        parts.append(f"{nbytes:,} bytes × {r.per_byte_nj:g} nJ")
    if r.per_candidate_uj:
        parts.append(f"{candidates} candidates × {r.per_candidate_uj:g} µJ")
    if r.per_token_in_uj or r.per_token_out_uj:
        parts.append(
            f"{tokens_in} tokens in × {r.per_token_in_uj:g} µJ + "
            f"{tokens_out} tokens out × {r.per_token_out_uj:g} µJ"
        )
    return JouleCost.estimated(
        max(1, math.ceil(uj)), f"{stage.value} estimate: {' + '.join(parts)} ({r.why})"
    )


__all__ = [
    "DEFAULT_FIGURE_UJ",
    "WORK_RATES",
    "Answer",
    "Built",
    "WorkRates",
    "stage_figure",
    "work_estimate",
]
