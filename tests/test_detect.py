"""detect(): the stub in the browser, else the first live candidate, else the stub with the reason."""

from __future__ import annotations

import pytest

import eoc.cascade
import eoc.meter.detection as detect_mod
from eoc import Cascade, StubCounter
from eoc.errors import CounterUnavailable
from eoc.meter import CounterStatus, detect, detect_all
from eoc.testing import FakeCounter
from tests.helpers import native_only


def test_no_candidates_gives_the_stub_with_the_reason() -> None:
    found = detect_all([])
    assert isinstance(found.counter, StubCounter) and not found.live


@native_only
def test_native_missing_is_reported_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detect_mod.plugins, "load_all", lambda group: [])
    found = detect_all()
    assert isinstance(found.counter, StubCounter)
    assert 'pip install ".[native]"' in found.reason and "source" in found.reason


@native_only
def test_with_the_native_extra_the_stub_says_what_the_host_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import eoc_native.counters as nc

    empty = nc.Survey(notes=["rapl: no powercap zones", "perf: no power PMU"])
    monkeypatch.setattr(nc, "survey", lambda telemetry=True: empty)
    found = detect_all()
    assert isinstance(found.counter, StubCounter) and "no powercap zones" in found.reason


@native_only
def test_first_live_candidate_is_chosen_and_frozen_ones_are_reported() -> None:
    frozen = FakeCounter.frozen(0, name="psys", status=CounterStatus.frozen("advanced in 0 of 12"))
    live = FakeCounter(step_uj=5, name="rapl")
    found = detect_all([frozen, live])
    assert found.counter is live
    assert [(c.name, s.state.value) for c, s in found.candidates] == [
        ("psys", "frozen"),
        ("rapl", "live"),
    ]


@native_only
def test_no_live_candidate_gives_the_stub_naming_each() -> None:
    frozen = FakeCounter.frozen(0, name="psys", status=CounterStatus.frozen("advanced in 0 of 12"))
    counter = detect([frozen])
    assert isinstance(counter, StubCounter)
    assert "psys" in counter.reason and "advanced in 0" in counter.reason


def test_in_the_browser_detect_is_the_stub_even_with_a_live_candidate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(detect_mod, "IN_PYODIDE", True)
    assert isinstance(detect([FakeCounter(step_uj=5)]), StubCounter)


def test_in_the_browser_a_cascade_refuses_any_counter_but_the_stub(
    monkeypatch: pytest.MonkeyPatch, stages: list
) -> None:
    monkeypatch.setattr(eoc.cascade, "IN_PYODIDE", True)
    with pytest.raises(CounterUnavailable):
        Cascade(stages, meter=FakeCounter(step_uj=5))  # type: ignore[arg-type]
    r = Cascade(stages, meter=StubCounter()).resolve("hello")
    assert r.cost.provenance.value == "estimated"


@native_only
def test_detection_probes_each_candidate_instead_of_asking_it() -> None:
    from eoc.meter import CounterStatus, detect_all

    liar = FakeCounter([3], name="liar", status=CounterStatus.live("trust me"))
    found = detect_all([liar])
    assert found.counter is not liar and not found.live
    assert "liar" in found.reason and "FROZEN" in found.reason


def test_a_home_made_counter_claiming_hardware_is_unverified_and_a_fake_is_fake() -> None:
    from eoc.cost import CounterKind
    from eoc.meter.counter import CounterStatus
    from eoc.meter.trust import effective_kind

    class Mine:
        name, kind, resolution_uj, min_window_ns = "rapl:psys", CounterKind.HARDWARE, 1.0, 0

        def read_uj(self) -> int:
            return 0

        def status(self) -> CounterStatus:
            return CounterStatus.live()

    kind, why = effective_kind(Mine())
    assert kind is CounterKind.UNVERIFIED and "eoc.counters" in why
    assert effective_kind(FakeCounter(step_uj=1))[0] is CounterKind.FAKE
    with pytest.raises(ValueError, match="fake"):
        FakeCounter(step_uj=1, kind=CounterKind.HARDWARE)
