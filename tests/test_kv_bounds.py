"""The kv stage's bounds: capped index searches, guard fingerprints, cheaper guard checks,
work-scaled answer costs and validated stored answers."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Hashable

import pytest

from eoc import Query
from eoc.errors import InputError
from eoc.knowledge import kv_pairs
from eoc.query import Stage
from eoc.stages import HashedNgramEmbedder, KVStage, SparseIndex
from eoc.stages.base import work_estimate
from eoc.stages.guard import EntityGuard, ExactWordsGuard, entities
from eoc.stages.guard.reading import _NOT_NAMES
from eoc.stages.index import MAX_POSTING, MAX_SCORED
from eoc.stages.kv import MAX_GUARD_CHECKS, _Entry
from eoc.text.forms import STOPWORDS, fold, normalize, words
from tests.helpers import IN_BROWSER, CountingEmbedder

TEMPLATE = "what is the price of item {} in the spring catalogue"

# -- the entity guard as it was before its analyses were precomputed: the reference ----------

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_QUOTED = re.compile(r"(?<!\w)[\"“”']([^\"“”']{2,})[\"“”'](?!\w)")  # quotes at word edges
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)$")
_CORRECTION = re.compile(
    r"\b(no,? sorry|no,? wait|no no|i mean|i meant|or rather|rather|make that|scratch that|"
    r"or better yet|let me rephrase|oh,? sorry|sorry|actually|wait|oh|um+|uh+|er+|no)\b",
    re.IGNORECASE,
)
_DIRECTIONAL = frozenset(
    {"to", "into", "from", "than", "versus", "vs", "per", "over", "before", "after"}
)
_WH = frozenset({"when", "where", "who", "whom", "whose", "why", "how"})


def _old_numbers(text: str) -> list[str]:
    return [m.group().replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]


def _old_entities(text: str) -> list[str]:
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        w = m.group()
        if not w[0].isupper():
            continue
        at_start = bool(_SENTENCE_START.search(text[: m.start()]))
        acronym = len(w) > 1 and w.isupper()
        if (not at_start or acronym) and w.lower() not in _NOT_NAMES:  # "Ok" names nothing
            out.append(fold(w))
    out += [fold(q).strip() for q in _QUOTED.findall(text)]
    return out


def _old_stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _old_content(text: str) -> list[str]:
    return [_old_stem(w) for w in words(normalize(text)) if w not in STOPWORDS and not w.isdigit()]


def _old_directions(text: str) -> set[tuple[str, str, str]]:
    ws = [w for w in words(normalize(text)) if w not in STOPWORDS or w in _DIRECTIONAL]
    out = set()
    for i, w in enumerate(ws[1:-1], 1):
        if w in _DIRECTIONAL:
            out.add((_old_stem(ws[i - 1]), w, _old_stem(ws[i + 1])))
    return out


def _old_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def old_allows(query: str, stored: str) -> bool:
    corrected = bool(_CORRECTION.search(query))
    q_num, s_num = _old_numbers(query), _old_numbers(stored)
    q_ent, s_ent = _old_entities(query), _old_entities(stored)
    qn, sn = normalize(query), normalize(stored)
    q_wh = [w for w in words(qn) if w in _WH]
    s_wh = [w for w in words(sn) if w in _WH]
    if corrected:
        if not (_old_subsequence(s_num, q_num) and _old_subsequence(s_wh, q_wh)):
            return False
    elif q_num != s_num or set(q_wh) != set(s_wh):
        return False
    q_words, s_words = set(words(qn)), set(words(sn))
    for ent in s_ent if corrected else (*q_ent, *s_ent):
        parts = ent.split()
        if not all(p in q_words for p in parts) or not all(p in s_words for p in parts):
            return False
    shared = [e for e in s_ent if e in q_ent]
    if not _old_subsequence(shared, q_ent):
        return False
    if not set(_old_content(stored)) <= set(_old_content(query)):
        return False
    s_dir = _old_directions(stored)
    swapped = {(b, d, a) for (a, d, b) in s_dir} - s_dir
    return not swapped & _old_directions(query)


def _variants(p: str, rng: random.Random) -> list[str]:
    """Paraphrases, near misses and self-corrections of a stored prompt."""
    return [
        "tell me " + p + " please", p.replace("what is the ", "") + "?", p.capitalize() + ".",
        p.replace("what is", "what's"), "No sorry, " + p, p + ", I mean " + p,
        re.sub(r"\d+", lambda m: str(int(m.group()) + 1), p),
        re.sub(r"(\w+) to (\w+)", r"\2 to \1", p), p.replace("what", "where"),
        p + " in " + rng.choice(["France", "NASA", "the 'Blue Book'", "2001"]),
    ]  # fmt: skip


def _pairs() -> list[tuple[str, str]]:
    rng = random.Random(3)
    prompts = [p for p, _ in kv_pairs()]
    pairs = [(v, p) for p in prompts for v in _variants(p, rng)]
    pairs += [(rng.choice(prompts), rng.choice(prompts)) for _ in range(2_000)]
    pairs += [
        ("convert 10 miles to km", "convert 10 km to miles"),
        ("What is the capital of Germany?", "What is the capital of France?"),
        ("Where was Edison born?", "When was Edison born?"),
        ("What did NASA launch in 1969?", "What did ESA launch in 1969?"),
        ("when did the age of imperialism begin", "when did the age of imperialism end"),
        ("Which city is the capital of France?", "What is the capital of France?"),
        ("Tell me when Edison was born", "When was Edison born?"),
        ("the 2007 I mean 2001 report on Mars", "the 2001 report on Mars"),
    ]
    return pairs


PAIRS = _pairs()


def test_the_entity_guard_decides_the_same_on_texts_and_on_their_analyses() -> None:
    guard = EntityGuard()
    served = 0
    for query, stored in PAIRS:
        want = guard.allows(query, stored)
        assert guard.allows(guard.prepare(query), guard.prepare(stored)) == want, (query, stored)
        assert (guard.refusal(query, stored) == "") == want, (query, stored)
        served += want
    assert 0 < served < len(PAIRS)  # the corpus has pairs on both sides


def test_entities_match_the_reference_on_text_with_sentence_breaks() -> None:
    rng = random.Random(5)
    parts = ["Paris", "NASA", "the", "Blue", "x", ".", "!", "?", " ", "  ", "\n", "\t", '"', "’",
             "-", "_", "1", ",", "É", "Ok", "'Big Deal'", "...", "?\n"]  # fmt: skip
    for _ in range(3_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        assert entities(text) == _old_entities(text), repr(text)


@pytest.mark.parametrize("guard", [EntityGuard(), ExactWordsGuard()])
def test_texts_with_different_fingerprints_are_never_allowed(
    guard: EntityGuard | ExactWordsGuard,
) -> None:
    ruled_out = 0
    for query, stored in PAIRS:
        fq, fs = guard.fingerprint(query), guard.fingerprint(stored)
        if fq is not None and fs is not None and fq != fs:
            ruled_out += 1
            assert not guard.allows(query, stored), (query, stored)
    assert ruled_out > 100


def test_the_entity_guard_names_no_terms() -> None:
    """It may serve a rewording in other words ("how do i trak my oder"), so no stored word is
    sure to be in the query: the kv embeds every miss (see eoc.stages.kv)."""
    assert not hasattr(EntityGuard(), "terms")


@pytest.mark.parametrize("guard", [ExactWordsGuard()])
def test_a_stored_prompt_is_allowed_only_when_its_terms_are_all_in_the_query(
    guard: ExactWordsGuard,
) -> None:
    allowed = 0
    for query, stored in PAIRS:
        if guard.allows(query, stored):
            allowed += 1
            assert guard.terms(stored) <= guard.terms(query), (query, stored)
    assert allowed > 100


def _counting_kv(guard: object = None) -> tuple[KVStage, CountingEmbedder]:
    """A kv over the pack with the exact-words guard's terms (its fingerprint left out, so the
    terms decide), or with ``guard``."""
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=guard or TermsOnlyGuard())  # type: ignore[arg-type]
    kv.load_pairs(kv_pairs())
    emb.calls.clear()
    return kv, emb


def test_a_question_no_stored_prompt_could_pass_for_is_a_miss_without_an_embedding() -> None:
    kv, emb = _counting_kv()
    for q in ("write a haiku about autumn leaves", "What is 1234 times 5678?",
              "explain the rules of cricket to a child"):  # fmt: skip
        assert kv.lookup(Query(q)) is None
    assert emb.calls == []


def test_the_term_check_never_loses_a_hit_the_guard_would_serve() -> None:
    kv, emb = _counting_kv()
    plain = KVStage(guard=ExactWordsGuard())  # the same pairs, without the term check
    plain._terms = None
    plain.load_pairs(kv_pairs())
    served = 0
    for query, _ in PAIRS[:3_000]:
        got, want = kv.lookup(Query(query)), plain.lookup(Query(query))
        assert (got and got.payload) == (want and want.payload), query
        served += want is not None
    assert served > 100 and emb.calls  # hits were embedded and found


class TermsOnlyGuard:
    """The exact-words guard's decision and terms, without its fingerprint."""

    name = "terms-only"

    def __init__(self) -> None:
        self._guard = ExactWordsGuard()

    def allows(self, query: str, stored: str) -> bool:
        return self._guard.allows(query, stored)

    def terms(self, text: str) -> frozenset[object]:
        return frozenset(self._guard.terms(text))


