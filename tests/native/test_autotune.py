"""The autotuner, tuning profiles, sealing and dispatch — driven by a modelled machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from eoc.cost import CounterKind, Provenance
from eoc.errors import ConfigError, InputError, NotMeasured, ReceiptMismatch
from eoc.meter.counter import CounterStatus
from eoc.testing import FakeClock
from native.autotune import (
    Dispatcher,
    TuningProfile,
    load_profile,
    set_global_profile,
    tune_shape_live,
)
from native.autotune.profile import ProfileEntry, global_profile
from native.autotune.seal import sign, verify
from native.backends import NumpyBackend, Shape
from native.backends.base import from_bf16_bits, operands
from native.counters.base import ProbedCounter

SHAPE = Shape(1, 64, 64)


class Machine:
    """Fake time and a whole-work counter: idle watts over time plus the work's own joules."""

    def __init__(self, idle_w: float = 5.0) -> None:
        self.clock = FakeClock()
        self.idle_w = idle_w
        self.work_uj = 0
        machine = self

        class Counter(ProbedCounter):
            name, kind, resolution_uj, min_window_ns = "model-rapl", CounterKind.HARDWARE, 1.0, 0

            def read_uj(self) -> int:
                return int(machine.idle_w * machine.clock.now_ns / 1000) + machine.work_uj

        self.counter = Counter(clock=self.clock, sleep=self.clock.sleep)


class ModelBackend(NumpyBackend):
    """Computes with numpy (so it passes the check) but costs what the model says."""

    def __init__(self, machine: Machine, name: str, uj_per_op: int, ns_per_op: int) -> None:
        super().__init__()
        self.machine, self.label, self.uj, self.ns = machine, name, uj_per_op, ns_per_op

    def unavailable(self) -> str | None:
        self.name = self.label
        return None

    def run(self, prepared) -> None:  # type: ignore[no-untyped-def]
        super().run(prepared)
        self.machine.clock.advance(self.ns)
        self.machine.work_uj += self.uj


def tune(machine: Machine, *backends: ModelBackend):  # type: ignore[no-untyped-def]
    return tune_shape_live(
        SHAPE, backends, machine.counter, 1.0, clock=machine.clock, sleep=machine.clock.sleep
    )


def test_the_joules_minimal_backend_wins_with_exact_marginal_figures() -> None:
    m = Machine()
    # 50 mJ in 1 ms (50 W over idle) against 30 mJ in 2 ms (15 W over idle)
    result = tune(
        m,
        ModelBackend(m, "fast-hungry", 50_000, 1_000_000),
        ModelBackend(m, "slow-frugal", 30_000, 2_000_000),
    )
    assert result.winner == "slow-frugal" and result.reason == ""
    by = {x.backend: x for x in result.measurements}
    assert by["fast-hungry"].uj_per_op == 50_000.0 and by["slow-frugal"].uj_per_op == 30_000.0
    assert by["fast-hungry"].ns_per_op == 1_000_000 and by["slow-frugal"].ns_per_op == 2_000_000
    assert result.margin == pytest.approx(50 / 30)
    assert result.counter == "model-rapl" and result.counter_kind is CounterKind.HARDWARE


def test_a_marginal_within_the_noise_of_idle_is_not_a_measurement() -> None:
    m = Machine()
    result = tune(m, ModelBackend(m, "whisper", 10, 1_000_000))  # 10 mJ over a 5 J window: 0.2 %
    assert result.winner is None and "within the noise" in result.reason


def test_one_unmeasured_candidate_voids_the_comparison() -> None:
    m = Machine()
    result = tune(
        m, ModelBackend(m, "normal", 50_000, 1_000_000), ModelBackend(m, "invisible", 0, 1_000_000)
    )
    assert (
        result.winner is None and "invisible" in result.reason and "no comparison" in result.reason
    )
    assert any(x.backend == "normal" and x.measured for x in result.measurements)


def test_a_backend_that_fails_its_check_is_skipped_and_never_wins() -> None:
    m = Machine()

    class Wrong(ModelBackend):
        def result(self, prepared):  # type: ignore[no-untyped-def]
            return prepared.out + 1

    result = tune(m, Wrong(m, "wrong", 1, 1_000_000), ModelBackend(m, "right", 40_000, 1_000_000))
    assert result.winner == "right" and "wrong result" in result.skipped["wrong"]


def test_no_live_counter_no_winner() -> None:
    m = Machine()
    m.counter._status = CounterStatus.frozen("advanced in 0 of 12")
    result = tune(m, ModelBackend(m, "a", 10, 1_000_000))
    assert result.winner is None and "not live" in result.reason


def test_an_idle_window_that_does_not_advance_gives_no_winner() -> None:
    m = Machine(idle_w=0.0)
    m.counter._status = CounterStatus.live()
    result = tune(m, ModelBackend(m, "a", 10, 1_000_000))
    assert result.winner is None and "idle" in result.reason


def test_the_real_backends_against_a_cpu_time_counter(cpu_time_counter) -> None:  # type: ignore[no-untyped-def]
    """Real matmuls, a counter whose energy follows this process's CPU time: a real comparison."""
    from native.backends import usable_backends

    backends, _ = usable_backends()
    result = tune_shape_live(Shape(16, 256, 256), backends, cpu_time_counter, 0.2)
    assert result.winner is not None, result.reason
    assert all(x.measured and x.uj_per_op and x.uj_per_op > 0 for x in result.measurements)


# -- profiles ------------------------------------------------------------------------------------


def measured_profile() -> TuningProfile:
    m = Machine()
    profile = TuningProfile()
    profile.add(
        tune(
            m,
            ModelBackend(m, "numpy", 50_000, 1_000_000),
            ModelBackend(m, "mlx", 30_000, 1_000_000),
        )
    )
    return profile


