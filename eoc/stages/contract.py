"""What a stage must provide and what it may: the cascade's contract, declared in one place.

Every stage is a :class:`StageLike`: its kind (``stage``), its own figure (``figure``) and
``lookup(query)``, which answers or passes (``None``). The last stage is the model; it always
answers. Beyond that, a stage may have any of these hooks, each a Protocol below, and the
cascade uses a hook only where the stage has it:

========================  =====================  ==========================================
hook                      on                     what the cascade does with it
========================  =====================  ==========================================
:class:`Memo`             the cache, the kv      hands it answers to remember
:class:`KnowsOrigin`      the model              what makes its answers now (a remembered
                                                 answer another model made is not served)
:class:`CountsTokens`     the model              its tokenizer: a fact must fit max_tokens
:class:`WorstCase`        the model              the most an answer may cost
:class:`WouldCost`        the model              what it would spend on an answer (savings)
:class:`StatesRates`      the model              its work rates (the most making one cost)
:class:`Estimates`        any stage              its own estimate where its answer has none
:class:`Prepares`         the kv                 told before the model is asked (it embeds
                                                 the question meanwhile)
:class:`Partitioned`      the kv                 keeps partitions (:mod:`eoc.store.partition`)
:class:`Judged`           the kv                 a judge of meaning weighs joules saved
:class:`Closes`           any stage              closed with the cascade
========================  =====================  ==========================================

:func:`wire` reads a list of stages once into a :class:`Wiring`: the stages checked, and each
hook found, typed. The cascade reads only that; nothing else looks at a stage's attributes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from eoc.cost import JouleCost
from eoc.errors import ConfigError
from eoc.query import Query, Stage
from eoc.stages.base import Answer, WorkRates
from eoc.stages.judging import Judging
from eoc.store.entry import Generation
from eoc.store.protocols import PENDING


@runtime_checkable
class StageLike(Protocol):
    """A stage: answers a query or passes (returns ``None``)."""

    stage: Stage
    figure: JouleCost

    def lookup(self, query: Query) -> Answer | None: ...


@runtime_checkable
class Memo(Protocol):
    """A stage that can remember an answer so a later query hits it, with what made it
    (``origin``: "" when no model did; see :meth:`eoc.stages.neural.NeuralStage.origin`) and how
    (``generation``, :class:`eoc.store.entry.Generation`; ``None`` when no model made it).

    ``remember`` returns ``None`` once the answer is remembered (written through, for a store),
    or :data:`PENDING` when a shared store is down and the write waits for it; it raises
    :class:`~eoc.errors.StoreError` when it could not be remembered.

    A stage whose ``remember(query, payload)`` takes no ``origin`` (written before eoc recorded
    one) is still wired, and handed only answers no model made: it could not tell later which
    model made one. One that takes ``origin`` but no ``generation`` gets answers without it."""

    def remember(
        self, query: Query, payload: str, origin: str = "", *, generation: Generation | None = None
    ) -> str | None: ...


@runtime_checkable
class KnowsOrigin(Protocol):
    def origin(self) -> str: ...


@runtime_checkable
class CountsTokens(Protocol):
    def count_tokens(self, text: str) -> int | None: ...


@runtime_checkable
class WorstCase(Protocol):
    def worst_case(self, query: Query) -> JouleCost: ...


@runtime_checkable
class WouldCost(Protocol):
    def would_cost(self, query: Query, payload: str) -> JouleCost | None: ...


@runtime_checkable
class StatesRates(Protocol):
    def rates(self) -> WorkRates | None: ...


@runtime_checkable
class Estimates(Protocol):
    def estimate(self, query: Query, answer: Answer) -> JouleCost: ...


@runtime_checkable
class Prepares(Protocol):
    def will_remember(self, query: Query) -> None: ...


@runtime_checkable
class Partitioned(Protocol):
    keeps_partitions: bool


@runtime_checkable
class Judged(Protocol):
    """A kv with a judge of meaning: the cascade gives it ``saving(query, answer)``, what
    serving the answer would save (``None``: no model to compare with)."""

    judging: Judging | None
    saving: Callable[[Query, Answer], JouleCost | None] | None


@runtime_checkable
class BoundsSaving(Protocol):
    """A judged kv that also reads a bound on ``saving`` over its stored answers before it embeds
    a question (``saving_bound(query, longest answer's characters, dearest recorded µJ)``), so
    it need not embed for a judge that no stored answer could pay for."""

    saving_bound: Callable[[Query, int, int], int | None] | None


@runtime_checkable
class Closes(Protocol):
    def close(self) -> None: ...


@runtime_checkable
class LooksAlike(Protocol):
    """A kv whose lookup has two halves: the stored answer to the question itself (no
    embedding), then a similar stored question's. The cascade asks the graph between them
    (:func:`steps`)."""

    def lookup_exact(self, query: Query) -> Answer | None: ...

    def lookup_similar(self, query: Query) -> Answer | None: ...


class Half:
    """One half of a :class:`LooksAlike` stage's lookup, as one step of the cascade: the
    stage's kind and figure, and that half's ``lookup``."""

    __slots__ = ("figure", "lookup", "stage", "whole")

    def __init__(self, whole: StageLike, lookup: Callable[[Query], Answer | None]) -> None:
        self.whole = whole
        self.stage: Stage = whole.stage
        self.figure: JouleCost = whole.figure
        self.lookup = lookup

    def __repr__(self) -> str:
        return f"Half({self.whole!r}, {getattr(self.lookup, '__name__', '?')})"


def steps(stages: Sequence[StageLike]) -> tuple[StageLike, ...]:
    """The cheap stages of ``stages`` (all but the model) in the order the cascade asks them.

    A kv whose lookup has two halves (:class:`LooksAlike`) is asked for the question itself in
    its place, and for a similar question after the graph: the graph's answers are right by
    construction, so a similar stored question could only repeat one or be wrong, and a
    question the graph or a computation answers never waits for an embedding model to load or
    run. Without a graph the two halves are one step, as before."""
    cheap = tuple(s for s in stages if s.stage is not Stage.NEURAL)
    kv = next((s for s in cheap if s.stage is Stage.KV), None)
    graph = next((s for s in cheap if s.stage is Stage.GRAPH), None)
    if kv is None or graph is None or not isinstance(kv, LooksAlike):
        return cheap
    out: list[StageLike] = []
    for s in cheap:
        out.append(Half(kv, kv.lookup_exact) if s is kv else s)
        if s is graph:
            out.append(Half(kv, kv.lookup_similar))
    return tuple(out)


Remember = Callable[[Query, str, str, "Generation | None"], "str | None"]


@dataclass(frozen=True)
class Remembering:
    """How to hand one memo stage an answer: ``call(query, payload, origin, generation)``;
    ``origins`` False for a stage that cannot keep what made an answer (it gets only answers
    no model made)."""

    stage: StageLike
    call: Remember
    origins: bool


_ORDER = (Stage.CACHE, Stage.KV, Stage.GRAPH, Stage.NEURAL)


@dataclass(frozen=True)
class Wiring:
    """A list of stages, checked, with each hook the cascade uses found once."""

    stages: tuple[StageLike, ...]
    cache: Remembering | None
    kv: Remembering | None
    neural: StageLike
    origin: Callable[[], str] | None
    count_tokens: Callable[[str], int | None] | None
    worst_case: Callable[[Query], JouleCost] | None
    would_cost: Callable[[Query, str], JouleCost | None] | None
    rates: Callable[[], WorkRates | None] | None
    will_remember: Callable[[Query], None] | None
    partitions: bool
    judged: Judged | None
    estimates: dict[int, Callable[[Query, Answer], JouleCost]]
    closes: tuple[Callable[[], None], ...]

    def estimate_of(self, stage: StageLike) -> Callable[[Query, Answer], JouleCost] | None:
        """``stage``'s own estimate for an answer that carries none, if it has one."""
        return self.estimates.get(id(stage))


def wire(stages: Sequence[StageLike]) -> Wiring:
    """Check ``stages`` (in cascade order, each kind at most once, ending with the model) and
    find each hook they have.

    Raises:
        ConfigError: what is wrong with the list, and what a stage needs.
    """
    if isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence) or not stages:
        raise ConfigError("stages must be a non-empty sequence ending with a neural stage")
    kinds = []
    for s in stages:
        if not isinstance(s, StageLike) or not isinstance(s.stage, Stage) or not callable(s.lookup):
            raise ConfigError(f"{s!r} is not a stage (needs .stage and .lookup(query))")
        if not isinstance(s.figure, JouleCost):
            raise ConfigError(f"{s!r} has no .figure (its own JouleCost per answer)")
        kinds.append(s.stage)
    if kinds[-1] is not Stage.NEURAL:
        raise ConfigError("the last stage must be neural, so that every query gets an answer")
    positions = [_ORDER.index(k) for k in kinds]
    if positions != sorted(set(positions)):
        raise ConfigError(
            "stages must be in cascade order cache, kv, graph, neural, each at most once"
        )
    listed = tuple(stages)
    neural = listed[-1]
    kv = next((s for s in listed if s.stage is Stage.KV), None)
    return Wiring(
        stages=listed,
        cache=_remembering(next((s for s in listed if s.stage is Stage.CACHE), None)),
        kv=_remembering(kv),
        neural=neural,
        origin=neural.origin if isinstance(neural, KnowsOrigin) else None,
        count_tokens=neural.count_tokens if isinstance(neural, CountsTokens) else None,
        worst_case=neural.worst_case if isinstance(neural, WorstCase) else None,
        would_cost=neural.would_cost if isinstance(neural, WouldCost) else None,
        rates=neural.rates if isinstance(neural, StatesRates) else None,
        will_remember=kv.will_remember if isinstance(kv, Prepares) else None,
        partitions=isinstance(kv, Partitioned) and bool(kv.keeps_partitions),
        judged=kv if isinstance(kv, Judged) and isinstance(kv.judging, Judging) else None,
        estimates={id(s): s.estimate for s in listed if isinstance(s, Estimates)},
        closes=tuple(s.close for s in listed if isinstance(s, Closes)),
    )


def _remembering(stage: StageLike | None) -> Remembering | None:
    """How to hand ``stage`` an answer, from what its ``remember`` takes (``None``: it keeps
    none). A third party's stage may predate ``origin`` or ``generation``; its signature says
    which, read once here."""
    if stage is None or not isinstance(stage, Memo):
        return None
    remember = stage.remember
    try:
        params = dict(inspect.signature(remember).parameters)
    except (TypeError, ValueError):
        params = {}  # no signature to read: handed only what every remember takes
    kinds = {p.kind for p in params.values()}
    origins = "origin" in params or inspect.Parameter.VAR_POSITIONAL in kinds
    if origins and ("generation" in params or inspect.Parameter.VAR_KEYWORD in kinds):

        def full(q: Query, payload: str, origin: str, gen: Generation | None) -> str | None:
            return remember(q, payload, origin, generation=gen)

        return Remembering(stage, full, True)
    if origins:

        def with_origin(q: Query, payload: str, origin: str, _: Generation | None) -> str | None:
            return remember(q, payload, origin)

        return Remembering(stage, with_origin, True)

    def bare(q: Query, payload: str, _origin: str, _gen: Generation | None) -> str | None:
        return remember(q, payload)

    return Remembering(stage, bare, False)


__all__ = [
    "PENDING",
    "BoundsSaving",
    "Closes",
    "CountsTokens",
    "Estimates",
    "Half",
    "Judged",
    "KnowsOrigin",
    "LooksAlike",
    "Memo",
    "Partitioned",
    "Prepares",
    "Remembering",
    "StageLike",
    "StatesRates",
    "Wiring",
    "WorstCase",
    "WouldCost",
    "steps",
    "wire",
]