def test_a_stored_prompt_without_terms_makes_every_lookup_embed() -> None:
    kv, emb = _counting_kv()
    kv.put("is it?", "maybe")  # stopwords only: no terms, so any query might pass the guard
    emb.calls.clear()
    assert kv.lookup(Query("write a haiku about autumn leaves")) is None
    assert emb.calls == ["write a haiku about autumn leaves"]


def test_a_query_whose_fingerprint_no_stored_prompt_shares_is_a_miss_without_an_embedding() -> None:
    """The exact-words guard's fingerprint (the signature and operators): "is it?" has another,
    so it cannot make a new question embed, as its missing terms would."""
    kv, emb = _counting_kv(ExactWordsGuard())
    kv.put("is it?", "maybe")
    emb.calls.clear()
    assert kv.lookup(Query("write a haiku about autumn leaves")) is None
    assert emb.calls == []


def test_the_term_check_reads_at_most_max_term_checks_stored_prompts() -> None:
    import itertools

    vocab = ["price", "hat", "red", "blue", "green", "big", "small", "old", "new", "cheap"]
    query = Query(" ".join(vocab))  # every word of the vocabulary, never "shoe"
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=TermsOnlyGuard())  # no fingerprint: the terms decide
    for a, b in itertools.permutations(vocab, 2):  # 90 prompts, each needing "shoe"
        kv.put(f"shoe {a} {b}", "x")
    emb.calls.clear()
    assert kv.lookup(query) is None and emb.calls == []  # all read, none can pass
    for a, b, c in itertools.permutations(vocab, 3):  # 720 more: past the cap
        kv.put(f"shoe {a} {b} {c}", "x")
    emb.calls.clear()
    kv.lookup(query)
    assert emb.calls == [query.prompt]  # too many to read: embedded, as before


