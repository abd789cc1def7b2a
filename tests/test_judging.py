"""The kv's judge of meaning (eoc.stages.judging): which pairs it may see, the energy rule, what
an answer it decided says and costs. The judge here is a recording one (the model judge is
tested natively, tests/native/test_judge.py); what is tested is the kv's and the rule's part."""

from __future__ import annotations

import pytest

from eoc import Cascade, Query
from eoc.cost import JouleCost
from eoc.errors import ConfigError
from eoc.stages import KVStage
from eoc.stages.base import WorkRates
from eoc.stages.guard import EntityGuard, Wording, judgeable
from eoc.stages.judging import Judging, Verdict, checked_mode, energy_rule
from eoc.stages.neural import NeuralStage, Reply
from eoc.store.entry import Generation, MadeCost
from tests.helpers import CountingEmbedder, gate_built


class Recording:
    """A judge that says what it is told to and records every pair it is asked about."""

    name = "recording judge"

    def __init__(self, same: bool = True, uj: int = 5_000_000) -> None:
        self.same = same
        self.uj = uj
        self.asked: list[tuple[str, str, str]] = []

    def expected_uj(self) -> int:
        return self.uj

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
        self.asked.append((query, stored, reason))
        return Verdict(
            self.same, 0.9 if self.same else 0.1, self.name, JouleCost.estimated(self.uj, "x")
        )


STORED = {
    "Can I take hand luggage on the plane?": "Yes, one bag up to 7 kg.",
    "How much does a 2 kg bag of flour cost?": "£2.10",
    "Is the swimming pool open on Sundays?": "Yes, 8am to 6pm.",
    "How do I send money to my savings account?": "Use Transfer in the app.",
    "Can I bring my dog into the Paris office?": "No, only guide dogs.",
    "How do I turn on dark mode?": "Settings, then Display.",
}

DECISIVE = [
    "How much does a 3 kg bag of flour cost?",  # a number
    "Is the swimming pool not open on Sundays?",  # a negation
    "Is the swimming pool open on Mondays?",  # a time
    "Can I bring my dog into the London office?",  # a name
    "How do I turn off dark mode?",  # opposites
    "How much does a 2 kg bag of flour cost per 100 g?",  # another number
    "Is the Riverside swimming pool not open on Sundays?",  # a name in one only, and a negation
    "Is the swimming pool open at night on Sundays?",  # a time added beside the same day
]


def kv_with(judge: Recording, mode: str = "on") -> KVStage:
    kv = KVStage(judging=Judging(judge, None, mode=mode, floor=0.05))
    for q, a in STORED.items():
        kv.put(q, a)
    return kv


@pytest.mark.parametrize("asked", DECISIVE)
def test_a_decisive_difference_is_never_sent_to_the_judge(asked: str) -> None:
    judge = Recording(same=True)
    kv = kv_with(judge)
    assert kv.lookup(Query(asked)) is None
    assert judge.asked == [], f"the judge was asked about {judge.asked}"


def test_a_rewording_goes_to_the_judge_and_its_answer_says_so() -> None:
    judge = Recording(same=True, uj=7_000_000)
    kv = kv_with(judge)
    got = kv.lookup(Query("can i bring a carry-on bag onto the plane"))
    assert got is not None and got.payload == STORED["Can I take hand luggage on the plane?"]
    assert len(judge.asked) == 1 and judgeable(Wording(judge.asked[0][2]))
    assert got.cost is not None and got.cost.uj > 7_000_000  # the judge's joules are in it
    assert "a judge decided (recording judge: the same question" in got.cost.basis
    assert "EOC_JUDGE=on" in got.cost.basis
    record = kv.judging.record  # type: ignore[union-attr]
    assert record.decisions["served"] == 1 and record.joules_uj == 7_000_000


