"""Helpers shared by the core tests (importable as tests.helpers, natively and in Pyodide)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from eoc.stages import (
    CacheStage,
    GraphStage,
    HashedNgramEmbedder,
    KVStage,
    NeuralStage,
    Reply,
    TripleStore,
)
from eoc.stages.kv_words import WordGate


def wait_for(check: Callable[[], object], seconds: float) -> float:
    """Seconds until ``check()`` is true, polled every 2 ms (the test fails after ``seconds``):
    for what another replica or thread makes true a little later."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > seconds:
            pytest.fail(f"not within {seconds} s")
        time.sleep(0.002)
    return time.monotonic() - t0


IN_BROWSER = sys.platform == "emscripten"
native_only = pytest.mark.skipif(
    IN_BROWSER,
    reason="needs a live (fake) meter or a MEASURED cost, which the browser build refuses by "
    "design (docs/design.md §3.1); tests/test_browser_honesty.py checks that refusal there",
)


class CountingEmbedder(HashedNgramEmbedder):
    """The core's embedder, keeping each text it was asked to embed (``calls``)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def embed(self, text: str):  # type: ignore[no-untyped-def]
        self.calls.append(text)
        return super().embed(text)


class ModelStandIn:
    """Answers "echo: <prompt>" like the echo backend, but says it runs a model, so its answers
    are remembered as a real model's are (the echo's never are)."""

    name = "model-stand-in"
    runs_model = True

    def generate(self, prompt: str) -> Reply:
        return Reply(f"echo: {prompt}")


def cli_in_capped_process(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``eoc ARGV`` in a fresh process whose address space is capped at 2 GiB, so a read
    that never ends fails there instead of eating this machine's memory."""
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30));"
        f"from eoc.cli.main import main; sys.exit(main({list(argv)!r}))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def small_stages(backend: object | None = None) -> list:
    """Cache, a kv of two facts, a graph of two capitals, and neural over ``backend``
    (default: :class:`ModelStandIn`)."""
    backend = backend if backend is not None else ModelStandIn()
    kv = KVStage()
    kv.put("what is 2+2", "4")
    kv.put("what is the default port for ssh", "22")
    graph = GraphStage(TripleStore([("France", "capital", "Paris"), ("Japan", "capital", "Tokyo")]))
    return [CacheStage(), kv, graph, NeuralStage(backend)]  # type: ignore[arg-type]


def gate_built(kv: KVStage, timeout: float = 60.0) -> WordGate:
    """``kv``'s word gate once it has keyed what memory held (it is built on a thread where a
    judge may decide)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        gate = kv._words
        if gate is not None and gate.ready:
            return gate
        time.sleep(0.005)
    raise AssertionError(f"no word gate after {timeout} s")


__all__ = [
    "IN_BROWSER",
    "ModelStandIn",
    "cli_in_capped_process",
    "gate_built",
    "native_only",
    "small_stages",
]
