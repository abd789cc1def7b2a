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
    else:  # ~0.1 J a token: less than the judgement
        assert not judge.asked and r.stage.value == "neural"
        assert record.decisions["skipped_energy"] == 2  # both candidates
        assert "<= a judgement 20 J" in record.last.why


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