def test_a_judged_pair_is_not_judged_again() -> None:
    judge = Recording(same=True)
    kv = kv_with(judge)
    for _ in range(3):
        assert kv.lookup(Query("can i bring a carry-on bag onto the plane")) is not None
    assert len(judge.asked) == 1
    refuser = Recording(same=False)
    kv = kv_with(refuser)
    assert kv.lookup(Query("can i bring a carry-on bag onto the plane")) is None
    first = list(refuser.asked)  # the hand luggage and the Paris office ("a name in one only")
    assert len(first) == 2
    for _ in range(2):
        assert kv.lookup(Query("can i bring a carry-on bag onto the plane")) is None
    assert refuser.asked == first


def test_a_refusing_judge_serves_nothing_and_off_asks_nothing() -> None:
    judge = Recording(same=False)
    assert kv_with(judge).lookup(Query("can i bring a carry-on bag onto the plane")) is None
    assert [stored for _, stored, _ in judge.asked] == [  # both candidates, for wording only
        "Can I take hand luggage on the plane?",
        "Can I bring my dog into the Paris office?",
    ]
    quiet = Recording(same=True)
    assert (
        kv_with(quiet, mode="off").lookup(Query("can i bring a carry-on bag onto the plane"))
        is None
    )
    assert quiet.asked == []


def test_a_failing_judge_is_a_miss_and_counted() -> None:
    class Failing(Recording):
        def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
            raise RuntimeError("the model file went away")

    kv = kv_with(Failing())
    assert kv.lookup(Query("can i bring a carry-on bag onto the plane")) is None
    record = kv.judging.record  # type: ignore[union-attr]
    assert record.decisions["failed"] == 2 and "went away" in record.last_error  # both candidates


def test_the_energy_rule() -> None:
    assert energy_rule("auto", 0.5, 10_000_000, 4_000_000).run  # 5 J > 4 J
    assert not energy_rule("auto", 0.5, 8_000_000, 4_000_000).run  # 4 J is not more than 4 J
    assert not energy_rule("auto", 0.9, None, 1).run  # nothing to compare with: no saving
    assert energy_rule("on", 0.0, None, 10**12).run
    assert not energy_rule("off", 1.0, 10**12, 1).run
    said = energy_rule("auto", 0.5, 10_000_000, 4_000_000).why
    assert "expected saving 5 J" in said and "a judgement 4 J" in said


def test_the_mode_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_JUDGE", "sometimes")
    with pytest.raises(ConfigError, match="EOC_JUDGE is one of auto, on, off"):
        checked_mode(None)
    monkeypatch.setenv("EOC_JUDGE", "ON")
    assert checked_mode(None) == "on"
    with pytest.raises(ConfigError):
        Judging(None, None)


class Model:
    """A backend standing for a model whose answers are estimated at ``rates``."""

    name = "estimated model"
    runs_model = True

    def __init__(self, rates: WorkRates) -> None:
        self.work_rates = rates

    def generate(self, prompt: str) -> Reply:
        return Reply("the model's answer", None, True, 5, 4, finish_reason="stop")

    def chat(self, request: object, on_piece: object = None) -> Reply:
        return self.generate(getattr(request, "question", ""))


SMALL = WorkRates(0.0, per_token_in_uj=10_000.0, per_token_out_uj=100_000.0, why="a tiny model")
LARGE = WorkRates(
    0.0, per_token_in_uj=1_000_000.0, per_token_out_uj=10_000_000.0, why="a large remote model"
)


