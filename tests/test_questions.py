"""The graph stage reads questions in their usual forms through the pack's vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest

from eoc.assemble import default_stages
from eoc.errors import FactFileError
from eoc.knowledge import seeded_graph, vocabulary
from eoc.query import Query
from eoc.stages.graph import GraphStage, TripleStore
from eoc.stages.questions import MAX_VOCABULARY_LINES, Ask, QuestionMatcher, Vocabulary, ordinal
from tests.graph_questions import ANSWERED, PASSED
from tests.helpers import IN_BROWSER

GRAPH = seeded_graph(figure_uj=500)


@pytest.mark.parametrize(("question", "answer"), ANSWERED)
def test_the_pack_answers_each_usual_form(question: str, answer: str) -> None:
    hit = GRAPH.lookup(Query(question))
    assert hit is not None, question
    assert hit.payload == answer


@pytest.mark.parametrize("question", PASSED)
def test_a_near_miss_passes_on(question: str) -> None:
    assert GRAPH.lookup(Query(question)) is None


@pytest.mark.skipif(IN_BROWSER, reason="the browser build keeps no SQLite store file")
def test_the_sqlite_store_answers_the_same_table(tmp_path: Path) -> None:
    graph = default_stages(store=str(tmp_path / "eoc.db"))[2]
    assert isinstance(graph, GraphStage)
    for question, answer in ANSWERED:
        hit = graph.lookup(Query(question))
        assert hit is not None and hit.payload == answer, question
    for question in PASSED:
        assert graph.lookup(Query(question)) is None, question


def test_two_readings_with_two_answers_pass_on() -> None:
    voc = Vocabulary.parse("size\tlabel\tsize\nweight\tlabel\tsize\n")
    store = TripleStore([("Box", "size", "big"), ("Box", "weight", "heavy")])
    assert GraphStage(store, vocabulary=voc).lookup(Query("what is the size of Box")) is None
    store2 = TripleStore([("Box", "size", "big")])
    hit = GraphStage(store2, vocabulary=voc).lookup(Query("what is the size of Box"))
    assert hit is not None and hit.payload == "big"


def test_a_relation_without_vocabulary_is_asked_by_its_name() -> None:
    graph = GraphStage(TripleStore([("Hamlet", "author", "Shakespeare")]))
    for q in ("what is the author of Hamlet", "Hamlet's author", "Hamlet author"):
        hit = graph.lookup(Query(q))
        assert hit is not None and hit.payload == "Shakespeare", q
    hit = graph.lookup(Query("Shakespeare is the author of which thing"))
    assert hit is not None and hit.payload == "Hamlet"
    assert graph.lookup(Query("who wrote Hamlet")) is None  # no vocabulary says "wrote"
    voc = Vocabulary.parse("author\task\twho wrote {s}\nauthor\treverse\twhat did {o} write\n")
    taught = GraphStage(TripleStore([("Hamlet", "author", "Shakespeare")]), vocabulary=voc)
    assert taught.lookup(Query("Who wrote Hamlet?")).payload == "Shakespeare"  # type: ignore[union-attr]
    assert taught.lookup(Query("what did Shakespeare write")).payload == "Hamlet"  # type: ignore[union-attr]


def test_the_kind_asked_for_narrows_a_reverse_question() -> None:
    m = QuestionMatcher(["symbol"], vocabulary())
    assert Ask("subject", "symbol", "n", "element") in m.parse("which element has the symbol n")
    assert m.parse("which planet has the symbol n") == []  # symbol is not asked of planets


def test_an_extreme_needs_a_kind_and_a_numeric_relation() -> None:
    m = QuestionMatcher(["capital", "population"], vocabulary())

    def extremes(text: str) -> list[Ask]:
        return [a for a in m.parse(text) if a.direction == "extreme"]

    assert extremes("which country has the largest population") == [
        Ask("extreme", "population", kind="country", largest=True)
    ]
    assert extremes("which country has the smallest population") == [
        Ask("extreme", "population", kind="country", largest=False)
    ]
    assert extremes("which country has the largest capital") == []  # capital is not a number
    assert extremes("which thing has the largest population") == []


def test_ordinals() -> None:
    assert ordinal("fourth") == "4" and ordinal("4th") == "4" and ordinal("twelfth") == "12"
    assert ordinal("fourteen") is None and ordinal("4") is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("capital\tlabell\tcapital\n", "unknown field"),
        ("capital\tlabel\n", "expected 3 tab-separated fields"),
        ("capital\task\twhat is the capital\n", "must hold {s} once"),
        ("capital\task\t{s} and {s}\n", "must hold {s} once"),
        ("capital\treverse\twhich country\n", "must hold {o once"),
        ("capital\tlabel\t \n", "expected 3 tab-separated fields"),
    ],
)
def test_a_bad_vocabulary_is_refused_with_its_line(text: str, why: str) -> None:
    with pytest.raises(FactFileError) as e:
        Vocabulary.parse("# head\n" + text, source="rel.tsv")
    assert why in str(e.value) and "rel.tsv" in str(e.value) and ":2" in str(e.value)


def test_an_oversized_vocabulary_is_refused() -> None:
    with pytest.raises(FactFileError, match="over 100,000 lines"):
        Vocabulary.parse("\n" * MAX_VOCABULARY_LINES)


def test_the_pack_vocabulary_names_only_relations_the_pack_holds() -> None:
    from eoc.knowledge import triples

    held = {p.casefold() for _, p, _ in triples()}
    assert set(vocabulary().relations) <= held


def test_a_relation_built_in_code_with_a_template_without_slot_is_refused() -> None:
    from eoc.errors import ConfigError
    from eoc.stages.questions import Relation

    with pytest.raises(ConfigError, match="holds no"):
        QuestionMatcher(["x"], Vocabulary([Relation("x", asks=["what is x"])]))