def test_a_self_correcting_text_has_no_entity_fingerprint() -> None:
    assert EntityGuard.fingerprint("the 2007 I mean 2001 report") is None
    assert EntityGuard.fingerprint("the 2001 report, 3 pages") == (("2001", "3"), ())
    assert EntityGuard.fingerprint("what is 3^4 in C++") == (("3", "4"), ("^", "++"))


# -- the index's caps -------------------------------------------------------------------------


def test_a_feature_held_by_more_than_max_posting_vectors_finds_no_candidates() -> None:
    """Past the cap a shared feature cannot identify a stored vector, so it is not walked."""
    for n, found in ((MAX_POSTING, True), (MAX_POSTING + 1, False)):
        index = SparseIndex()
        for k in range(n):
            index.add(k, {0: 0.8, 10 + k: 0.6})
        hits = index.search({0: 1.0}, 0.5, limit=1)
        assert bool(hits) is found, n


def test_a_capped_feature_still_counts_in_the_exact_score() -> None:
    index = SparseIndex()
    for k in range(MAX_POSTING + 5):
        index.add(k, {0: 0.8, 10 + k: 0.6})
    hits = index.search({0: 0.8, 12: 0.6}, 0.9, limit=1)
    assert hits == [(pytest.approx(1.0), 2)]


def test_at_most_max_scored_candidates_reach_accept() -> None:
    index = SparseIndex()
    e = HashedNgramEmbedder()
    for i in range(5 * MAX_SCORED):
        index.add(i, e.embed(TEMPLATE.format(i)))
    calls: list[Hashable] = []

    def refuse(key: Hashable) -> bool:
        calls.append(key)
        return False

    assert index.search(e.embed(TEMPLATE.format(10**6)), 0.6, 1, refuse) == []
    assert 0 < len(calls) <= MAX_SCORED


