from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.knowledge import default_stages
from eoc.stages import CacheStage, GraphStage, KVStage, NeuralStage, TripleStore
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend


def small_stages(backend: object | None = None) -> list:
    kv = KVStage()
    kv.put("what is 2+2", "4")
    kv.put("what is the default port for ssh", "22")
    graph = GraphStage(TripleStore([("France", "capital", "Paris"), ("Japan", "capital", "Tokyo")]))
    return [CacheStage(), kv, graph, NeuralStage(backend)]  # type: ignore[arg-type]


@pytest.fixture
def stages() -> list:
    return small_stages()


@pytest.fixture
def plain(stages: list) -> Cascade:
    """A cascade on a host with no live counter."""
    return Cascade(stages)


@pytest.fixture(scope="session")
def seeded_stages_factory():
    return default_stages


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(step_ns=1_000)


@pytest.fixture
def live_counter(clock: FakeClock) -> FakeCounter:
    """A live counter drawing 10 W on the fake clock (each clock call advances 1 µs)."""
    return FakeCounter(watts=10.0, clock=clock, name="fake-rapl")


__all__ = ["FakeClock", "FakeCounter", "ScriptedBackend", "small_stages"]
