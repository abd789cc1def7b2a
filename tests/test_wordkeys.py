"""The kv's word gate (:mod:`eoc.stages.kv_words`, keys from :mod:`eoc.stages.guard.wordkeys`):
it may let through what the guard refuses, never keep out what the guard serves."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from eoc.knowledge import kv_pairs
from eoc.query import Query
from eoc.stages import kv as kv_stage
from eoc.stages.guard import EntityGuard
from eoc.stages.guard.analysis import Analysis
from eoc.stages.guard.wordkeys import asked_keys, stored_keys
from eoc.stages.judging import Judging, Verdict
from eoc.stages.kv import KVStage
from eoc.stages.kv_words import MAX_WORD_READS, WordGate
from tests.helpers import IN_BROWSER, CountingEmbedder, gate_built

SUITES = Path(__file__).resolve().parents[1] / "bench" / "suites"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def suite_pairs() -> list[tuple[str, str]]:
    """(asked, stored) pairs of the suites' tune parts and the look-alike suites (whose sealed
    parts stay unread), both ways round."""
    pairs: list[tuple[str, str]] = []
    for path in [*sorted((SUITES / "everyday").glob("*.jsonl")), SUITES / "human" / "tune.jsonl"]:
        for row in _rows(path):
            if row.get("part", "tune") == "tune":
                pairs.append((str(row["asked"]), str(row["stored"])))
    for name in ("lookalikes.jsonl", "nearmiss.jsonl"):
        for row in _rows(SUITES / name):
            for field in ("query", "paraphrase"):
                if isinstance(row.get(field), str):
                    pairs.append((str(row[field]), str(row["stored"])))
    return pairs + [(s, a) for a, s in pairs]


def _slips(text: str, rng: random.Random) -> list[str]:
    """``text`` with one word written another way: a slip of the keys (a swap, a letter left
    out, one doubled, one changed), an ending added, the word clipped, or a run of words said
    by its initials; each kind once where the text allows it."""
    words = text.rstrip("?.!").split()
    out = []
    long = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if long:
        i = rng.choice(long)
        w = words[i]
        j = rng.randrange(1, len(w) - 1)
        for made in (
            w[:j] + w[j + 1] + w[j] + w[j + 2 :],  # swapped neighbours
            w[:j] + w[j + 1 :],  # a letter left out
            w[:j] + w[j] + w[j:],  # one doubled
            w[:j] + ("e" if w[j] != "e" else "a") + w[j + 1 :],  # one changed
            w + "s",
            w + "ing",
            w[: max(3, (len(w) + 2) // 3)],  # clipped
        ):
            out.append(" ".join([*words[:i], made, *words[i + 1 :]]) + "?")
    runs = [i for i in range(len(words) - 1) if words[i].isalpha() and words[i + 1].isalpha()]
    if runs:
        i = rng.choice(runs)
        initials = (words[i][0] + words[i + 1][0]).upper()
        out.append(" ".join([*words[:i], initials, *words[i + 2 :]]) + "?")
    return out


def written_pairs() -> list[tuple[str, str]]:
    """Each stored question of the suites and the pack beside its own slips, both ways round
    (in the browser, every third: the same code, at a third of the time)."""
    rng = random.Random(40)
    stored = sorted({s for _, s in suite_pairs()} | {p for p, _ in kv_pairs()})
    if IN_BROWSER:
        stored = stored[::3]
    pairs = []
    for s in stored:
        for v in _slips(s, rng):
            pairs += [(v, s), (s, v)]
    return pairs


def passes(asked: str, stored: str) -> bool:
    """Whether the gate's keys let ``stored`` through for ``asked``."""
    groups = asked_keys(Analysis(asked))
    if groups is None:
        return True
    keys = stored_keys(Analysis(stored))
    return all(not keys.isdisjoint(group) for group in groups)


def test_every_pair_the_guard_serves_passes_the_gate() -> None:
    """For every pair the entity guard serves (rewordings off, as the gate requires), of the
    suites and of each stored question beside its slips, endings, clippings and initials, the
    stored question shares a key with each word the query asks: the gate keeps no hit out. The
    pairs it serves with words that differ exercise every kind of pairing the keys stand for."""
    guard = EntityGuard()
    served = differ = 0
    for asked, stored in suite_pairs() + written_pairs():
        if not guard.allows(asked, stored):
            continue
        served += 1
        q, s = Analysis(asked), Analysis(stored)
        differ += not q.asked <= s.content
        assert passes(asked, stored), (asked, stored)
    assert served >= 500 and differ >= 100, (served, differ)


