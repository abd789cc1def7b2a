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
from eoc.text.forms import normalize
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


def test_a_count_is_asked_only_of_what_the_store_holds_whole() -> None:
    m = QuestionMatcher(["group", "natural satellite", "is a"], vocabulary())
    counted = [a for a in m.parse("how many elements are in group 18") if a.count]
    assert counted == [Ask("subject", "group", "18", "element", count=True)]
    assert [a for a in m.parse("how many moons does jupiter have") if a.count] == []
    assert Ask("members", "", kind="planet", count=True) in m.parse("how many planets are there")
    for text in ("how many moons are there", "how many planets are there in the galaxy"):
        # moons: the pack lists the major ones; the galaxy: not a place that holds all planets
        assert not [a for a in m.parse(text) if a.direction == "members"], text
        assert GRAPH.lookup(Query(text)) is None, text


def test_a_count_lists_what_it_counted_and_never_says_zero() -> None:
    voc = Vocabulary.parse(
        "group\tcount\tyes\ngroup\treverse\tyes\ngroup\tsubject\telement\n",
        "element\telement|elements\t-\n",
    )
    store = TripleStore(
        [(f"E{i}", "group", "1" if i < 3 else "2") for i in range(25)]
        + [(f"E{i}", "is a", "element") for i in range(25)]
    )
    graph = GraphStage(store, vocabulary=voc)
    assert graph.lookup(Query("how many elements are in group 1")).payload == "3 (E0, E1, E2)"  # type: ignore[union-attr]
    assert graph.lookup(Query("how many elements are in group 2")).payload == "22"  # type: ignore[union-attr]
    assert graph.lookup(Query("how many elements are there")).payload == "25"  # type: ignore[union-attr]
    assert graph.lookup(Query("how many elements are in group 3")) is None
    uncounted = Vocabulary.parse("group\treverse\tyes\n", "element\telement|elements\n")
    plain = GraphStage(store, vocabulary=uncounted)
    assert plain.lookup(Query("how many elements are in group 1")) is None
    assert plain.lookup(Query("how many elements are there")) is None


def test_a_short_name_is_read_only_when_one_value_ends_with_it() -> None:
    voc = Vocabulary.parse(
        "currency\treverse\tyes\ncurrency\tshort\tyes\ncurrency\tsubject\tcountry\n"
        "currency\tverb\tuses|use\n",
        "country\tcountry|countries\n",
    )
    rows = [("Japan", "Japanese Yen"), ("USA", "US Dollar"), ("Canada", "Canadian Dollar")]
    store = TripleStore(
        [(c, "currency", v) for c, v in rows] + [(c, "is a", "country") for c, _ in rows]
    )
    graph = GraphStage(store, vocabulary=voc)
    assert graph.lookup(Query("which country uses the yen")).payload == "Japan"  # type: ignore[union-attr]
    assert graph.lookup(Query("which country uses the dollar")) is None  # two dollars
    assert graph.lookup(Query("which country uses the canadian dollar")).payload == "Canada"  # type: ignore[union-attr]
    long = GraphStage(store, vocabulary=Vocabulary.parse("currency\treverse\tyes\n"))
    assert long.lookup(Query("which country has the currency yen")) is None  # not marked short


def test_the_relation_verb_reads_both_ways() -> None:
    voc = Vocabulary.parse(
        "orbits\tverb\torbits|orbit\norbits\tobject\tplanet\norbits\tsubject\tmoon\n",
        "moon\tmoon|moons\nplanet\tplanet|planets\n",
    )
    store = TripleStore([("Titan", "orbits", "Saturn"), ("Titan", "is a", "moon")])
    graph = GraphStage(store, vocabulary=voc)
    for q in (
        "Titan orbits which planet",
        "the planet that Titan orbits",
        "which planet does Titan orbit",
    ):
        assert graph.lookup(Query(q)).payload == "Saturn", q  # type: ignore[union-attr]
    assert graph.lookup(Query("which moon orbits Saturn")) is None  # not marked reverse
    both = Vocabulary.parse(
        "orbits\tverb\torbits|orbit\norbits\treverse\tyes\norbits\tsubject\tmoon\n",
        "moon\tmoon|moons\nplanet\tplanet|planets\n",
    )
    graph = GraphStage(store, vocabulary=both)
    assert graph.lookup(Query("which moon orbits Saturn")).payload == "Titan"  # type: ignore[union-attr]
    assert graph.lookup(Query("which planet orbits Saturn")) is None  # orbits is asked of moons


def test_reverse_forms_without_a_kind_keep_to_one_kind() -> None:
    hit = GRAPH.lookup(Query("what has the symbol Hz"))
    assert hit is not None and hit.payload == "hertz"
    assert GRAPH.lookup(Query("what has the symbol N")) is None  # nitrogen, newton: two kinds


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("orbits\tverb\torbits\n", "a verb is two forms"),
        ("orbits\tverb\torbits|orbit|orbited\n", "a verb is two forms"),
    ],
)
def test_a_bad_verb_is_refused_with_its_line(text: str, why: str) -> None:
    with pytest.raises(FactFileError) as e:
        Vocabulary.parse("# head\n" + text, source="rel.tsv")
    assert why in str(e.value) and ":2" in str(e.value)


