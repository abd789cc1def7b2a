"""The cache, kv, graph and neural stages on their own."""

from __future__ import annotations

import random
from typing import Any

import pytest

from eoc import Query
from eoc.errors import BackendError, ConfigError, FactFileError, InputError
from eoc.query import Stage
from eoc.stages import (
    CacheStage,
    EchoBackend,
    GraphStage,
    HashedNgramEmbedder,
    KVStage,
    NeuralStage,
    SparseIndex,
    TripleStore,
    read_ntriples,
    read_pairs,
    read_tsv_triples,
)
from eoc.stages.embed import cosine
from eoc.testing import ScriptedBackend
from eoc.text.forms import normalize, signature
from tests.helpers import IN_BROWSER

# -- cache --------------------------------------------------------------------------


def test_cache_evicts_least_recently_used_past_max_entries() -> None:
    cache = CacheStage(max_entries=2)
    a, b, c = Query("a?"), Query("b?"), Query("c?")
    cache.remember(a, "A")
    cache.remember(b, "B")
    assert cache.lookup(a) is not None  # a is now the most recent
    cache.remember(c, "C")
    assert cache.lookup(b) is None and cache.lookup(a) is not None and cache.lookup(c) is not None


def test_cache_is_bounded_by_bytes() -> None:
    cache = CacheStage(max_bytes=1_000)
    for i in range(20):
        cache.remember(Query(f"q{i}"), "x" * 200)
    assert cache.bytes_used <= 1_000 and 0 < len(cache) < 20
    assert cache.lookup(Query("q19")) is not None and cache.lookup(Query("q0")) is None


def test_a_payload_larger_than_the_cache_is_not_cached_and_evicts_nothing() -> None:
    cache = CacheStage(max_bytes=1_000)
    cache.remember(Query("small"), "s")
    cache.remember(Query("huge"), "x" * 5_000)
    assert cache.lookup(Query("huge")) is None and cache.lookup(Query("small")) is not None


def test_cache_replaces_and_forgets() -> None:
    cache = CacheStage()
    q = Query("a")
    cache.remember(q, "one")
    cache.remember(q, "two")
    hit = cache.lookup(q)
    assert hit is not None and hit.payload == "two" and len(cache) == 1
    assert cache.forget(q) and not cache.forget(q) and cache.bytes_used == 0