# pairs the guard serves, each through one kind of pairing of a word the query asks
PAIRINGS = {
    "a slip of the keys": ("how to chnage adress on driving lisence", "How do I change the address on my driving licence?"),
    "a clipped word": ("min legal tread depth uk car tyres", "What is the minimum legal tread depth for car tyres in the UK?"),
    "an ending on a word of three letters": ("Is there an aging limit?", "Is there an age limit?"),
    "a word of three letters with an ending": ("how do I go icing a cake", "How do I ice a cake?"),
    "an acronym of the stored words": ("do the rooms have AC", "Do the rooms have air conditioning?"),
    "spelt out where the stored question says an acronym": ("Do the rooms have air conditioning?", "do the rooms have AC"),
    "a price where it asks how much": ("what's the price of a day pass?", "How much is a day pass?"),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(PAIRINGS))
def test_each_kind_of_pairing_passes_the_gate(kind: str) -> None:
    asked, stored = PAIRINGS[kind]
    assert EntityGuard().allows(asked, stored)
    assert passes(asked, stored)


def test_the_gate_keeps_out_most_of_what_the_guard_refuses() -> None:
    """The point of the keys: of the suites' pairs the guard refuses, many share no key for
    some asked word (the gate saves their embedding)."""
    guard = EntityGuard()
    refused = [(a, s) for a, s in suite_pairs() if not guard.allows(a, s)]
    kept_out = sum(not passes(a, s) for a, s in refused)
    assert len(refused) > 300 and kept_out * 3 >= len(refused), (kept_out, len(refused))


def test_a_query_that_corrects_itself_and_rewordings_are_never_gated() -> None:
    assert EntityGuard().asked_keys("what is the capital of Peru, no sorry, of Chile") is None
    assert EntityGuard(rewordings=True).asked_keys("what is the capital of Peru") is None
    assert EntityGuard().asked_keys("what is the capital of Peru")


def _kv(judging: Judging | None = None) -> tuple[KVStage, CountingEmbedder]:
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=EntityGuard(), judging=judging)
    kv.load_pairs(
        [
            ("How long can cooked rice be kept in the fridge?", "Up to a day."),
            ("What is the boiling point of water at sea level?", "100 °C."),
        ]
    )
    emb.calls.clear()
    return kv, emb


def test_a_question_no_stored_one_holds_the_words_of_is_not_embedded() -> None:
    kv, emb = _kv()
    assert kv.lookup(Query("how do I repot an orchid")) is None
    assert emb.calls == []  # a miss before the embedding
    answer = kv.lookup(Query("how long can cooked rice be kept in the frige?"))
    assert emb.calls and answer is not None and answer.payload == "Up to a day."


def test_a_question_the_guard_refuses_beside_every_candidate_is_not_embedded() -> None:
    """Guard first: the gate leaves the rice question for its negation, and the guard refuses it
    there, so nothing could be served and nothing is embedded; a slip of it is embedded and
    served, the guard asked once for the pair (the search reuses the verdict)."""
    emb = CountingEmbedder()
    guard = _CountingGuard()
    kv = KVStage(embedder=emb, guard=guard)
    kv.load_pairs([("How long can cooked rice be kept in the fridge?", "Up to a day.")])
    emb.calls.clear()
    assert kv.lookup(Query("How long can cooked rice not be kept in the fridge?")) is None
    assert emb.calls == [] and guard.checks == 1
    guard.checks = 0
    answer = kv.lookup(Query("how long can cooked rice be kept in the frige?"))
    assert answer is not None and answer.payload == "Up to a day."
    assert len(emb.calls) == 1 and guard.checks == 1


def test_guard_first_stands_aside_past_its_candidates_and_for_a_judge() -> None:
    """More stored questions left than GUARD_FIRST: the search checks them by cosine as before;
    with a judge (who may serve what the guard refuses for its wording): embedded as before."""
    places = ("at home", "at work", "in summer", "in winter", "on a boat", "in a van", "in a cabin")
    stored = [f"How long can cooked rice be kept in the fridge {where}?" for where in places]
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb, guard=EntityGuard())
    kv.load_pairs([(q, "Up to a day.") for q in stored])
    asked = "How long can cooked rice not be kept in the fridge?"
    assert len(kv._word_candidates(asked) or ()) > kv_stage.GUARD_FIRST
    emb.calls.clear()
    assert kv.lookup(Query(asked)) is None and len(emb.calls) == 1
    judged, emb = _kv(Judging(_Never(), None, mode="on"))
    judged.lookup(Query(asked))
    gate_built(judged)  # the gate, built on a thread, leaves the one stored rice question
    emb.calls.clear()
    assert judged.lookup(Query(asked)) is None and emb.calls