@pytest.mark.parametrize("uj", [0, -1.0, float("nan"), float("inf"), True])
def test_a_profile_never_records_a_zero_or_nonsense_figure(uj: object) -> None:
    with pytest.raises(ConfigError):
        ProfileEntry("1x64x64", "numpy", uj, 10.0, Provenance.MEASURED)  # type: ignore[arg-type]


def test_a_result_without_a_winner_cannot_be_recorded() -> None:
    m = Machine()
    result = tune(m, ModelBackend(m, "invisible", 0, 1_000_000))
    with pytest.raises(NotMeasured):
        TuningProfile().add(result)


def test_a_profile_round_trips_with_provenance(tmp_path: Path) -> None:
    path = measured_profile().save(tmp_path / "p.json")
    doc = json.loads(path.read_text())
    assert set(doc["provenance"]) == {
        "counter",
        "counter_kind",
        "host",
        "os",
        "date",
        "eoc_version",
    }
    assert doc["provenance"]["counter"] == "model-rapl" and doc["winners"] == {"1x64x64": "mlx"}
    loaded = load_profile(path, status_of=lambda name: CounterStatus.live())
    assert loaded.measured and loaded.best(SHAPE) == "mlx"
    assert [f.name for f in tmp_path.iterdir()] == ["p.json"]  # no temporary file left behind


def test_on_load_a_counter_not_live_here_demotes_every_figure(tmp_path: Path) -> None:
    path = measured_profile().save(tmp_path / "p.json")
    loaded = load_profile(path, status_of=lambda name: CounterStatus.unavailable("no permission"))
    entries = [e for es in loaded.entries.values() for e in es]
    assert entries and all(e.provenance is Provenance.ESTIMATED for e in entries)
    assert all("not live on this host now" in e.reason for e in entries)
    other = load_profile(path, status_of=lambda name: CounterStatus.live(), host="another-host")
    assert not other.measured and "measured on host" in other.entries["1x64x64"][0].reason


def test_nothing_unmeasured_is_written_and_no_file_is_created(tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    with pytest.raises(NotMeasured, match="refusing to write"):
        measured_profile().demoted("counter frozen").save(target)
    with pytest.raises(NotMeasured):
        TuningProfile().save(target)
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = measured_profile().save(tmp_path / "p.json")
    before = target.read_text()

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        measured_profile().save(target)
    assert target.read_text() == before and [f.name for f in tmp_path.iterdir()] == ["p.json"]


def test_a_malformed_profile_file_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    for text in (
        "not json",
        "[]",
        '{"version": 9}',
        '{"version": 1, "entries": [{"shape": "1x1"}]}',
    ):
        bad.write_text(text)
        with pytest.raises(InputError):
            load_profile(bad, status_of=lambda n: CounterStatus.live())


def _key() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def test_a_sealed_profile_verifies_and_any_change_breaks_it(tmp_path: Path) -> None:
    key = _key()
    path = measured_profile().save(tmp_path / "p.json", sign_key=key)
    doc = json.loads(path.read_text())
    signer = verify(doc)
    assert len(signer) == 64
    doc["winners"]["1x64x64"] = "numpy"
    with pytest.raises(ReceiptMismatch):
        verify(doc)
    with pytest.raises(ReceiptMismatch, match="another key"):
        verify(sign(measured_profile().to_dict(), key), public_key="00" * 32)
    assert load_profile(path, status_of=lambda n: CounterStatus.live()).measured


def test_eoc_verify_checks_a_profile_signature(tmp_path: Path) -> None:
    import io

    from eoc.cli.main import main

    path = measured_profile().save(tmp_path / "p.json", sign_key=_key())
    out = io.StringIO()
    assert main(["verify", str(path)], out=out) == 0 and "profile signature ok" in out.getvalue()
    doc = json.loads(path.read_text())
    doc["entries"][0]["uj_per_op"] = 1.0
    path.write_text(json.dumps(doc))
    assert main(["verify", str(path)], out=io.StringIO()) == 1
    unsigned = measured_profile().save(tmp_path / "u.json")
    assert main(["verify", str(unsigned)], out=io.StringIO()) == 1


# -- dispatch ---------------------------------------------------------------------------------------


def test_the_dispatcher_follows_the_profile_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("mlx.core", reason="mlx is not installed")
    profile = measured_profile()  # mlx won 1x64x64
    d = Dispatcher(profile)
    x, w = operands(SHAPE, seed=2)
    want = x.astype(np.float64) @ from_bf16_bits(w).astype(np.float64)
    monkeypatch.delenv("EOC_ENERGY_AUTOTUNE", raising=False)
    y, used = d.matmul(x, w)
    assert used.startswith("numpy") and np.allclose(y, want, rtol=2e-2, atol=2e-2)
    monkeypatch.setenv("EOC_ENERGY_AUTOTUNE", "1")
    y, used = d.matmul(x, w)
    assert used.startswith("mlx") and np.allclose(y, want, rtol=2e-2, atol=2e-2)
    other = operands(Shape(2, 64, 64))
    assert d.matmul(*other)[1].startswith("numpy")  # no winner for that shape


def test_the_global_profile_loads_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = measured_profile().save(tmp_path / "g.json")
    monkeypatch.setenv("EOC_TUNING_PROFILE", str(path))
    set_global_profile(None)
    try:
        loaded = global_profile()
        assert loaded is not None and loaded.best(SHAPE) == "mlx"
        assert not loaded.measured  # model-rapl is not a counter of this host: demoted on load
    finally:
        set_global_profile(None)
