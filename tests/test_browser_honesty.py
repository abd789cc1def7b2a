"""In the browser nothing can be MEASURED. Natively these run with the one switch
(`IN_PYODIDE`) turned on; inside Pyodide (the core suite under Node) they run for real."""

from __future__ import annotations

import os

import pytest

import eoc.cascade
import eoc.cost
import eoc.meter.detection
from eoc import Cascade, JouleCost, Provenance, StubCounter
from eoc.cost import CounterKind
from eoc.errors import ConfigError, CounterUnavailable
from eoc.meter import CounterStatus, detect
from eoc.testing import FakeCounter, ScriptedBackend
from tests.helpers import IN_BROWSER, small_stages


@pytest.fixture(autouse=True)
def browser(monkeypatch: pytest.MonkeyPatch) -> None:
    if not IN_BROWSER:
        for module in (eoc.cascade, eoc.cost, eoc.meter.detection):
            monkeypatch.setattr(module, "IN_PYODIDE", True)


def test_a_live_fake_counter_is_refused_with_a_clear_error() -> None:
    with pytest.raises(CounterUnavailable, match="browser"):
        Cascade(small_stages(), meter=FakeCounter(step_uj=10))  # type: ignore[arg-type]


def test_a_class_claiming_to_be_live_is_refused() -> None:
    class ClaimsLive:
        name, kind, resolution_uj, min_window_ns = "rapl", CounterKind.HARDWARE, 1.0, 0

        def read_uj(self) -> int:
            return 123

        def status(self) -> CounterStatus:
            return CounterStatus.live("trust me")

    with pytest.raises(CounterUnavailable):
        Cascade(small_stages(), meter=ClaimsLive())  # type: ignore[arg-type]


def test_detect_gives_the_stub_even_with_a_live_candidate() -> None:
    assert isinstance(detect([FakeCounter(step_uj=10)]), StubCounter)


def test_environment_variables_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EOC_METER", "EOC_COUNTER", "EOC_MEASURED", "EOC_LIVE"):
        monkeypatch.setitem(os.environ, name, "1")
    cascade = Cascade(small_stages())
    assert isinstance(cascade.meter, StubCounter) and not cascade.live
    assert cascade.resolve("why is the sky blue").cost.provenance is Provenance.ESTIMATED


def test_no_measured_cost_can_be_built_so_a_backend_claiming_one_fails() -> None:
    with pytest.raises(ConfigError, match="browser"):
        JouleCost(5, Provenance.MEASURED, "x", counter="rapl", counter_kind=CounterKind.HARDWARE)

    class Claims:
        name = "claims-measured"

        def generate(self, prompt: str):  # type: ignore[no-untyped-def]
            from eoc.stages.neural import Reply

            cost = JouleCost(
                9, Provenance.MEASURED, "mine", counter="nvml", counter_kind=CounterKind.HARDWARE
            )
            return Reply("hi", cost)

    cascade = Cascade(small_stages(Claims()))
    with pytest.raises(ConfigError):
        cascade.resolve("hello")
    r = Cascade(small_stages(ScriptedBackend(cost=JouleCost.estimated(7, "est")))).resolve("hello")
    assert r.cost.provenance is Provenance.ESTIMATED and r.cost.uj == 7
