"""The look-alike precision suite (``bench/suites/lookalikes.jsonl``): 199 pairs written by hand,
before the guard was changed for them, of questions that read like a stored one but ask
something else, the 133 of ``lookalikes-sealed.jsonl`` written apart from them, and issue 34's
``nearmiss.jsonl`` (and its sealed part). None may be served the stored answer. Here with the core's embedder (natively
and in Pyodide); ``tests/native/test_semantic.py`` runs it with MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eoc import Cascade, Query
from eoc.knowledge import PackStore, kv_pairs, vocabulary
from eoc.stages import KVStage
from eoc.stages.cache import CacheStage
from eoc.stages.graph import GraphStage
from eoc.stages.neural import NeuralStage, NoModelBackend
from eoc.text.forms import fold

SUITES = Path(__file__).resolve().parents[1] / "bench" / "suites"


def load(name: str = "lookalikes.jsonl") -> list[dict[str, str]]:
    lines = (SUITES / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def served_wrongly(kv: KVStage, pairs: list[dict[str, str]], embed=None) -> list[str]:  # type: ignore[no-untyped-def]
    """The ids of the pairs whose look-alike ``kv`` answers with a stored answer (its own right
    answer is in no stored pair, unless it is itself a stored question)."""
    stored: dict[str, str] = {}
    for p in pairs:
        stored.setdefault(p["stored"], p["answer"])
    kv.load_pairs(stored.items())
    exact = {fold(q): a for q, a in stored.items()}
    wrong = []
    for p in pairs:
        q = p["query"]
        hit = kv.lookup(Query(q, embedding=None if embed is None else embed(q)))
        if hit is not None and exact.get(fold(q)) != hit.payload:
            wrong.append(p["id"])
    return wrong


def test_the_suite_holds_at_least_150_pairs_of_each_class_asked_for() -> None:
    pairs = load()
    classes = {p["class"] for p in pairs}
    assert len(pairs) >= 150 and len({p["id"] for p in pairs}) == len(pairs)
    assert {"roles", "comparison", "unit-direction", "percent", "operator", "tense"} <= classes
    assert all(p["query"] != p["stored"] for p in pairs)


SUITE_FILES = [
    "lookalikes.jsonl",
    "lookalikes-sealed.jsonl",
    "nearmiss.jsonl",
    "nearmiss-sealed.jsonl",
]
"""The suite, the 133 pairs written apart from it (run once, unseen, after issue 22's rules;
kept at 0 since, so a later rule cannot quietly lose one), and issue 34's 120 pairs of its
classes (a name that prefixes another, comparisons, times of day, swapped nouns, one-letter
spelling neighbours, decisive symbols) with their 90 sealed pairs (3 served wrongly on their one
run; 0 since the rules their misses showed)."""


@pytest.mark.parametrize("suite", SUITE_FILES)
def test_no_look_alike_is_served_the_stored_answer(suite: str) -> None:
    assert served_wrongly(KVStage(), load(suite)) == []


def test_the_seeded_kv_answers_no_computation_with_another_operator() -> None:
    """The pack held "what is 7*8"; "what is 7+8" was served 56, "9/9" 81, "2-2" 4."""
    kv = KVStage()
    kv.load_pairs(kv_pairs())
    own = {fold(q): a for q, a in kv_pairs()}
    served = []
    for prompt, _ in kv_pairs():
        for a, b in (("+", "*"), ("*", "+"), ("/", "*"), ("+", "-"), ("-", "+"), ("^", "*")):
            if a in prompt:
                q = prompt.replace(a, b, 1)
                hit = kv.lookup(Query(q))
                if hit is not None and hit.payload != own.get(fold(q)):
                    served.append((q, hit.payload))
    assert served == []


@pytest.mark.parametrize(
    ("question", "answer"), [("what is 7+8", "15"), ("what is 2-2", "0"), ("what is 9/9", "1")]
)
def test_the_cascade_computes_what_the_pack_holds_with_another_operator(
    question: str, answer: str
) -> None:
    kv = KVStage()
    kv.load_pairs(kv_pairs())
    graph = GraphStage(PackStore(), vocabulary=vocabulary())
    cascade = Cascade([CacheStage(), kv, graph, NeuralStage(NoModelBackend())])
    done = cascade.resolve(question)
    assert (done.stage, done.payload) == ("graph", answer)
