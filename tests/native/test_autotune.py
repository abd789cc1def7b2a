"""The autotuner, tuning profiles, sealing and dispatch — driven by a modelled machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from eoc.cost import CounterKind, Provenance
from eoc.errors import ConfigError, InputError, NotMeasured, ReceiptMismatch
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import ProbeResult, probe
from eoc_native.autotune import (
    Dispatcher,
    Measurement,
    TuneResult,
    TuningProfile,
    load_profile,
    set_global_profile,
    tune_shape_live,
)
from eoc_native.autotune.profile import ProfileEntry, entry_measured_here, global_profile
from eoc_native.autotune.seal import describe_profile
from eoc_native.autotune.signing import sign, verify
from eoc_native.backends import Shape
from eoc_native.backends.base import from_bf16_bits, operands
from eoc_native.counters.base import ProbedCounter
from tests.native.models import Machine, ModelBackend

SHAPE = Shape(1, 64, 64)
LIVE = lambda name: CounterStatus.live()  # noqa: E731 - status_of for load_profile


@pytest.fixture(autouse=True)
def _no_trusted_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EOC_TRUSTED_KEYS", raising=False)


def tune(machine: Machine, *backends: ModelBackend, **kw: object) -> TuneResult:
    return tune_shape_live(
        SHAPE, backends, machine.counter, 1.0, clock=machine.clock, sleep=machine.clock.sleep, **kw
    )  # type: ignore[arg-type]


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
    assert result.counter == "model-rapl" and result.counter_kind is CounterKind.FAKE
    assert result.liveness.startswith("probed by eoc: LIVE")


def test_a_counter_claiming_hardware_outside_the_entry_points_is_unverified() -> None:
    m = Machine()

    class Claims(type(m.counter)):  # type: ignore[misc]
        kind = CounterKind.HARDWARE

    m.counter = Claims(m)
    result = tune(m, ModelBackend(m, "a", 50_000, 1_000_000))
    assert result.winner == "a" and result.counter_kind is CounterKind.UNVERIFIED


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


def test_a_counter_whose_status_claims_live_but_never_advances_is_refused() -> None:
    m = Machine(idle_w=0.0)  # reads the same value for ever
    m.counter._status = CounterStatus.live("it says so")  # the claim the tuner must not trust
    result = tune(m, ModelBackend(m, "a", 50_000, 1_000_000))
    assert result.winner is None and "not live" in result.reason
    assert "probed by eoc: FROZEN" in result.reason and result.liveness.startswith("probed by eoc")


def test_a_hand_built_probe_is_not_taken_and_another_counters_is_refused() -> None:
    m = Machine(idle_w=0.0)
    forged = ProbeResult(CounterStatus.live(), 12, 12, 12, 300_000_000, "model-rapl", "eoc")
    result = tune(m, ModelBackend(m, "a", 50_000, 1_000_000), liveness=forged)
    assert result.winner is None and "probed by eoc: FROZEN" in result.reason
    elsewhere = Machine()
    elsewhere.counter.name = "another"
    other = probe(elsewhere.counter, clock=elsewhere.clock, sleep=elsewhere.clock.sleep)
    with pytest.raises(ConfigError, match="another"):
        tune(m, ModelBackend(m, "a", 50_000, 1_000_000), liveness=other)


def test_an_idle_window_that_does_not_advance_gives_no_winner() -> None:
    m = Machine()
    seen = probe(m.counter, clock=m.clock, sleep=m.clock.sleep)  # live while probed ...
    m.idle_w = 0.0  # ... then it holds
    result = tune(m, ModelBackend(m, "a", 10, 1_000_000), liveness=seen)
    assert result.winner is None and "idle" in result.reason and result.liveness == seen.describe()


def test_the_real_backends_against_a_cpu_time_counter(cpu_time_counter) -> None:  # type: ignore[no-untyped-def]
    """Real matmuls, a counter whose energy follows this process's CPU time: a real comparison."""
    from eoc_native.backends import usable_backends

    backends, _ = usable_backends()
    result = tune_shape_live(Shape(16, 256, 256), backends, cpu_time_counter, 0.2)
    assert result.winner is not None, result.reason
    assert all(x.measured and x.uj_per_op and x.uj_per_op > 0 for x in result.measurements)
    assert result.counter_kind is CounterKind.FAKE  # a model, labelled as one


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


