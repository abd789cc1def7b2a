"""The savings ledger (eoc/ledger.py, docs/figures.md): what an answer given without the model
avoided, with its provenance, the same figure in the Python API, the answer document and the
headers; no figure (never 0) when no model is configured; never measured."""

from __future__ import annotations

import copy

import pytest

from eoc import Cascade, JouleCost, Query, Stage
from eoc.answerdoc import check_answer_document
from eoc.cost import CounterKind, Provenance
from eoc.errors import BadReceipt, ConfigError
from eoc.ledger import Avoided, AvoidedProvenance, MadeLedger, avoided
from eoc.stages import CacheStage, EchoBackend, NeuralStage
from eoc.stages.base import work_estimate
from eoc.stages.neural import NoModelBackend
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend
from eoc.text.tokens import approx_tokens
from tests.helpers import native_only, small_stages

MODEL_ESTIMATE = JouleCost.estimated(2_500_000, "the model's own estimate")


def _would(prompt: str, payload: str) -> int:
    return work_estimate(
        Stage.NEURAL, tokens_in=approx_tokens(prompt), tokens_out=approx_tokens(payload)
    ).uj


def test_an_answer_no_model_made_avoided_an_estimate_of_the_model_with_its_basis() -> None:
    with Cascade(small_stages(ScriptedBackend())) as c:
        for prompt, stage in (("what is 2+2", Stage.KV), ("capital of France?", Stage.GRAPH)):
            r = c.resolve(prompt)
            assert r.stage is stage
            a = r.avoided
            assert a is not None and a.provenance is AvoidedProvenance.ESTIMATED
            assert a.uj == _would(prompt, r.payload)
            assert a.net_uj == a.uj - r.cost.uj
            assert a.basis.startswith("what the model would have spent on it, estimated: neural")
            assert "tokens in" in a.basis and a.counter is None
            # a repeat (a cache hit on a fact) avoided the same
            again = c.resolve(prompt)
            assert again.stage is Stage.CACHE and again.avoided is not None
            assert again.avoided.uj == a.uj


def test_a_flat_neural_figure_is_what_the_model_would_have_spent() -> None:
    stages = small_stages(ScriptedBackend())
    stages[-1] = NeuralStage(ScriptedBackend(), figure_uj=7_000_000)
    with Cascade(stages) as c:
        a = c.resolve("what is 2+2").avoided
    assert a is not None and a.uj == 7_000_000 and "figure set by the caller" in a.basis


@pytest.mark.parametrize("backend", [NoModelBackend(), EchoBackend()])
def test_with_no_model_configured_there_is_no_figure_never_zero(backend) -> None:
    with Cascade(small_stages(backend)) as c:
        for prompt in ("what is 2+2", "what is 2+2", "capital of France?"):
            r = c.resolve(prompt)
            assert r.stage is not Stage.NEURAL and r.avoided is None
            assert "avoided" not in r.to_dict()
            names = [k for k, _ in r.headers()]
            assert not any(k.startswith("x-eoc-avoided") for k in names)


def test_a_neural_answer_avoided_nothing() -> None:
    with Cascade(small_stages(ScriptedBackend())) as c:
        r = c.resolve("why is the sky blue")
    assert r.stage is Stage.NEURAL and r.avoided is None and "avoided" not in r.to_dict()
    assert avoided(Stage.NEURAL, r.cost, made=r.cost, would_cost=MODEL_ESTIMATE) is None


def test_a_replayed_model_answer_avoided_what_it_cost_when_made_estimated_then() -> None:
    with Cascade(small_stages(ScriptedBackend(cost=MODEL_ESTIMATE))) as c:
        made = c.resolve("why is the sky blue")
        assert made.stage is Stage.NEURAL and made.cost.uj == 2_500_000
        for prompt, stage in (
            ("why is the sky blue", Stage.CACHE),
            ("Why is the sky blue?", Stage.KV),
        ):
            r = c.resolve(prompt)
            assert r.stage is stage
            a = r.avoided
            assert a is not None and a.uj == made.cost.uj
            assert a.provenance is AvoidedProvenance.ESTIMATED and a.counter is None
            assert a.basis.startswith("what the model's answer cost when it was made (estimated")
            assert made.cost.basis in a.basis
            assert a.net_uj == made.cost.uj - r.cost.uj


@native_only
def test_a_replay_of_a_measured_answer_is_measured_when_made_never_measured() -> None:
    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")
    with Cascade(small_stages(), meter=meter, clock=clock, sleep=clock.sleep) as c:
        made = c.resolve("why is the sky blue")
        assert made.cost.measured
        r = c.resolve("why is the sky blue")
        assert r.stage is Stage.CACHE and not r.cost.measured
    a = r.avoided
    assert a is not None and a.uj == made.cost.uj
    assert a.provenance is AvoidedProvenance.MEASURED_WHEN_MADE
    assert (a.counter, a.counter_kind) == ("fake-rapl", CounterKind.FAKE.value)
    doc = r.to_dict()["avoided"]
    assert doc["provenance"] == "measured-when-made" != "measured"
    assert dict(r.headers())["x-eoc-avoided-provenance"] == "measured-when-made"
    assert check_answer_document(r.to_dict()) == r.receipt