def test_prefilter_refusals_never_reach_accept_and_are_not_served() -> None:
    index = SparseIndex()
    e = HashedNgramEmbedder()
    for i in range(300):
        index.add(i, e.embed(TEMPLATE.format(i)))
    seen: list[Hashable] = []

    def accept(key: Hashable) -> bool:
        seen.append(key)
        return True

    hits = index.search(e.embed(TEMPLATE.format(7)), 0.6, 3, accept, prefilter=lambda k: k != 7)
    assert hits and 7 not in seen and all(k != 7 for _, k in hits)


def test_the_dense_exact_index_hands_accept_at_most_max_scored_candidates() -> None:
    pytest.importorskip("numpy")
    from eoc_native.semantic import ExactIndex

    index = ExactIndex(4)
    for i in range(5 * MAX_SCORED):
        index.add(i, [1.0, 0.0, 0.0, 0.001 * i])
    calls: list[Hashable] = []

    def refuse(key: Hashable) -> bool:
        calls.append(key)
        return False

    assert index.search([1.0, 0.0, 0.0, 0.0], 0.5, 1, refuse) == []
    assert len(calls) == MAX_SCORED
    hits = index.search([1.0, 0.0, 0.0, 0.0], 0.5, 1, prefilter=lambda k: k == 4 * MAX_SCORED)
    assert [k for _, k in hits] == [4 * MAX_SCORED]  # skipped keys use none of the budget


# -- the kv stage ---------------------------------------------------------------------------


class CountingGuard(EntityGuard):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def allows(self, query: object, stored: object) -> bool:  # type: ignore[override]
        self.calls += 1
        return super().allows(query, stored)  # type: ignore[arg-type]


class RefuseAll:
    """A guard without fingerprints that refuses everything, counting its checks."""

    name = "refuse-all"

    def __init__(self) -> None:
        self.calls = 0

    def allows(self, query: str, stored: str) -> bool:
        self.calls += 1
        return False


CORRECTED = "when does the museum, no sorry, the library open"
"""A stored question that corrects itself: the default guard gives it no fingerprint."""


def templated(n: int, guard: object | None = None) -> KVStage:
    kv = KVStage(guard=guard)  # type: ignore[arg-type]
    kv.load_pairs((TEMPLATE.format(i), f"${i}") for i in range(n))
    return kv


def test_a_miss_that_differs_only_by_a_number_never_runs_the_guard() -> None:
    guard = CountingGuard()
    kv = templated(2 * MAX_POSTING, guard)
    kv.put(CORRECTED, "at nine")  # no fingerprint: every query may be its candidate, so the
    # kv cannot miss before it searches, and the fingerprints must rule the others out
    for i in range(20):
        assert kv.lookup(Query(TEMPLATE.format(10**6 + i))) is None  # the term check: no embedding
        # a stored prompt's number and one more: past the term check, to the fingerprints
        assert kv.lookup(Query(TEMPLATE.format(f"{i} or {10**6 + i}"))) is None
    assert guard.calls == 0


class PlainIndex(SparseIndex):
    """An index that takes no prefilter, like a third party's."""

    accepts_prefilter = False


def test_without_an_index_prefilter_fingerprint_mismatches_still_skip_the_guard() -> None:
    guard = CountingGuard()
    kv = KVStage(guard=guard, index=PlainIndex())
    kv.load_pairs((TEMPLATE.format(i), f"${i}") for i in range(100))
    kv.put(CORRECTED, "at nine")  # as above: the search runs, and the fingerprints decide
    assert kv.lookup(Query(TEMPLATE.format(10**6))) is None and guard.calls == 0
    assert kv.lookup(Query(TEMPLATE.format("7 or 1000007"))) is None and guard.calls == 0
    hit = kv.lookup(Query("tell me the price of item 5 in the spring catalogue"))
    assert hit is not None and hit.payload == "$5" and guard.calls == 1


def test_a_paraphrase_in_a_large_templated_store_is_served_its_own_answer() -> None:
    kv = templated(4 * MAX_POSTING)
    for i in (0, 77, 4 * MAX_POSTING - 1):
        hit = kv.lookup(Query(f"tell me the price of item {i} in the spring catalogue"))
        assert hit is not None and hit.payload == f"${i}"