def hand_built() -> TuneResult:
    rows = (Measurement("numpy", 10, 10_000_000, 1, 5.0, 1.0, 50_000_000),)
    return TuneResult(SHAPE, "numpy", rows, counter="model-rapl", counter_kind=CounterKind.HARDWARE)


@pytest.mark.parametrize("uj", [0, -1.0, float("nan"), float("inf"), True])
def test_a_profile_never_records_a_zero_or_nonsense_figure(uj: object) -> None:
    with pytest.raises(ConfigError):
        ProfileEntry("1x64x64", "numpy", uj, 10.0, Provenance.MEASURED)  # type: ignore[arg-type]


def test_a_result_without_a_winner_cannot_be_recorded() -> None:
    m = Machine()
    result = tune(m, ModelBackend(m, "invisible", 0, 1_000_000))
    with pytest.raises(NotMeasured):
        TuningProfile().add(result)


def test_a_hand_built_result_is_not_measured_and_is_never_written(tmp_path: Path) -> None:
    profile = TuningProfile()
    profile.add(hand_built())
    entry = profile.entries["1x64x64"][0]
    assert entry.provenance is Provenance.ESTIMATED and "tune_shape_live" in entry.reason
    with pytest.raises(NotMeasured, match="refusing to write"):
        profile.save(tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


def test_an_entry_put_in_by_hand_as_measured_is_never_written(tmp_path: Path) -> None:
    profile = measured_profile()
    assert all(entry_measured_here(e) for e in profile.entries["1x64x64"])
    profile.entries["1x64x64"][1] = replace(profile.entries["1x64x64"][1])  # same figures
    with pytest.raises(NotMeasured, match="neither measured"):
        profile.save(tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


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
    assert doc["provenance"]["counter_kind"] == "fake"
    loaded = load_profile(path, status_of=LIVE)
    assert loaded.measured and loaded.best(SHAPE) == "mlx" and loaded.signer is None
    assert [f.name for f in tmp_path.iterdir()] == ["p.json"]  # no temporary file left behind


def test_an_imported_profile_keeps_its_origin_and_is_never_measured_here(tmp_path: Path) -> None:
    first = measured_profile().save(tmp_path / "p.json")
    loaded = load_profile(first, status_of=LIVE)
    entries = [e for es in loaded.entries.values() for e in es]
    assert entries and not any(entry_measured_here(e) for e in entries)
    origin = entries[0].origin
    assert origin.startswith("imported from ") and f"(file {first})" in origin
    again = load_profile(loaded.save(tmp_path / "q.json"), status_of=LIVE)
    assert all(e.origin == origin for es in again.entries.values() for e in es)
    assert all(
        e["origin"] == origin for e in json.loads((tmp_path / "q.json").read_text())["entries"]
    )
    m = Machine()
    with pytest.raises(ConfigError, match="imported"):
        loaded.add(tune(m, ModelBackend(m, "numpy", 50_000, 1_000_000)))


def test_on_load_a_counter_not_live_here_demotes_every_figure(tmp_path: Path) -> None:
    path = measured_profile().save(tmp_path / "p.json")
    loaded = load_profile(path, status_of=lambda name: CounterStatus.unavailable("no permission"))
    entries = [e for es in loaded.entries.values() for e in es]
    assert entries and all(e.provenance is Provenance.ESTIMATED for e in entries)
    assert all("not live on this host now" in e.reason for e in entries)
    other = load_profile(path, status_of=LIVE, host="another-host")
    assert not other.measured and "measured on host" in other.entries["1x64x64"][0].reason


def test_on_load_the_counter_is_probed_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import eoc_native.counters
    from eoc_native.autotune.profile import _status_here

    class Liar(ProbedCounter):
        name, min_window_ns = "liar", 0

        def read_uj(self) -> int:
            return 7

        def status(self) -> CounterStatus:
            return CounterStatus.live("it says so")

    survey = eoc_native.counters.Survey(whole_work=[Liar()])
    monkeypatch.setattr(eoc_native.counters, "survey", lambda **kw: survey)
    assert not _status_here("liar").is_live


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
    good = measured_profile().to_dict()
    entry = good["entries"][0]
    bad = tmp_path / "p.json"
    texts = [
        "not json",
        "[]",
        '{"version": 9}',
        '{"version": true}',
        '{"version": 1, "entries": [{"shape": "1x1"}]}',
        "[" * 100_000 + "]" * 100_000,
        '{"version": 1, "winners": {"1x64x64": 1' + "0" * 5000 + "}}",
        '{"version": 1, "entries": [], "x": NaN}',
    ]
    for change in (
        {"entries": {}},
        {"winners": ["mlx"]},
        {"winners": {"1x64x64": "numpy"}},  # not the joules-minimal backend
        {"provenance": {**good["provenance"], "extra": 1}},
        {"provenance": "host"},
        {"entries": [{**entry, "uj_per_op": "5"}, *good["entries"][1:]]},
        {"entries": [{**entry, "uj_per_op": 0}, *good["entries"][1:]]},
        {"entries": [{**entry, "provenance": 42}, *good["entries"][1:]]},
        {"entries": [{**entry, "shape": 5}, *good["entries"][1:]]},
        {"entries": [{**entry, "shape": "1X64X64"}, *good["entries"][1:]]},
        {"entries": [{**entry, "origin": ["x"]}, *good["entries"][1:]]},
        {"entries": [entry, *good["entries"]]},  # the same figure twice
    ):
        texts.append(json.dumps({**good, **change}))
    for text in texts:
        bad.write_text(text)
        with pytest.raises(InputError):
            load_profile(bad, status_of=LIVE)
    with pytest.raises(InputError):  # non-finite figures refused, not only by the JSON parser
        TuningProfile.from_dict({**good, "entries": [{**entry, "ns_per_op": float("nan")}]})


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_an_endless_file_is_refused_quickly() -> None:
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "from eoc.errors import InputTooLarge\n"
        "from eoc_native.autotune import load_profile\n"
        "try:\n    load_profile('/dev/zero')\n"
        "except InputTooLarge as exc:\n    print('refused:', exc.reason)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.startswith("refused:"), done.stderr[-500:]
    assert "larger than" in done.stdout and time.monotonic() - started < 30


# -- sealing: who signed it, and is that key trusted ------------------------------------------------


def _key() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _resigned(path: Path, key: bytes) -> str:
    """Alter the signed profile at ``path`` and sign it again with ``key``; the new signer."""
    doc = json.loads(path.read_text())
    doc["entries"][1]["uj_per_op"] = 1.0  # make mlx look 30,000x cheaper
    doc = sign(doc, key)
    path.write_text(json.dumps(doc))
    return str(doc["signature"]["public_key"])


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
    loaded = load_profile(path, status_of=LIVE)
    assert loaded.measured and loaded.signer == signer


def test_a_profile_re_signed_with_another_key_is_refused_by_a_trusted_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = _key()
    path = measured_profile().save(tmp_path / "p.json", sign_key=ours)
    trusted = verify(json.loads(path.read_text()))
    assert load_profile(path, status_of=LIVE, trusted_keys=[trusted]).signature.trusted is True  # type: ignore[union-attr]
    theirs = _resigned(path, _key())
    with pytest.raises(ReceiptMismatch, match=f"signed by key {theirs}"):
        load_profile(path, status_of=LIVE, trusted_keys=[trusted])
    with pytest.raises(ReceiptMismatch, match=theirs):
        describe_profile(json.loads(path.read_text()), [trusted])
    monkeypatch.setenv("EOC_TRUSTED_KEYS", f" {trusted.upper()} ,")
    with pytest.raises(ReceiptMismatch, match=theirs):
        load_profile(path, status_of=LIVE)
    monkeypatch.delenv("EOC_TRUSTED_KEYS")
    loaded = load_profile(path, status_of=LIVE)  # no trusted key: accepted, signer reported
    assert loaded.signer == theirs and loaded.signature.trusted is None  # type: ignore[union-attr]


def test_a_stripped_signature_is_refused_by_a_trusted_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _key()
    path = measured_profile().save(tmp_path / "p.json", sign_key=key)
    doc = json.loads(path.read_text())
    trusted = str(doc.pop("signature")["public_key"])
    path.write_text(json.dumps(doc))
    with pytest.raises(ReceiptMismatch, match="unsigned"):
        load_profile(path, status_of=LIVE, trusted_keys=[trusted])
    monkeypatch.setenv("EOC_TRUSTED_KEYS", trusted)
    with pytest.raises(ReceiptMismatch, match="unsigned"):
        load_profile(path, status_of=LIVE)
    monkeypatch.setenv("EOC_TRUSTED_KEYS", "not-a-key")  # a misspelt key never switches it off
    with pytest.raises(ConfigError, match="EOC_TRUSTED_KEYS"):
        load_profile(path, status_of=LIVE)


def test_describe_profile_says_which_key_signed_and_whether_it_is_trusted(
    tmp_path: Path,
) -> None:
    path = measured_profile().save(tmp_path / "p.json", sign_key=_key())
    doc = json.loads(path.read_text())
    signer = doc["signature"]["public_key"]
    lines, out = describe_profile(doc, [signer])
    assert lines[0].startswith("tuning profile consistent")
    assert f"signed by key {signer} — trusted (matches a configured key)" in lines[1]
    assert out["signer"] == signer and out["trusted"] is True and out["signed"] is True
    lines, out = describe_profile(doc, [])
    assert f"signed by key {signer} — not checked against a trusted key" in lines[1]
    assert out["trusted"] is None and "trusted (" not in "\n".join(lines)
    lines, out = describe_profile(measured_profile().to_dict(), None)
    assert "unsigned" in lines[1] and out["signer"] is None and out["signed"] is False


def test_eoc_verify_checks_a_profile_signature(tmp_path: Path) -> None:
    import io

    from eoc.cli.main import main

    path = measured_profile().save(tmp_path / "p.json", sign_key=_key())
    assert main(["verify", str(path)], out=io.StringIO()) == 0
    doc = json.loads(path.read_text())
    doc["entries"][0]["uj_per_op"] = 1.0
    path.write_text(json.dumps(doc))
    assert main(["verify", str(path)], out=io.StringIO()) == 1


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


def test_eoc_verify_names_the_profile_signer_and_refuses_an_untrusted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: `eoc verify` said "profile signature ok" for a profile re-signed by another key."""
    import io

    from eoc.cli.main import main
    from eoc_native.autotune.signing import public_key_hex, sign

    owner, attacker = _key(), _key()
    path = measured_profile().save(tmp_path / "p.json", sign_key=owner)
    doc = json.loads(path.read_text())
    doc["provenance"]["host"] = "a host it never ran on"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(sign(doc, attacker)))
    out = io.StringIO()
    assert main(["verify", str(forged)], out=out) == 0  # consistent, and it says who signed it
    assert public_key_hex(attacker) in out.getvalue()
    assert "not checked against a trusted key" in out.getvalue()
    monkeypatch.setenv("EOC_TRUSTED_KEYS", public_key_hex(owner))
    assert main(["verify", str(forged)], out=io.StringIO()) == 1
    assert main(["verify", str(path)], out=io.StringIO()) == 0
    assert (
        main(["verify", "--public-key", public_key_hex(attacker), str(path)], out=io.StringIO())
        == 1
    )
