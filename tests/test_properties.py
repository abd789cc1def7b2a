"""Laws that hold for every input (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eoc import Cascade, JouleCost, Provenance, Stage
from eoc.calibration import HitCalibration, HitCharger
from eoc.cost import CounterKind
from eoc.meter import CounterStatus
from eoc.meter.counter import CounterState
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend
from tests.helpers import native_only, small_stages

settings.register_profile("eoc", max_examples=150, deadline=None)
settings.load_profile("eoc")


@given(per_hit_nj=st.integers(1, 50_000_000), hits=st.integers(0, 400))
def test_microjoules_charged_over_n_hits_sum_to_the_calibrated_total(
    per_hit_nj: int, hits: int
) -> None:
    charger = HitCharger(HitCalibration(Stage.CACHE, per_hit_nj))
    charges = [charger.charge() for _ in range(hits)]
    assert sum(charges) == hits * per_hit_nj // 1000
    assert all(c >= 0 for c in charges)
    # and at every prefix, never more than the calibrated total so far
    running = 0
    for i, c in enumerate(charges, 1):
        running += c
        assert running == i * per_hit_nj // 1000


_status = st.sampled_from(
    [
        CounterStatus.live(),
        CounterStatus.frozen("advanced in 0 of 12"),
        CounterStatus.unavailable("no permission"),
    ]
)
_own_cost = st.one_of(
    st.none(),
    st.integers(1, 10**9).map(lambda uj: JouleCost.estimated(uj, "backend estimate")),
)


@given(
    readings=st.lists(st.integers(-(10**6), 10**12), min_size=1, max_size=6),
    status=_status,
    own=_own_cost,
    wrap=st.one_of(st.none(), st.integers(1, 10**9)),
    min_window_ns=st.sampled_from([0, 1, 10**9]),
    prompt=st.sampled_from(["why is the sky blue", "what is 2+2", "capital of France"]),
)
@native_only
def test_no_counter_trace_yields_a_measured_zero_or_a_measured_figure_from_a_non_live_counter(
    readings, status, own, wrap, min_window_ns, prompt
) -> None:
    counter = FakeCounter(readings, status=status, wrap_at=wrap, min_window_ns=min_window_ns)
    cascade = Cascade(
        small_stages(ScriptedBackend(cost=own)), meter=counter, clock=FakeClock(step_ns=5_000_000)
    )
    for _ in range(2):
        r = cascade.resolve(prompt)
        assert r.cost.uj >= 1
        assert r.receipt.verify()
        if r.cost.provenance is Provenance.MEASURED:
            assert status.state is CounterState.LIVE
            assert r.stage is Stage.NEURAL and own is None
            assert r.cost.counter == "fake" and r.cost.counter_kind is CounterKind.HARDWARE
        if status.state is not CounterState.LIVE:
            assert counter.reads == 0


@given(prompt=st.text(min_size=0, max_size=60))
def test_any_text_is_answered_unless_it_is_empty_or_not_valid_text(prompt: str) -> None:
    from eoc.errors import EmptyPrompt, InvalidText

    cascade = Cascade(small_stages())
    try:
        r = cascade.resolve(prompt)
    except (EmptyPrompt, InvalidText):
        assert not prompt.strip() or not prompt.isprintable()
        return
    assert r.receipt.verify() and r.cost.uj >= 1 and r.cost.provenance is Provenance.ESTIMATED
    assert cascade.resolve(prompt).stage is Stage.CACHE


@pytest.mark.parametrize("prompt", ["???", "!", "...", "¿?", "日本の首都は?", "a"])
def test_prompts_without_words_pass_kv_and_are_answered(prompt: str) -> None:
    r = Cascade(small_stages()).resolve(prompt)
    assert r.stage is Stage.NEURAL