def test_a_lookup_runs_the_guard_at_most_max_guard_checks_times() -> None:
    guard = RefuseAll()
    kv = KVStage(guard=guard)  # type: ignore[arg-type]
    kv.load_pairs((f"the spring catalogue price of the item {w}", "x") for w in range(200))
    assert kv.lookup(Query("price of the item in the spring catalogue")) is None
    assert 0 < guard.calls <= MAX_GUARD_CHECKS


@pytest.mark.parametrize("guard", [EntityGuard(), ExactWordsGuard()])
def test_an_entry_stored_without_put_is_fingerprinted_and_served(
    guard: EntityGuard | ExactWordsGuard,
) -> None:
    kv = KVStage(guard=guard)  # the exact-words guard names terms: it is indexed by them too
    kv.put("what is the price of item 1 in the spring catalogue", "$1")
    prompt = TEMPLATE.format(2)
    key = normalize(prompt)
    kv.index.add(key, kv.embedder.embed(prompt))  # as a subclass loading its own rows might
    kv._entries[key] = _Entry(key, prompt, "$2")
    hit = kv.lookup(Query("tell me the price of item 2 in the spring catalogue"))
    assert hit is not None and hit.payload == "$2"


@pytest.mark.skipif(IN_BROWSER, reason="threads cannot start in Pyodide")
def test_lookups_and_puts_from_many_threads_serve_the_right_answers() -> None:
    kv = templated(600)
    errors: list[str] = []

    def work(t: int) -> None:
        for i in range(t, 600, 6):
            kv.put(TEMPLATE.format(10_000 + i), f"${10_000 + i}")
            hit = kv.lookup(Query(f"tell me the price of item {i} in the spring catalogue"))
            if hit is None or hit.payload != f"${i}":
                errors.append(f"{i}: {hit}")
            if kv.lookup(Query(TEMPLATE.format(20_000 + i))) is not None:
                errors.append(f"{20_000 + i} served")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(kv) == 1200


# -- what a kv answer costs, and what may be stored ----------------------------------------


def test_an_exact_hit_costs_the_estimate_for_its_bytes_and_no_candidates() -> None:
    kv = templated(3)
    q = Query("What is the price of item 1 in the spring catalogue?")
    hit = kv.lookup(q)
    assert hit is not None and hit.cost is not None
    want = work_estimate(Stage.KV, nbytes=q.size, candidates=0)
    assert (hit.cost.uj, hit.cost.basis, hit.cost.provenance) == (
        want.uj,
        want.basis,
        want.provenance,
    )


def test_a_similarity_hit_costs_more_than_an_exact_hit_of_the_same_size() -> None:
    kv = templated(50)
    q = Query("tell me the price of item 9 in the spring catalogue")
    hit = kv.lookup(q)
    assert hit is not None and hit.cost is not None and hit.payload == "$9"
    assert hit.cost.uj > work_estimate(Stage.KV, nbytes=q.size, candidates=0).uj
    assert "1 candidates" in hit.cost.basis


def test_a_flat_figure_leaves_kv_answers_without_a_cost_of_their_own() -> None:
    kv = KVStage(figure_uj=7)
    kv.put(TEMPLATE.format(1), "$1")
    for prompt in (TEMPLATE.format(1), "tell me the price of item 1 in the spring catalogue"):
        hit = kv.lookup(Query(prompt))
        assert hit is not None and hit.cost is None


@pytest.mark.parametrize("payload", ["bad \ud800 answer", "bad \x00 answer", "esc \x1b[0m"])
def test_a_kv_answer_with_a_lone_surrogate_or_control_character_is_refused(payload: str) -> None:
    kv = templated(3)
    with pytest.raises(InputError):
        kv.put("what is the colour of the sky", payload)
    assert len(kv) == 3 and kv.lookup(Query("what is the colour of the sky")) is None
    hit = kv.lookup(Query("tell me the price of item 2 in the spring catalogue"))
    assert hit is not None and hit.payload == "$2"


def test_deferred_pairs_are_embedded_on_the_first_lookup_that_needs_a_vector() -> None:
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=ExactWordsGuard())
    assert kv.defer_pairs([("what is the speed of light", "c"), ("what is pi", "3.14")]) == 2
    assert emb.calls == [] and len(kv) == 2
    hit = kv.lookup(Query("What is pi?"))  # an exact hit: nothing embedded
    assert hit is not None and hit.payload == "3.14" and emb.calls == []
    assert kv.lookup(Query("tell me a joke")) is None  # no stored question could match
    assert emb.calls == []
    hit = kv.lookup(Query("tell me the speed of light please"))  # a paraphrase: now embedded
    assert hit is not None and hit.payload == "c"
    assert sorted(emb.calls) == [
        "tell me the speed of light please",
        "what is pi",
        "what is the speed of light",
    ]
    before = len(emb.calls)
    kv.lookup(Query("tell me the speed of light, please"))
    assert len(emb.calls) == before + 1  # the query only: the pairs are embedded once