@pytest.mark.parametrize(("rates", "runs"), [(SMALL, False), (LARGE, True)])
def test_the_cascade_weighs_the_judge_against_what_the_model_would_spend(
    rates: WorkRates, runs: bool
) -> None:
    judge = Recording(same=True, uj=20_000_000)  # 20 J a judgement
    kv = kv_with(judge, mode="auto")
    cascade = Cascade([kv, NeuralStage(Model(rates))])
    r = cascade.resolve("can i bring a carry-on bag onto the plane")
    record = kv.judging.record  # type: ignore[union-attr]
    assert record.last is not None
    if runs:  # ~14 tokens out at 10 J: far more than 20 J / 0.5
        assert judge.asked and r.stage.value == "kv"
        assert record.last.run and record.last.saving_uj is not None
    else:  # ~0.1 J a token: less than the judgement, whichever stored answer it served
        assert not judge.asked and r.stage.value == "neural"
        assert not record.last.run and "<= a judgement 20 J" in record.last.why
        assert record.decisions["skipped_energy"] == 0  # ruled out before any pair was found


def test_the_guard_marks_only_wording_refusals_judgeable() -> None:
    guard = EntityGuard()
    assert not judgeable(
        guard.refusal("Is the pool open on Mondays?", "Is the pool open on Sundays?")
    )
    assert not judgeable(guard.refusal("How much is 3 kg?", "How much is 2 kg?"))
    assert not judgeable("")
    reason = guard.refusal(
        "can i bring a carry-on bag onto the plane", "Can I take hand luggage on the plane?"
    )
    assert judgeable(reason)


@pytest.mark.parametrize(
    ("query", "stored", "said"),
    [
        (  # a name one side adds, none in its place: context, or a narrower question
            "When's the last day I can send HMRC my self assessment return online?",
            "What is the deadline for filing a Self Assessment tax return online?",
            "the name 'hmrc' is in one only",
        ),
        (  # a time one side names and the other leaves open
            "made too much rice last night, how long does it keep in the fridge?",
            "How long can cooked rice be kept in the fridge?",
            "a time in one only: night / no time",
        ),
        (  # both poles joined by "or": asked of both, not the opposite of one
            "should I stretch before or after a run?",
            "Should I stretch before a run?",
            "one of them names both poles (time)",
        ),
    ],
)
def test_what_only_meaning_tells_apart_goes_to_the_judge(
    query: str, stored: str, said: str
) -> None:
    reason = EntityGuard().refusal(query, stored)
    assert said in reason and judgeable(reason), reason


def test_another_partition_s_answer_is_never_handed_to_the_judge() -> None:
    from eoc.chat.request import ChatDefaults, parse_chat

    def asked(question: str, system: str) -> Query:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
        defaults = ChatDefaults("m", max_tokens=8)
        return parse_chat({"model": "m", "messages": messages}, defaults).query()

    judge = Recording(same=True)
    kv = KVStage(judging=Judging(judge, None, mode="on", floor=0.05))
    cascade = Cascade([kv, NeuralStage(Model(LARGE))])
    cascade.resolve(asked("Can I take hand luggage on the plane?", "You are a travel desk."))
    r = cascade.resolve(asked("can i bring a carry-on bag onto the plane", "Answer in French."))
    assert r.stage.value == "neural"
    assert all(stored != "Can I take hand luggage on the plane?" for _, stored, _ in judge.asked)
    # the same system prompt: its own partition's answer may be judged
    cascade.resolve(asked("can i bring a carry-on bag onto the plane", "You are a travel desk."))
    assert any(stored == "Can I take hand luggage on the plane?" for _, stored, _ in judge.asked)


class Sure:
    """A student that serves alone at ``serve_at``."""

    name = "sure student"
    refuse_at = 0.0

    def __init__(self, serve_at: float) -> None:
        self.serve_at = serve_at

    def probability(self, query: str, stored: str, *, reason: str, cosine: float) -> float:
        return 1.0


