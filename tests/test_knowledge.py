"""The seeded knowledge pack: size, truth of a sample, and that each fact is reachable."""

from __future__ import annotations

import pytest

from eoc import Cascade, Stage
from eoc.knowledge import kv_pairs, pack_counts, seeded_graph, seeded_kv, triples
from eoc.query import Query
from eoc.text.forms import normalize


def test_pack_holds_at_least_5000_triples() -> None:
    counts = pack_counts()
    assert counts["kv"] >= 30 and counts["graph"] >= 5000


def test_pack_has_no_contradictory_duplicates() -> None:
    seen: dict[str, str] = {}
    for prompt, answer in kv_pairs():
        key = normalize(prompt)
        assert seen.setdefault(key, answer) == answer, prompt


@pytest.fixture(scope="module")
def cascade() -> Cascade:
    return Cascade()


@pytest.mark.parametrize(
    "prompt,stage,answer",
    [
        ("what is 2+2", Stage.KV, "4"),
        ("what is the capital of Japan", Stage.GRAPH, "Tokyo"),
        ("what is the capital of Kazakhstan", Stage.GRAPH, "Astana"),
        ("Canberra is the capital of which country?", Stage.GRAPH, "Australia"),
        ("what is the atomic number of gold", Stage.GRAPH, "79"),
        ("what is the symbol of tungsten", Stage.GRAPH, "W"),
        ("what is the position from the sun of Saturn", Stage.GRAPH, "6"),
        ("what is the default port for postgresql", Stage.GRAPH, "5432"),
        ("default port for ssh?", Stage.GRAPH, "22"),
        ("what is the iso 3166 code of Germany", Stage.GRAPH, "DE"),
        ("what does the si prefix mega mean", Stage.GRAPH, "10^6"),
    ],
)
def test_known_answers(cascade: Cascade, prompt: str, stage: Stage, answer: str) -> None:
    r = cascade.resolve(prompt)
    assert (r.stage, r.payload) == (stage, answer) or (
        r.stage is Stage.CACHE and r.payload == answer
    )


def test_every_kv_fact_is_answered_for_its_own_prompt() -> None:
    kv = seeded_kv()
    for prompt, answer in kv_pairs():
        hit = kv.lookup(Query(prompt))
        assert hit is not None and hit.payload == answer, prompt


def test_every_triple_is_reachable_by_a_question() -> None:
    graph = seeded_graph()
    for s, p, o in triples():
        if p in ("is a", "also called"):
            continue  # what a thing is and its other names shape questions; they are not asked
        hit = graph.lookup(Query(f"what is the {p} of {s}"))
        assert hit is not None and o in hit.payload, (s, p, o)


def test_the_pack_graph_is_read_when_a_question_first_reaches_it() -> None:
    from eoc.knowledge import PackStore, vocabulary
    from eoc.stages import GraphStage

    store = PackStore()
    assert not store._loaded  # building the stage reads no triple
    graph = GraphStage(store, vocabulary=vocabulary())
    hit = graph.lookup(Query("what is 17*23"))  # computed: no triple needed
    assert hit is not None and hit.payload == "391" and not store._loaded
    hit = graph.lookup(Query("what is the capital of France"))
    assert hit is not None and hit.payload == "Paris"
    assert store._loaded and len(store) > 5000


def test_a_question_no_pattern_reads_passes_the_pack_graph_without_reading_it() -> None:
    """A question that names no relation of the pack ("write one short sentence about the
    sea", most of what reaches a model) is passed on before the pack's triples are indexed and
    before the question patterns are compiled (about 0.1 s of such a question's process); the
    pack's predicates, read without indexing, are the ones the loaded store lists."""
    from eoc.knowledge import PackStore, vocabulary
    from eoc.stages import GraphStage, TripleStore

    store = PackStore()
    graph = GraphStage(store, vocabulary=vocabulary())
    assert graph.lookup(Query("Write one short sentence about the sea.")) is None
    assert not store._loaded and not graph._get_matcher()._built
    unloaded = store.predicates()
    assert graph.lookup(Query("ssh default port")) is not None  # then a question that needs it
    assert store._loaded and graph._get_matcher()._built
    assert unloaded == store.predicates() == TripleStore(triples()).predicates()