def test_a_kind_line_may_say_it_is_held_whole() -> None:
    voc = Vocabulary.parse("", "planet\tplanet|planets\tin the solar system|in our solar system\n")
    assert voc.countable == {"planet": ["in the solar system", "in our solar system"]}
    assert Vocabulary.parse("", "prefix\tprefix|prefixes\t-\n").countable == {"prefix": []}
    with pytest.raises(FactFileError, match="expected 2 tab-separated fields"):
        Vocabulary.parse("", "planet\tplanet\tx\ty\n")


def test_the_matcher_passes_over_only_what_no_pattern_reads() -> None:
    """:meth:`QuestionMatcher.could_ask` skips compiling the patterns for a question that holds
    no label, adjective, verb, count word or template's words; it must never skip one a pattern
    reads: every question of the graph table, the assembled suite and the kv pack's questions,
    read with the patterns compiled, gives no lookup where the gate says no."""
    from eoc.knowledge import kv_pairs, seeded_graph
    from tests.assembly_questions import QUESTIONS
    from tests.graph_questions import ANSWERED, PASSED

    m = seeded_graph()._get_matcher()
    asked = [q for q, _ in ANSWERED] + PASSED + QUESTIONS
    asked += [p for p, _ in kv_pairs()]
    asked += ["write one short sentence about the sea", "how many moons does mars have"]
    asked += ["which nations use the yen"]  # read by the relation's verb alone
    m._build()
    gated = 0
    for q in asked:
        text = normalize(q)
        found = [*m._parse(text), *m._counts(text)]
        if not m.could_ask(text):
            gated += 1
            assert found == [], q
        else:
            assert m.parse(text) == list(dict.fromkeys(found)), q
    assert gated >= 10  # the gate does pass questions over
    assert not m.could_ask("write one short sentence about the sea")
    assert m.could_ask("how many moons does mars have")
    assert m.parse("which nations use the yen")


def _asked_widely() -> list[str]:
    """The graph table's questions, the assembled suite's, the kv pack's and the everyday
    suite's tune part (over a thousand, most of them not the graph's)."""
    import json

    from eoc.knowledge import kv_pairs
    from tests.assembly_questions import QUESTIONS

    everyday = Path(__file__).resolve().parents[1] / "bench" / "suites" / "everyday"
    asked = [q for q, _ in ANSWERED] + PASSED + QUESTIONS + [p for p, _ in kv_pairs()]
    for path in sorted(everyday.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)  # (the tune part only: the others are kept unread)
            if row.get("part") == "tune":
                asked += [v for v in row.values() if isinstance(v, str)]
    assert len(asked) > 1000
    return asked


def test_the_gate_says_what_its_plain_definition_says() -> None:
    """:meth:`QuestionMatcher.could_ask` finds the words a text holds from its own words and
    groups the templates by ending; it answers as the plain definition does (a padded label,
    adjective, verb or count word inside the text, or a template's opening and ending around
    it) for every question of the graph table, the assembled suite, the kv pack and the
    everyday suite's tune part."""
    from eoc.stages.questions import _COUNT_WORDS

    m = seeded_graph()._get_matcher()
    verbs = [w for rel in m._rels for w in (rel.verbs or ())]
    words = [f" {w} " for w in (*m._by_label, *m._by_adjective, *verbs, *_COUNT_WORDS) if w]

    def plain(text: str) -> bool:
        padded = f" {text} "
        return any(w in padded for w in words) or any(
            text.startswith(h) and text.endswith(t) for h, t, *_ in m._templates
        )

    said = {True: 0, False: 0}
    for q in _asked_widely():
        text = normalize(q)
        said[m.could_ask(text)] += 1
        assert m.could_ask(text) == plain(text), q
    assert min(said.values()) >= 50  # both answers are exercised


def test_each_pattern_is_tried_only_where_the_text_holds_what_it_reads_and_nothing_is_lost() -> (
    None
):
    """:meth:`QuestionMatcher._parse` tries a template only on a text that opens with its first
    word, and a form only where the text holds a label, adjective or verb it reads: the asks
    are those of trying every pattern on every text, for the wide question set and for each
    question reworded as a count, a superlative and a "what is the" question."""
    m = seeded_graph()._get_matcher()
    m._build()
    every = {p for phrases in m._by_first.values() for p in phrases}
    texts = [
        t
        for q in _asked_widely()
        for text in (normalize(q),)
        for t in (
            text,
            f"how many {text}",
            f"which country has the largest {text}",
            f"what is the {text}",
        )
    ]
    saved = m._asks_by_word, m._asks_any
    m._asks_by_word, m._asks_any = {}, tuple(range(len(m._templates)))  # every template
    try:
        tried_all = [m._parse(t, every) for t in texts]  # every form: each word said
    finally:
        m._asks_by_word, m._asks_any = saved
    found = 0
    for t, expected in zip(texts, tried_all, strict=True):
        gated = m._parse(t)
        assert gated == expected, t
        found += bool(gated)
    assert found >= 300  # the patterns do read many of them