def test_the_gate_is_built_at_the_first_lookup_that_may_use_it() -> None:
    """Built over what memory holds at the first lookup, then kept as entries come and go."""
    kv, emb = _kv()
    assert kv._words is None  # nothing keyed at load
    kv.lookup(Query("how do I repot an orchid"))
    assert kv._words is not None and len(kv._words) == 2 and emb.calls == []
    kv.put("How do I repot an orchid?", "In spring, into bark.")
    assert len(kv._words) == 3  # keyed as it was stored, not at the next lookup
    emb.calls.clear()
    kv.lookup(Query("please, how do I repot an orchid"))
    assert emb.calls  # keyed as it was stored: the gate lets it through
    kv.forget_where(lambda key, prompt, origin, meta: "orchid" in (prompt or ""))
    assert len(kv._words) == 2  # forgotten: no longer keyed
    assert kv._word_candidates("please, how do I repot an orchid") == set()
    emb.calls.clear()
    assert kv.lookup(Query("please, how do I repot an orchid")) is None and emb.calls == []


def test_a_gate_still_keying_lets_every_query_through() -> None:
    gate = WordGate(lambda p: frozenset(p.split()))
    gate.ready = False
    assert gate.may_pass((frozenset({"absent"}),))


def test_with_a_judge_every_question_is_embedded() -> None:
    """A judge of meaning may serve a rewording that shares no word: the gate stands aside."""
    kv, emb = _kv(Judging(_Never(), None, mode="on"))
    kv.lookup(Query("how do I repot an orchid"))
    assert emb.calls
    gate_built(kv)  # the gate is built meanwhile (to spare the guard), and still gates nothing
    emb.calls.clear()
    kv.lookup(Query("how do I prune a rose bush"))
    assert emb.calls


class _Never:
    """A judge that serves no pair."""

    name = "never"

    def expected_uj(self) -> int:
        return 1

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
        return Verdict(False, "never", 0.0)


class _CountingGuard(EntityGuard):
    """The entity guard, counting the pairs the kv's similar search asks it to allow."""

    checks = 0

    def allows(self, query: object, stored: object) -> bool:
        self.checks += 1
        return super().allows(query, stored)  # type: ignore[arg-type]


@pytest.mark.skipif(IN_BROWSER, reason="the browser's Python starts no thread")
def test_with_a_judge_the_gate_is_built_on_a_thread() -> None:
    """No lookup waits while the gate keys the stored questions (about 0.1 ms each)."""
    kv, _ = _kv(Judging(_Never(), None, mode="on"))
    on_main: list[bool] = []
    build = kv._word_gate

    def recorded() -> WordGate | None:
        on_main.append(threading.current_thread() is threading.main_thread())
        return build()

    kv._word_gate = recorded  # type: ignore[method-assign]
    kv.lookup(Query("how do I repot an orchid"))
    kv.lookup(Query("how do I prune a rose bush"))
    gate_built(kv)
    assert on_main == [False]


def test_with_a_judge_the_gate_spares_the_guard_and_serves_the_same() -> None:
    """With a judge, the gate keeps from the guard's checks the stored questions that cannot
    pass: the same answers over the everyday tune part, and far fewer checks."""
    rows = [
        r
        for path in sorted((SUITES / "everyday").glob("*.jsonl"))
        for r in _rows(path)
        if r.get("part") == "tune"
    ][:: 3 if IN_BROWSER else 1]
    stored = {str(r["stored"]): str(r["stored_answer"]) for r in rows}
    results = []
    for gated in (True, False):
        guard = _CountingGuard()
        judging = Judging(_Never(), None, mode="on")
        kv = KVStage(embedder=CountingEmbedder(), guard=guard, judging=judging)
        if not gated:
            kv._stored_keys = None  # no word gate
        kv.load_pairs(stored.items())
        kv.lookup(Query(str(rows[0]["asked"])))
        if gated:
            gate_built(kv)
        guard.checks = 0
        said = [kv.lookup(Query(str(r["asked"]))) for r in rows]
        results.append(([None if a is None else a.payload for a in said], guard.checks))
    (with_gate, checks), (without, checks_all) = results
    assert with_gate == without and any(with_gate)
    assert checks < checks_all / 2, (checks, checks_all)