@native_only
def test_a_replay_of_a_figure_estimated_on_a_live_counter_stays_estimated() -> None:
    """A backend that estimated its own work, bracketed on a live counter: the figure names the
    counter but was estimated then, so its replay avoided an estimate, not a measurement."""
    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")
    stages = small_stages(ScriptedBackend(cost=MODEL_ESTIMATE))
    with Cascade(stages, meter=meter, clock=clock, sleep=clock.sleep) as c:
        made = c.resolve("why is the sky blue")
        assert not made.cost.measured and made.cost.counter == "fake-rapl"
        r = c.resolve("why is the sky blue")
    a = r.avoided
    assert a is not None and a.uj == made.cost.uj
    assert a.provenance is AvoidedProvenance.ESTIMATED and a.counter is None


def test_another_cascade_on_the_same_store_replays_the_cost_kept_with_the_entry() -> None:
    """The figure travels with the entry (tests/test_made_cost.py: across processes and
    stores), not in the cascade that saw the answer made."""
    cache = CacheStage()
    backend = ScriptedBackend(cost=MODEL_ESTIMATE)
    first = small_stages(backend)
    first[0] = cache
    with Cascade(first) as c:
        c.resolve("why is the sky blue")
    again = small_stages(backend)
    again[0] = cache  # another cascade on the same store: it did not see the answer made
    with Cascade(again) as c:
        r = c.resolve("why is the sky blue")
        assert len(c.made) == 0
    assert r.stage is Stage.CACHE
    a = r.avoided
    assert a is not None and a.provenance is AvoidedProvenance.ESTIMATED
    assert a.uj == MODEL_ESTIMATE.uj != _would("why is the sky blue", r.payload)
    assert a.basis.startswith("what the model's answer cost when it was made (estimated then")


def test_a_replay_whose_cost_when_made_was_not_recorded_is_estimated_and_says_so() -> None:
    cache = CacheStage()
    backend = ScriptedBackend(cost=MODEL_ESTIMATE)
    stages = small_stages(backend)
    stages[0] = cache
    with Cascade(stages) as c:
        # kept by a memo that records no generation (so no cost): as before eoc recorded it
        cache.remember(c._made_by(Query("why is the sky blue"), c.origin()), "old", c.origin())
        r = c.resolve("why is the sky blue")
    assert r.stage is Stage.CACHE and r.payload == "old"
    a = r.avoided
    assert a is not None and a.provenance is AvoidedProvenance.ESTIMATED
    assert a.uj == _would("why is the sky blue", r.payload) != MODEL_ESTIMATE.uj
    assert a.basis.startswith("what the model would have spent on it, estimated")


def test_the_headers_and_the_document_say_the_same_figure() -> None:
    with Cascade(small_stages(ScriptedBackend())) as c:
        r = c.resolve("what is 2+2")
    doc, headers = r.to_dict(), dict(r.headers())
    assert r.avoided is not None
    assert int(headers["x-eoc-avoided-microjoules"]) == doc["avoided"]["uj"] == r.avoided.uj
    assert headers["x-eoc-avoided-provenance"] == doc["avoided"]["provenance"] == "estimated"
    assert check_answer_document(doc) == r.receipt


@pytest.mark.parametrize(
    "change",
    [
        {"provenance": "measured"},
        {"uj": 0},
        {"uj": "130000"},
        {"extra": 1},
    ],
)
def test_eoc_verify_refuses_an_avoided_part_the_rules_make_impossible(change: dict) -> None:
    with Cascade(small_stages(ScriptedBackend())) as c:
        doc = c.resolve("what is 2+2").to_dict()
    bad = copy.deepcopy(doc)
    bad["avoided"].update(change)
    with pytest.raises(BadReceipt):
        check_answer_document(bad)


def test_eoc_verify_refuses_a_neural_answer_that_says_it_avoided_the_model() -> None:
    with Cascade(small_stages(ScriptedBackend())) as c:
        fact = c.resolve("what is 2+2").to_dict()
        neural = c.resolve("why is the sky blue").to_dict()
    neural["avoided"] = fact["avoided"]
    with pytest.raises(BadReceipt, match="avoided nothing"):
        check_answer_document(neural)


def test_no_avoided_figure_can_be_measured_or_zero() -> None:
    assert {p.value for p in AvoidedProvenance} == {"measured-when-made", "estimated"}
    with pytest.raises(ConfigError):
        Avoided(0, AvoidedProvenance.ESTIMATED, "a refusal is not 0", 0)
    with pytest.raises(ConfigError):
        Avoided(5, AvoidedProvenance.MEASURED_WHEN_MADE, "names no counter", 0)
    assert avoided(Stage.KV, JouleCost.estimated(10, "a hit")) is None  # no model: no figure


def test_the_made_ledger_is_bounded_and_keyed_by_model_and_text() -> None:
    ledger = MadeLedger(max_entries=2)
    ledger.record("m", "a", MODEL_ESTIMATE)
    assert ledger.cost_of("m", "a") == MODEL_ESTIMATE
    assert ledger.cost_of("other", "a") is None and ledger.cost_of("m", "b") is None
    ledger.record("m", "b", MODEL_ESTIMATE)
    ledger.record("m", "c", MODEL_ESTIMATE)
    assert len(ledger) == 2 and ledger.cost_of("m", "a") is None


def test_measured_when_made_is_read_from_the_provenance_never_from_a_counter_name() -> None:
    """An estimate made while a counter was live names that counter; its replay avoided an
    estimate (the record path drops the name, so this checks avoided() itself)."""
    made = JouleCost(
        500_000,
        Provenance.ESTIMATED,
        "the backend's estimate",
        counter="fake-rapl",
        counter_kind=CounterKind.FAKE,
    )
    a = avoided(Stage.KV, JouleCost.estimated(300, "kv lookup"), made=made)
    assert a is not None and a.uj == 500_000
    assert a.provenance is AvoidedProvenance.ESTIMATED and a.counter is None
