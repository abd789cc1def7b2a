"""Helpers shared by the core tests (importable as tests.helpers, natively and in Pyodide)."""

from __future__ import annotations

import sys

import pytest

from eoc.stages import CacheStage, GraphStage, KVStage, NeuralStage, TripleStore

IN_BROWSER = sys.platform == "emscripten"
native_only = pytest.mark.skipif(
    IN_BROWSER,
    reason="needs a live (fake) meter or a MEASURED cost, which the browser build refuses by "
    "design (docs/design.md §3.1); tests/test_browser_honesty.py checks that refusal there",
)


def small_stages(backend: object | None = None) -> list:
    kv = KVStage()
    kv.put("what is 2+2", "4")
    kv.put("what is the default port for ssh", "22")
    graph = GraphStage(TripleStore([("France", "capital", "Paris"), ("Japan", "capital", "Tokyo")]))
    return [CacheStage(), kv, graph, NeuralStage(backend)]  # type: ignore[arg-type]


__all__ = ["IN_BROWSER", "native_only", "small_stages"]
