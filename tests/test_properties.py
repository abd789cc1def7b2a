"""Laws that hold for every input (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eoc import Cascade, JouleCost, Provenance, Stage, StubCounter
from eoc.calibration import HitCalibration, HitCharger
from eoc.cost import CounterKind
from eoc.meter import CounterStatus
from eoc.meter.trust import effective_kind
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend, assume_live
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


class _Recorder:
    """Wraps a counter and records every read, so a test can see which reads bracketed what."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.log: list[tuple[str, int]] = []
        for attr in ("name", "kind", "resolution_uj", "min_window_ns", "max_power_uw"):
            if hasattr(inner, attr):
                setattr(self, attr, getattr(inner, attr))

    def read_uj(self) -> int:
        value = self.inner.read_uj()  # type: ignore[attr-defined]
        self.log.append(("read", value))
        return value

    def status(self) -> CounterStatus:
        return self.inner.status()  # type: ignore[attr-defined,no-any-return]


class _HomeMade:
    """A counter class of the user's own, claiming to be RAPL hardware (issue 8, defect 2)."""

    name, kind, resolution_uj, min_window_ns = "rapl:psys", CounterKind.HARDWARE, 1.0, 0

    def __init__(self, clock: FakeClock, watts: int) -> None:
        self.clock, self.watts = clock, watts

    def read_uj(self) -> int:
        return self.clock.now_ns * self.watts // 1000

    def status(self) -> CounterStatus:
        return CounterStatus.live("trust me")


_claims = st.sampled_from(
    [CounterStatus.live(), CounterStatus.frozen("held"), CounterStatus.unavailable("gone")]
)


@st.composite
def _setups(draw: st.DrawFn) -> dict[str, object]:
    step_ns = draw(st.sampled_from([1_000, 1_000_000, 5_000_000, 60_000_000]))
    clock = FakeClock(step_ns=step_ns)
    kind = draw(st.sampled_from(["trace", "steps", "home-made", "stub", "failing"]))
    claim = draw(_claims)
    max_power_w = draw(st.sampled_from([None, 0.001, 1.0, 1e6]))
    min_window_ns = draw(st.sampled_from([0, 1, 10_000_000, 10**12]))
    meter: object
    if kind == "trace":
        meter = FakeCounter(
            draw(st.lists(st.integers(-(10**6), 10**15), min_size=1, max_size=40)),
            status=claim,
            wrap_at=draw(st.one_of(st.none(), st.integers(1, 10**9))),
            min_window_ns=min_window_ns,
            max_power_w=max_power_w,
        )
    elif kind == "steps":
        meter = FakeCounter(
            step_uj=draw(st.integers(-5, 10**12)),
            status=claim,
            min_window_ns=min_window_ns,
            max_power_w=max_power_w,
        )
    elif kind == "home-made":
        meter = _HomeMade(clock, draw(st.integers(0, 10**7)))
    elif kind == "failing":
        meter = FakeCounter(step_uj=10, fail_after=draw(st.integers(0, 40)), status=claim)
    else:
        meter = StubCounter()
    own_uj = draw(st.integers(1, 10**12))
    own = draw(
        st.sampled_from(
            [
                None,
                JouleCost.estimated(own_uj, "backend estimate"),
                JouleCost(
                    own_uj,
                    Provenance.MEASURED,
                    "own",
                    counter="fake",
                    counter_kind=CounterKind.FAKE,
                ),
                JouleCost(
                    own_uj,
                    Provenance.MEASURED,
                    "own",
                    counter="rapl:psys",
                    counter_kind=CounterKind.HARDWARE,
                ),
            ]
        )
    )
    return {
        "clock": clock,
        "meter": meter,
        "own": own,
        "caller_probe": draw(st.booleans()),
        "prompt": draw(
            st.sampled_from(["why is the sky blue", "what is 2+2", "capital of France"])
        ),
    }


@settings(
    max_examples=int(__import__("os").environ.get("EOC_PROPERTY_EXAMPLES", "3000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(setup=_setups())
@native_only
def test_no_figure_is_measured_unless_a_probed_live_counter_read_it_over_the_work(setup) -> None:
    """Over random counter traces, counter classes, claims of liveness, backend claims and
    meters, every MEASURED figure is a neural span (or the backend's own figure on that same
    counter) read between the two bracket reads of a counter that a probe found live, never
    0, within the counter's power ceiling, of its effective kind, and the receipt binds it."""
    clock, meter, own = setup["clock"], _Recorder(setup["meter"]), setup["own"]
    # calibration_budget_ns=1: hit calibration (always ESTIMATED, tested on its own) ends after
    # one round, so the cases (3,000 by default; EOC_PROPERTY_EXAMPLES) go to the bracket
    kw: dict[str, object] = {"clock": clock, "sleep": clock.sleep, "calibration_budget_ns": 1}
    if setup["caller_probe"]:
        kw["liveness"] = assume_live(meter)
    cascade = Cascade(small_stages(ScriptedBackend(cost=own)), meter=meter, **kw)  # type: ignore[arg-type]
    for _ in range(2):
        before = len(meter.log)
        r = cascade.resolve(setup["prompt"])
        assert r.cost.uj >= 1 and r.receipt.verify()
        reads = meter.log[before:]
        if r.cost.provenance is not Provenance.MEASURED:
            continue
        assert isinstance(setup["meter"], (FakeCounter, _HomeMade))
        assert cascade.live and cascade.liveness.status.is_live
        assert r.stage is Stage.NEURAL and reads and len(reads) == 2
        span = reads[1][1] - reads[0][1]
        assert span >= 1
        assert r.cost.uj in {span, getattr(own, "uj", None)}
        if r.cost.uj != span:  # the backend's own figure: only when metered on this meter
            assert own is not None and own.counter == meter.name and own.uj > span
        assert r.cost.counter == meter.name
        assert r.cost.counter_kind is effective_kind(setup["meter"])[0]
        assert r.cost.counter_kind is not CounterKind.HARDWARE  # no fake or home-made is hardware
        if setup["caller_probe"]:
            assert "handed in" in r.cost.basis
        assert r.receipt.counter_kind == r.cost.counter_kind.value


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
