from __future__ import annotations

import sys

import pytest

from eoc import Cascade
from eoc.knowledge import default_stages
from eoc.stages import CacheStage, GraphStage, KVStage, NeuralStage, TripleStore
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend

IN_BROWSER = sys.platform == "emscripten"
native_only = pytest.mark.skipif(
    IN_BROWSER,
    reason="needs a live (fake) meter or a MEASURED cost, which the browser build refuses by "
    "design (DESIGN.md §3.1); tests/test_browser_honesty.py checks that refusal there",
)


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
    """Each call advances 5 ms, so a hit calibration ends on its 40 ms budget after 8 rounds."""
    return FakeClock(step_ns=5_000_000)


@pytest.fixture
def live_counter() -> FakeCounter:
    """A live counter that advances 10 µJ per read."""
    return FakeCounter(step_uj=10, name="fake-rapl")


__all__ = [
    "IN_BROWSER",
    "FakeClock",
    "FakeCounter",
    "ScriptedBackend",
    "native_only",
    "small_stages",
]