def test_the_judge_says_when_it_could_serve_nothing_whatever_it_is_shown() -> None:
    """Where no stored answer could pay for a judgement, the judge serves nothing: the kv then
    need not embed a question for its sake. Anything that may serve says it may."""
    dear, cheap = Recording(uj=50_000_000), Recording(uj=1_000)
    assert Judging(dear, None, mode="off").cannot_serve("q", 10**12)
    assert not Judging(dear, None, mode="on").cannot_serve("q", None)
    assert Judging(dear, None, mode="auto").cannot_serve("q", 1_000_000)  # 1 J < 50 J
    assert Judging(dear, None, mode="auto").cannot_serve("q", None)  # nothing to save
    assert not Judging(cheap, None, mode="auto").cannot_serve("q", 1_000_000)
    assert not Judging(dear, Sure(0.9), mode="auto").cannot_serve("q", 1)  # serves alone
    assert Judging(dear, Sure(1.0), mode="auto").cannot_serve("q", 1)  # never alone
    assert not Judging(None, Sure(1.0), mode="auto").cannot_serve("q", 1)  # a student only
    judging = Judging(Recording(same=True, uj=50_000_000), None, mode="on")
    verdict = judging.decide(("q", "k", "s"), "q", "s", reason="x", cosine=0.9, saving_uj=1)
    assert verdict is not None and verdict.same
    judging.mode = "auto"  # a verdict that served is served again, whatever the joules
    assert not judging.cannot_serve("q", 1) and judging.cannot_serve("another q", 1)
    judging._remember(("q", "k", "s"), Verdict(False, 0.1, "judge"))  # judged again: refused
    assert judging.cannot_serve("q", 1)
    judging._remember(("q", "k", "s"), Verdict(True, 0.9, "judge"))
    judging.forget()
    assert judging.cannot_serve("q", 1)


def test_the_saving_bound_is_at_least_each_stored_answer_s_saving() -> None:
    """What the kv reads before it embeds: never less than what the energy rule would weigh
    for any stored answer (the longest, one made dearer than it would cost now, the ledger's)."""
    kv = KVStage(judging=Judging(Recording(uj=50_000_000), None, mode="auto"))
    cascade = Cascade([kv, NeuralStage(Model(SMALL))])
    for q, a in STORED.items():
        kv.put(q, a)
    kv.put("Where is the lost property office?", "At the north gate, next to the pharmacy.")
    q = Query("can i bring a carry-on bag onto the plane")
    bound = kv.saving_bound
    assert bound is not None

    def each_within() -> list[int]:
        ceiling = bound(q, kv._longest, kv._most_made)
        assert ceiling is not None
        savings = []
        for entry in kv._entries.values():
            saving = cascade._saving(q, kv._answer(entry, q, 0))
            assert saving is not None and saving.uj <= ceiling, entry.prompt
            savings.append(saving.uj)
        return savings

    assert len(set(each_within())) > 1  # what the model would spend: by the answer's length
    short, long = bound(q, 10, 0), bound(q, 4000, 0)
    assert short is not None and long is not None and long > short
    made = MadeCost(2_000_000, "estimated", "made by a slower model")  # over would_cost
    kv.put(
        "When does the museum open?", "At 9.", origin="m", generation=Generation("stop", made=made)
    )
    assert max(each_within()) == 2_000_000
    cascade.made.record("m", "an answer made in this process", JouleCost.estimated(10**9, "x"))
    assert bound(q, 0, 0) == 10**9  # the ledger's dearest


def test_a_kv_does_not_embed_for_a_judge_no_stored_answer_could_pay_for() -> None:
    for rates, embeds in ((SMALL, False), (LARGE, True)):
        emb = CountingEmbedder()
        judging = Judging(Recording(uj=20_000_000), None, mode="auto", floor=0.05)
        kv = KVStage(embedder=emb, guard=EntityGuard(), judging=judging)
        Cascade([kv, NeuralStage(Model(rates))])  # gives the kv its saving and its bound
        for q, a in STORED.items():
            kv.put(q, a)
        kv.lookup(Query("how do I repot an orchid"))  # starts the word gate's build
        gate_built(kv)
        emb.calls.clear()
        assert kv.lookup(Query("how do I prune a rose bush")) is None
        assert bool(emb.calls) is embeds, rates.why