def test_with_a_judge_a_question_stored_after_the_gate_is_analysed_as_it_is_keyed() -> None:
    """Behind the reply, not in the next miss: the analysis the guard and the judge read."""
    kv, _ = _kv(Judging(_Never(), None, mode="on"))
    kv.lookup(Query("how long can cooked pasta be kept in the fridge?"))
    gate = gate_built(kv)
    kv.remember(Query("How long can cooked pasta be kept in the freezer?"), "Two months.")
    entry = next(e for e in kv._entries.values() if "pasta" in e.prompt)
    assert isinstance(entry.analysis, Analysis) and entry.key in gate.held
    assert gate.may_pass(EntityGuard().asked_keys("pasta freezer") or ())


def test_the_gate_answers_as_without_it_on_the_suites() -> None:
    """Over the everyday suite's tune part, a kv with the gate serves exactly what it serves
    without it, and embeds fewer questions."""
    rows = [
        r
        for path in sorted((SUITES / "everyday").glob("*.jsonl"))
        for r in _rows(path)
        if r.get("part") == "tune"
    ]
    stored = {str(r["stored"]): str(r["stored_answer"]) for r in rows}
    results = []
    for gated in (True, False):
        emb = CountingEmbedder()
        kv = KVStage(embedder=emb, guard=EntityGuard())
        kv.load_pairs(stored.items())
        if not gated:
            kv._stored_keys = None  # no word gate
        emb.calls.clear()
        said = [kv.lookup(Query(str(r["asked"]))) for r in rows]
        results.append(([None if a is None else a.payload for a in said], len(emb.calls)))
    (with_gate, embedded), (without, embedded_all) = results
    assert with_gate == without
    assert embedded < embedded_all


def test_the_gate_is_bounded() -> None:
    gate = WordGate(lambda p: frozenset(p.split()), limit=3)
    for i in range(3):
        gate.add(f"k{i}", f"apple pear{i}")
    assert not gate.may_pass((frozenset({"plum"}),))
    assert gate.may_pass((frozenset({"apple"}), frozenset({"pear1"})))
    gate.remove("k1")
    assert not gate.may_pass((frozenset({"apple"}), frozenset({"pear1"})))
    gate.add("k3", "apple plum")
    gate.add("k4", "one more than it keys")  # past its limit: off, every query let through
    assert not gate.on and gate.may_pass((frozenset({"nothing"}),)) and len(gate) == 0


def test_a_long_read_stops_at_the_rarest_words() -> None:
    """Past its reads, the gate keeps the questions that meet the rarest words read so far (more
    than meet them all, never fewer); with the rarest word alone too long, it cannot say."""
    gate = WordGate(lambda p: frozenset(p.split()))
    for i in range(MAX_WORD_READS + 1):
        gate.add(f"k{i}", "common")
    gate.add("r", "rare")
    # "rare" is read first (its list is the shortest); "common" would be too long a read
    assert gate.may_pass((frozenset({"common"}), frozenset({"rare"})))
    assert gate.candidates((frozenset({"common"}), frozenset({"rare"}))) == {"r"}
    assert not gate.may_pass((frozenset({"rare"}), frozenset({"absent"})))
    assert gate.candidates((frozenset({"common"}),)) is None


def test_removed_questions_are_dropped_from_the_lists() -> None:
    gate = WordGate(lambda p: frozenset(p.split()))
    for i in range(200):
        gate.add(f"k{i}", f"w{i}")
    for i in range(150):
        gate.remove(f"k{i}")
    assert sum(len(v) for v in gate._lists.values()) < 200  # rebuilt
    assert gate.may_pass((frozenset({"w170"}),)) and not gate.may_pass((frozenset({"w10"}),))


def test_a_question_stored_again_in_other_words_does_not_grow_the_lists() -> None:
    gate = WordGate(lambda p: frozenset(p.split()))
    for i in range(500):
        gate.add("k", f"same question take{i}")
    assert sum(len(v) for v in gate._lists.values()) < 300
    assert gate.may_pass((frozenset({"take499"}),))


@pytest.mark.parametrize("text", ["", "?", "the a of", "x" * 5000])
def test_odd_texts_have_keys(text: str) -> None:
    assert isinstance(stored_keys(Analysis(text)), frozenset)
    assert asked_keys(Analysis(text)) is not None