@pytest.mark.parametrize("kwargs", [{"max_entries": 0}, {"max_bytes": -1}, {"max_entries": 1.5}])
def test_cache_bounds_must_be_positive_ints(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        CacheStage(**kwargs)


# -- kv ------------------------------------------------------------------------------


@pytest.fixture
def kv() -> KVStage:
    kv = KVStage()
    kv.put("what is 2+2", "4")
    kv.put("what is the speed of light", "299792458 m/s")
    kv.put("convert 10 km to miles", "6.21 miles")
    kv.put("what is the capital of France", "Paris")
    kv.put("what is the default port for postgresql", "5432")
    return kv


def test_kv_exact_key_ignores_case_punctuation_and_spacing(kv: KVStage) -> None:
    hit = kv.lookup(Query("  What is 2+2?  "))
    assert hit is not None and hit.payload == "4"


@pytest.mark.parametrize(
    "prompt,answer",
    [
        ("speed of light", "299792458 m/s"),
        ("tell me the speed of light please", "299792458 m/s"),
        ("whats 2+2", "4"),
        ("default port for postgresql?", "5432"),
    ],
)
def test_kv_similarity_serves_paraphrases(kv: KVStage, prompt: str, answer: str) -> None:
    hit = kv.lookup(Query(prompt))
    assert hit is not None and hit.payload == answer


@pytest.mark.parametrize(
    "prompt",
    ["convert 10 miles to km", "what is the capital of Germany", "what is 2+3", "what is 22+2"],
)
def test_kv_guard_refuses_near_misses(kv: KVStage, prompt: str) -> None:
    assert kv.lookup(Query(prompt)) is None


def test_the_hashed_embedder_reads_a_text_as_the_guard_does() -> None:
    e = HashedNgramEmbedder()
    # an opposite's phrases and a synonym read as one word; framing words drop out
    same = cosine(e.embed("I need to wipe my photos"), e.embed("How do I delete my photos?"))
    assert same == pytest.approx(1.0)
    near = cosine(e.embed("Chad's international dialing code?"), e.embed("Calling code of Chad?"))
    other = cosine(
        e.embed("What is the capital of Chad?"), e.embed("What is the currency of Chad?")
    )
    assert near > 0.6 > other


def test_kv_threshold_higher_is_stricter() -> None:
    loose, strict = KVStage(threshold=0.5), KVStage(threshold=1.0)
    for kv in (loose, strict):
        kv.put("the default port for PostgreSQL", "5432")
    q = Query("PostgreSQL: which port does it use by default?")  # the same question, reworded
    e = loose.embedder
    score = cosine(e.embed(q.prompt), e.embed("the default port for PostgreSQL"))
    assert 0.5 < score < 1.0
    assert loose.lookup(q) is not None and strict.lookup(q) is None
    q2 = Query("default port for PostgreSQL, please")  # embeds identically: both serve it
    assert loose.lookup(q2) is not None and strict.lookup(q2) is not None


@pytest.mark.parametrize("threshold", [0, -0.1, 1.01, "0.8", True])
def test_kv_threshold_must_be_a_cosine(threshold: object) -> None:
    with pytest.raises(ConfigError):
        KVStage(threshold=threshold)  # type: ignore[arg-type]


def test_kv_uses_a_query_embedding_of_the_embedder_dimension() -> None:
    kv = KVStage(embedder=HashedNgramEmbedder(dim=8))
    kv.remember(Query("alpha", embedding=[1.0, 0, 0, 0, 0, 0, 0, 0]), "A")
    hit = kv.lookup(Query("alpha!", embedding=[2.0, 0, 0, 0, 0, 0, 0, 0]))
    assert hit is not None and hit.payload == "A"
    from eoc.errors import BadEmbedding

    with pytest.raises(BadEmbedding):
        kv.lookup(Query("alpha", embedding=[1.0, 2.0]))


@pytest.mark.parametrize("payload", ["", "   ", None, 5])
def test_kv_refuses_empty_or_non_text_answers(kv: KVStage, payload: object) -> None:
    before = len(kv)
    with pytest.raises(InputError):
        kv.put("some question", payload)  # type: ignore[arg-type]
    assert len(kv) == before


def test_kv_load_tsv_rejects_a_bad_file_whole(tmp_path, kv: KVStage) -> None:
    f = tmp_path / "facts.tsv"
    f.write_text("what is 1+1\t2\nbroken line without tab\n", encoding="utf-8")
    before = len(kv)
    with pytest.raises(FactFileError) as info:
        kv.load_tsv(f)
    assert ":2:" in str(info.value) and len(kv) == before
    f.write_text("# comment\nwhat is 1+1\t2\n\nwhat is 3+3\t6\n", encoding="utf-8")
    assert kv.load_tsv(f) == 2 and kv.lookup(Query("what is 3+3")) is not None


def test_kv_load_tsv_reports_a_bad_prompt_by_line(tmp_path) -> None:
    f = tmp_path / "facts.tsv"
    f.write_text("ok\tyes\nbad \x1b prompt\tno\n", encoding="utf-8")
    with pytest.raises(FactFileError, match=":2:"):
        KVStage().load_tsv(f)


def test_kv_load_tsv_missing_file_is_a_fact_file_error(tmp_path) -> None:
    with pytest.raises(FactFileError):
        KVStage().load_tsv(tmp_path / "absent.tsv")


def test_embedding_is_unit_length_and_stable() -> None:
    e = HashedNgramEmbedder()
    v = e.embed("What is the capital of France?")
    assert abs(sum(w * w for w in v.values()) - 1.0) < 1e-9
    assert v == HashedNgramEmbedder().embed("What is the capital of France?")


def test_signature_keeps_numbers_and_their_order() -> None:
    assert signature(normalize("convert 10 miles to km")) != signature(
        normalize("convert 10 km to miles")
    )
    assert signature(normalize("What's the speed of light?")) == signature(
        normalize("speed of light")
    )


# -- the index -------------------------------------------------------------------------


def test_index_threshold_search_is_exact_against_brute_force() -> None:
    """The pruned search returns exactly what a scan of every vector returns."""
    rng = random.Random(7)
    e = HashedNgramEmbedder()
    vocab = (
        "alpha beta gamma delta port light speed capital france japan code iso unit meter".split()
    )
    texts = {" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))) for _ in range(400)}
    index = SparseIndex()
    vecs = {t: e.embed(t) for t in texts}
    for t, v in vecs.items():
        index.add(t, v)
    for probe in [*sorted(texts)[:60], "speed of light japan", "iso code france"]:
        q = e.embed(probe)
        for threshold in (0.3, 0.6, 0.9):
            got = {k for _, k in index.search(q, threshold, limit=10_000)}
            want = {t for t, v in vecs.items() if cosine(q, v) >= threshold - 1e-12}
            assert got == want


def test_index_remove_and_replace() -> None:
    index = SparseIndex()
    e = HashedNgramEmbedder()
    index.add("k", e.embed("alpha beta"))
    index.add("k", e.embed("gamma delta"))
    assert len(index) == 1 and not index.search(e.embed("alpha beta"), 0.9)
    assert index.remove("k") and not index.remove("k") and len(index) == 0


# -- graph ------------------------------------------------------------------------------


@pytest.fixture
def graph() -> GraphStage:
    store = TripleStore(
        [
            ("France", "capital", "Paris"),
            ("Japan", "capital", "Tokyo"),
            ("Gold", "atomic number", "79"),
            ("United Kingdom", "capital", "London"),
        ]
    )
    return GraphStage(store)


@pytest.mark.parametrize(
    "prompt,answer",
    [
        ("what is the capital of France", "Paris"),
        ("What's the capital of Japan?", "Tokyo"),
        ("capital of France?", "Paris"),
        ("Paris is the capital of which country?", "France"),
        ("which country has Tokyo as its capital", "Japan"),
        ("Japan's capital", "Tokyo"),
        ("what is the atomic number of gold", "79"),
        ("What is the capital of the United Kingdom?", "London"),
        ("London is the capital of what country", "United Kingdom"),
    ],
)
def test_graph_answers_the_usual_question_forms(
    graph: GraphStage, prompt: str, answer: str
) -> None:
    hit = graph.lookup(Query(prompt))
    assert hit is not None and hit.payload == answer


@pytest.mark.parametrize(
    "prompt", ["what is the capital of Atlantis", "why is the sky blue", "capital"]
)
def test_graph_passes_on_what_it_does_not_know(graph: GraphStage, prompt: str) -> None:
    assert graph.lookup(Query(prompt)) is None


def test_graph_learns_new_predicates() -> None:
    store = TripleStore()
    stage = GraphStage(store)
    assert stage.lookup(Query("what is the currency of Japan")) is None
    store.add("Japan", "currency", "yen")
    hit = stage.lookup(Query("what is the currency of Japan"))
    assert hit is not None and hit.payload == "yen"


def test_triple_store_rejects_empty_terms_and_dedupes() -> None:
    store = TripleStore()
    assert store.add("a", "b", "c") and not store.add("A", "B", "C")
    with pytest.raises(InputError):
        store.add("", "b", "c")
    assert len(store) == 1


def test_ntriples_reader_reads_iris_literals_and_escapes() -> None:
    text = (
        '<http://x/kb/United_Kingdom> <http://x/kb/capital> "London" .\n'
        "# a comment\n"
        '<http://x/kb/S%C3%A3o_Tom%C3%A9> <http://x/kb#name> "S\\u00e3o Tom\\u00e9"@pt .\n'
        "_:b1 <http://x/kb/p> <http://x/kb/Obj> .\n"
        '<http://x/a> <http://x/b> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    )
    triples = read_ntriples(text)
    assert triples[0] == ("United Kingdom", "capital", "London")
    assert triples[1] == ("São Tomé", "name", "São Tomé")
    assert triples[2] == ("b1", "p", "Obj")
    assert triples[3].object == "5"


@pytest.mark.parametrize(
    "text,line",
    [
        ('<a> <b> "c" .\n<a> <b> "c"\n', 2),  # missing the final dot
        ('<a> <b> "c" .\n\n<a> b "c" .\n', 3),  # bare predicate
        ('<a> <b> "unterminated .\n', 1),
        ('<a> <b> "bad \\q escape" .\n', 1),
        ('<a> <b> "" .\n', 1),
    ],
)
def test_ntriples_reader_names_the_bad_line(text: str, line: int) -> None:
    with pytest.raises(FactFileError) as info:
        read_ntriples(text, "facts.nt")
    assert info.value.line == line and f"facts.nt:{line}:" in str(info.value)


def test_tsv_readers_name_the_bad_line() -> None:
    with pytest.raises(FactFileError, match=":3:"):
        read_tsv_triples("a\tb\tc\nd\te\tf\ng\th\n", "t.tsv")
    with pytest.raises(FactFileError, match=":1:"):
        read_pairs("q\t\n", "p.tsv")
    with pytest.raises(FactFileError, match="NUL"):
        read_pairs("q\x00\ta\n", "p.tsv")


def test_store_load_rejects_a_bad_file_whole(tmp_path) -> None:
    store = TripleStore([("a", "b", "c")])
    f = tmp_path / "x.nt"
    f.write_text('<x> <p> "1" .\nnot a triple\n', encoding="utf-8")
    with pytest.raises(FactFileError, match=":2:"):
        store.load(f)
    assert len(store) == 1
    g = tmp_path / "x.json"
    g.write_text("{}", encoding="utf-8")
    with pytest.raises(FactFileError):
        store.load(g)


# -- neural ------------------------------------------------------------------------------


def test_echo_backend_always_answers_and_reports_no_cost() -> None:
    answer = NeuralStage().lookup(Query("anything at all"))
    assert answer.payload == "echo: anything at all" and answer.cost is None
    assert isinstance(NeuralStage().backend, EchoBackend)


def test_a_failing_backend_becomes_a_backend_error() -> None:
    def boom(prompt: str) -> None:
        raise RuntimeError("server down")

    with pytest.raises(BackendError, match="server down"):
        NeuralStage(ScriptedBackend(on_generate=boom)).lookup(Query("x"))


def test_a_backend_returning_garbage_is_a_backend_error() -> None:
    class Bad:
        name = "bad"

        def generate(self, prompt: str) -> str:
            return "not a Reply"

    with pytest.raises(BackendError):
        NeuralStage(Bad()).lookup(Query("x"))  # type: ignore[arg-type]


@pytest.mark.parametrize("figure", [0, -5, 1.5, True])
def test_stage_figures_must_be_positive_whole_microjoules(figure: object) -> None:
    with pytest.raises(ConfigError):
        CacheStage(figure_uj=figure)  # type: ignore[arg-type]


@pytest.mark.parametrize("dim", [0, 3, 1000, -8, 2.0])
def test_embedder_dimension_must_be_a_power_of_two(dim: object) -> None:
    with pytest.raises(ConfigError):
        HashedNgramEmbedder(dim=dim)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs", [{"threshold": 0.0}, {"threshold": 1.5}, {"threshold": 0.5, "limit": 0}]
)
def test_index_search_arguments_are_checked(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        SparseIndex().search({1: 1.0}, **kwargs)


def test_index_accept_filters_and_limit_counts_only_accepted() -> None:
    e = HashedNgramEmbedder()
    index = SparseIndex()
    for t in ["speed of light", "the speed of light", "speed of light!!"]:
        index.add(t, e.embed(t))
    q = e.embed("speed of light")
    everything = index.search(q, 0.9, limit=10)
    assert len(everything) == 3
    only = index.search(q, 0.9, limit=1, accept=lambda k: k == "speed of light!!")
    assert [k for _, k in only] == ["speed of light!!"]


def test_the_two_tier_search_returns_the_same_best_hit_as_brute_force() -> None:
    rng = random.Random(11)
    e = HashedNgramEmbedder()
    vocab = "alpha beta gamma delta port light speed capital france japan code iso unit".split()
    texts = sorted(
        {" ".join(rng.choice(vocab) for _ in range(rng.randint(2, 6))) for _ in range(300)}
    )
    index = SparseIndex()
    vecs = {t: e.embed(t) for t in texts}
    for t, v in vecs.items():
        index.add(t, v)
    for probe in texts[:80]:
        q = e.embed(probe + " extra words here")
        for threshold in (0.3, 0.6):
            best = max(((cosine(q, v), t) for t, v in vecs.items()), default=(0.0, None))
            got = index.search(q, threshold, 1)
            if best[0] >= threshold:
                assert got and got[0][0] == pytest.approx(best[0])
            else:
                assert got == []


# -- the neural stage's replies: no model, token counts ------------------------------------------


def test_no_model_says_so_charges_the_floor_and_is_never_remembered() -> None:
    from eoc import Cascade
    from eoc.stages.neural import NO_MODEL_NOTICE, NeuralStage, NoModelBackend
    from tests.helpers import small_stages

    with Cascade([*small_stages()[:-1], NeuralStage(NoModelBackend("connect one"))]) as c:
        first = c.resolve("what is the airspeed of an unladen swallow")
        again = c.resolve("what is the airspeed of an unladen swallow")
    assert first.payload.startswith(NO_MODEL_NOTICE) and "connect one" in first.payload
    assert first.cost.uj == 1 and "no language model ran" in first.cost.basis
    assert again.stage is Stage.NEURAL and first.tokens is None


@pytest.mark.parametrize(
    ("tokens_in", "tokens_out"), [(-1, 3), (3, None), (2.5, 1), (True, 1), (1, 1 << 30)]
)
def test_a_backends_token_counts_are_checked(tokens_in: object, tokens_out: object) -> None:
    from eoc.errors import BackendError
    from eoc.stages.neural import NeuralStage, Reply

    class Counts:
        name = "counts"

        def generate(self, prompt: str) -> Reply:
            return Reply("an answer", tokens_in=tokens_in, tokens_out=tokens_out)  # type: ignore[arg-type]

    with pytest.raises(BackendError, match="token counts"):
        NeuralStage(Counts()).lookup(Query("q"))


def test_token_counts_reach_the_response_with_the_figure_per_token() -> None:
    from eoc import Cascade
    from eoc.stages.neural import NeuralStage, Reply
    from tests.helpers import small_stages

    class Counted:
        name = "counted"

        def generate(self, prompt: str) -> Reply:
            return Reply("forty-two", tokens_in=12, tokens_out=4)

    with Cascade([*small_stages()[:-1], NeuralStage(Counted())]) as c:
        r = c.resolve("the answer to everything")
    assert r.tokens == (12, 4)
    assert r.uj_per_token == round(r.cost.uj / 4)
    assert (
        r.cost.uj
        == NeuralStage(Counted()).estimate(Query("the answer to everything"), _answer(12, 4)).uj
    )
    assert r.to_dict()["tokens"] == {
        "in": 12,
        "out": 4,
        "uj_per_token": r.uj_per_token,
        "provenance": "estimated",
    }


def _answer(tokens_in: int, tokens_out: int) -> Any:
    from eoc.stages.base import Answer

    return Answer("forty-two", tokens=(tokens_in, tokens_out))


@pytest.mark.skipif(IN_BROWSER, reason="no MEASURED cost can be built in the browser")
def test_a_backends_estimate_claiming_to_be_measured_is_refused() -> None:
    from eoc.cost import CounterKind, JouleCost, Provenance
    from eoc.stages.neural import NeuralStage, Reply

    class Claims:
        name = "claims"

        def generate(self, prompt: str) -> Reply:
            measured = JouleCost(
                5, Provenance.MEASURED, "trust me", counter="x", counter_kind=CounterKind.HARDWARE
            )
            return Reply("an answer", estimate=measured)

    with pytest.raises(BackendError, match="estimate"):
        NeuralStage(Claims()).lookup(Query("q"))
