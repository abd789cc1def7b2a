"""What every stage shares: the answer type, the stage protocol, default figures."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from eoc.cost import JouleCost
from eoc.errors import ConfigError
from eoc.query import Query, Stage
from eoc.response import Response


class Answer:
    """A stage's answer: the payload and, if the stage reports one, its own cost.

    ``cost`` is ``None`` when the stage reports no figure for this answer; the
    cascade then charges the stage's documented default figure. The ``memo_*``
    slots keep the last response built for an answer a stage hands out again and
    again (a cache entry), so a repeat hit with the same charge reuses it.
    """

    __slots__ = ("cost", "memo_cost", "memo_qid", "memo_response", "payload")

    def __init__(self, payload: str, cost: JouleCost | None = None) -> None:
        self.payload = payload
        self.cost = cost
        self.memo_cost: JouleCost | None = None
        self.memo_qid: str | None = None
        self.memo_response: Response | None = None

    def __repr__(self) -> str:
        return f"Answer({self.payload!r:.40}, cost={self.cost!r})"


@runtime_checkable
class StageLike(Protocol):
    """A stage: answers a query or passes (returns ``None``)."""

    stage: Stage
    figure: JouleCost

    def lookup(self, query: Query) -> Answer | None: ...


@runtime_checkable
class Memo(Protocol):
    """A stage that can remember an answer so a later query hits it."""

    def remember(self, query: Query, payload: str) -> None: ...


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


__all__ = ["DEFAULT_FIGURE_UJ", "Answer", "Memo", "StageLike", "stage_figure"]
