"""The stage contract (eoc.stages.contract): what the cascade finds on a list of stages, once,
and how it uses each hook it found: a third party's stage with only some hooks works, one with
none of them works, and one written before origins were recorded gets no model's answers."""

from __future__ import annotations

import ast
import inspect as pyinspect
from pathlib import Path

import pytest

import eoc.cascade
from eoc import Cascade, Query, Stage, StubCounter
from eoc.errors import ConfigError
from eoc.stages import CacheStage, KVStage, NeuralStage
from eoc.stages.base import Answer, stage_figure
from eoc.stages.contract import Memo, StageLike, wire
from eoc.store.entry import Generation
from eoc.testing import ScriptedBackend


class _Bare:
    """A third party's stage with the least a stage may have."""

    def __init__(self, kind: Stage) -> None:
        self.stage = kind
        self.figure = stage_figure(kind)
        self.asked: list[str] = []

    def lookup(self, query: Query) -> Answer | None:
        self.asked.append(query.prompt)
        return None


class _BareModel(_Bare):
    def lookup(self, query: Query) -> Answer:
        return Answer(f"made: {query.prompt}")


class _Remembers(_Bare):
    """A cache with the whole remember contract."""

    def __init__(self) -> None:
        super().__init__(Stage.CACHE)
        self.kept: dict[str, tuple[str, str, Generation | None]] = {}

    def lookup(self, query: Query) -> Answer | None:
        found = self.kept.get(query.prompt)
        return None if found is None else Answer(found[0], None, found[1])

    def remember(
        self, query: Query, payload: str, origin: str = "", *, generation: Generation | None = None
    ) -> str | None:
        self.kept[query.prompt] = (payload, origin, generation)
        return None


class _NoGeneration(_Remembers):
    def remember(self, query: Query, payload: str, origin: str = "") -> str | None:  # type: ignore[override]
        self.kept[query.prompt] = (payload, origin, None)
        return None


class _OriginBlind(_Remembers):
    def remember(self, query: Query, payload: str) -> str | None:  # type: ignore[override]
        self.kept[query.prompt] = (payload, "", None)
        return None


def test_a_stage_with_no_hooks_is_wired_and_used() -> None:
    model = _BareModel(Stage.NEURAL)
    cheap = _Bare(Stage.GRAPH)
    wiring = wire([cheap, model])
    assert wiring.cache is None and wiring.kv is None and wiring.judged is None
    assert wiring.origin is None and wiring.count_tokens is None and wiring.closes == ()
    assert isinstance(cheap, StageLike) and not isinstance(cheap, Memo)
    with Cascade([cheap, model], meter=StubCounter()) as cascade:
        r = cascade.resolve("what is eoc")
    assert r.stage is Stage.NEURAL and r.payload == "made: what is eoc"
    assert cheap.asked == ["what is eoc"]


def test_the_hooks_of_eocs_own_stages_are_found() -> None:
    model = NeuralStage(ScriptedBackend())
    wiring = wire([CacheStage(), KVStage(), model])
    assert wiring.cache is not None and wiring.cache.origins
    assert wiring.kv is not None and wiring.kv.origins and wiring.partitions
    assert wiring.will_remember is not None and wiring.origin is not None
    assert wiring.worst_case is not None and wiring.would_cost is not None
    assert wiring.estimate_of(model) is not None


@pytest.mark.parametrize(
    ("memo", "origin_kept", "generation_kept"),
    [(_Remembers, True, True), (_NoGeneration, True, False), (_OriginBlind, False, False)],
    ids=["whole contract", "no generation", "no origin"],
)
def test_a_memo_is_handed_what_its_remember_takes(
    memo: type[_Remembers], origin_kept: bool, generation_kept: bool
) -> None:
    cache = memo()
    with Cascade(
        [cache, NeuralStage(ScriptedBackend({"the answer to everything": "forty-two"}))],
        meter=StubCounter(),
    ) as cascade:
        first = cascade.resolve("the answer to everything")
    assert first.stage is Stage.NEURAL
    if not origin_kept:  # it could not say later which model made it: it is not given one
        assert cache.kept == {}
        return
    [(_key, (payload, origin, generation))] = cache.kept.items()
    assert payload == "forty-two" and origin  # a model made it, and it says which
    assert (generation is not None) is generation_kept


def test_a_stage_without_its_kind_or_figure_is_refused_with_what_it_lacks() -> None:
    class NoFigure:
        stage = Stage.GRAPH

        def lookup(self, query: Query) -> Answer | None:
            return None

    class BadFigure(NoFigure):
        figure = 10  # µJ, not a JouleCost

    model = _BareModel(Stage.NEURAL)
    with pytest.raises(ConfigError, match="is not a stage"):
        wire([NoFigure(), model])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"no \.figure"):
        wire([BadFigure(), model])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="cascade order"):
        wire([_Bare(Stage.GRAPH), _Bare(Stage.KV), model])
    with pytest.raises(ConfigError, match="last stage must be neural"):
        wire([model, _Bare(Stage.GRAPH)])


def test_closing_the_cascade_closes_each_stage_that_holds_something_open() -> None:
    closed: list[str] = []

    class Held(_Bare):
        def close(self) -> None:
            closed.append(self.stage.value)

    class HeldModel(_BareModel):
        def close(self) -> None:
            closed.append(self.stage.value)

    with Cascade([Held(Stage.KV), Held(Stage.GRAPH), HeldModel(Stage.NEURAL)], meter=StubCounter()):
        pass
    assert closed == ["kv", "graph", "neural"]


def test_the_cascade_reads_stages_only_through_the_wiring() -> None:
    """cascade.py has no reflection: no getattr, hasattr or inspect (the contract module reads
    a stage once; a meter and a signer are checked where they are defined)."""
    tree = ast.parse(Path(pyinspect.getfile(eoc.cascade)).read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not names & {"getattr", "hasattr", "setattr", "inspect"}
    assert "inspect" not in imported