def test_a_put_after_defer_pairs_keeps_its_own_vector_and_a_bad_pair_stores_nothing() -> None:
    from eoc.stages.guard import NoGuard

    kv = KVStage(guard=NoGuard())  # a plain cosine cache: the vector alone decides
    kv.defer_pairs([("what is the speed of light", "c")])
    elsewhere = kv.embedder.embed("banana bread recipe")
    kv.put("what is the speed of light", "299,792,458 m/s", embedding=elsewhere)
    hit = kv.lookup(Query("banana bread recipe, please"))  # found by the vector put gave it
    assert hit is not None and hit.payload == "299,792,458 m/s"
    with pytest.raises(InputError):
        kv.defer_pairs([("what is e", "2.718"), ("   ", "nothing")])
    assert kv.lookup(Query("what is e")) is None and len(kv) == 1


def test_the_exact_words_guard_never_matches_a_computation_or_another_operator() -> None:
    from eoc.stages.guard import ExactWordsGuard

    guard = ExactWordsGuard()
    assert not guard.allows("what is 7+8", "what is 7*8")  # the same words, another operator
    assert guard.fingerprint("what is 7+8") != guard.fingerprint("what is 7*8")
    assert not guard.allows("please calculate 7 times 8", "calculate 7 times 8")  # computed
    assert guard.allows("please, who wrote Hamlet?", "Who wrote Hamlet")


def test_a_computation_is_a_miss_without_an_embedding_under_the_default_guard() -> None:
    """The default guard refuses a computation beside every stored question (it is computed):
    the kv misses before it embeds, so "what is 17*23" never loads an embedding model, even
    where a stored prompt shares its numbers and operators ("please work out 2+2 for me" /
    "what is 2+2")."""
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=EntityGuard())
    kv.load_pairs(kv_pairs())
    emb.calls.clear()
    for q in (
        "please work out 2+2 for me",
        "what is 17*23",
        "How many days are in 3 weeks?",
        "what is 2+2 please",  # (every word a stored question's: the word gate lets it through)
    ):
        assert kv.lookup(Query(q)) is None
    assert emb.calls == []
    kv.lookup(Query("what is the capital of the country Japan"))
    assert emb.calls == []  # no stored question has its words (eoc.stages.kv_words)
    kv.lookup(Query("tell me the speed of light please"))
    assert emb.calls  # a question that is no computation, whose words one stored holds


def test_refuses_every_is_never_wrong_about_the_default_guard() -> None:
    """Where the default guard says it refuses a query beside every stored question, it
    refuses it beside each of the pack's questions."""
    guard = EntityGuard()
    stored = [prompt for prompt, _ in kv_pairs()][:400]
    for q in (
        "what is 2 + 2 ?",
        "what is 17*23",
        "convert 10 miles to km",
        "what is the capital of France",
    ):
        if guard.refuses_every(q):
            assert not any(guard.allows(q, s) for s in stored), q
    assert guard.refuses_every("what is 17*23")
    assert not guard.refuses_every("what is the capital of France")


def test_the_guard_remembers_the_stems_of_short_words_only_and_at_most_its_bound() -> None:
    """A lookup stems the same words many times, so short words' stems are remembered; a long
    word (what a hostile query brings) is stemmed each time, so the memory stays within
    STEMS_KEPT words of STEM_KEPT_LEN letters whatever the queries hold."""
    from eoc.stages.guard import stems

    assert stems._stem_kept.cache_info().maxsize == stems.STEMS_KEPT
    long_word = "x" * (stems.STEM_KEPT_LEN + 1) + "ing"
    short_word = "zqvwalking"
    before = stems._stem_kept.cache_info().currsize
    assert stems._stem(long_word) == stems._stem_of(long_word) == long_word[:-3]
    assert stems._stem_kept.cache_info().currsize == before  # not remembered
    assert stems._stem(short_word) == "zqvwalk"
    assert stems._stem(short_word) == "zqvwalk"
    info = stems._stem_kept.cache_info()
    assert info.currsize <= before + 1 and info.hits >= 1
