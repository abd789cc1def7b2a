"""`eoc autotune`: refuses before writing anything unless every figure was measured."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import eoc.meter.detection as detection
from eoc.cli.main import main
from eoc.meter import Detection
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import probe
from eoc.testing import FakeCounter


@pytest.fixture(autouse=True)
def _no_trusted_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EOC_TRUSTED_KEYS", raising=False)


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_without_a_live_counter_it_refuses_and_creates_no_file(tmp_path: Path) -> None:
    target = tmp_path / "profile.json"
    code, text = run("autotune", "--small", "--out", str(target))
    assert code == 1 and not target.exists()
    assert str(target) in text and "reason" in text and "counter: stub" in text
    code, text = run("autotune", "--small", "--json", "--out", str(target))
    doc = json.loads(text)
    assert (
        code == 1
        and doc["refused"]
        and doc["file"] == str(target)
        and doc["status"].startswith("UNAVAILABLE")
    )


def test_a_live_counter_that_does_not_see_the_work_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    flat = FakeCounter(
        watts=5.0, clock=time.perf_counter_ns, name="flat"
    )  # live, but blind to work
    monkeypatch.setattr(
        detection, "detect_all", lambda *a: Detection(flat, ((flat, CounterStatus.live()),))
    )
    import eoc_native.cli

    monkeypatch.setattr(
        eoc_native.cli, "detect_all", lambda *a: Detection(flat, ((flat, CounterStatus.live()),))
    )
    target = tmp_path / "profile.json"
    code, text = run("autotune", "--small", "--seconds", "0.1", "--out", str(target))
    assert code == 1 and not target.exists()
    assert "no comparison" in text and "within the noise" in text


def test_a_counter_that_only_claims_to_be_live_is_probed_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import eoc_native.cli

    liar = FakeCounter.frozen(7, name="liar")  # status() says LIVE; it never advances
    found = Detection(liar, ((liar, CounterStatus.live()),))  # no probe of eoc's handed on
    monkeypatch.setattr(eoc_native.cli, "detect_all", lambda *a: found)
    target = tmp_path / "profile.json"
    code, text = run("autotune", "--small", "--seconds", "0.1", "--json", "--out", str(target))
    doc = json.loads(text)
    assert code == 1 and doc["refused"] and not target.exists()
    assert "probed by eoc: FROZEN" in doc["status"] and "not live" in doc["reason"]


def test_with_a_counter_that_sees_the_work_it_writes_a_sealed_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu_time_counter
) -> None:  # type: ignore[no-untyped-def]
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    import eoc_native.cli

    key = tmp_path / "key.pem"
    key.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    c = cpu_time_counter
    seen = probe(c)  # eoc's own probe, handed on by detection and used by the tuner
    found = Detection(c, ((c, seen.status),), "", (seen,))
    monkeypatch.setattr(eoc_native.cli, "detect_all", lambda *a: found)
    target = tmp_path / "profile.json"
    code, text = run(
        "autotune",
        "--small",
        "--seconds",
        "0.1",
        "--json",
        "--out",
        str(target),
        "--sign-key",
        str(key),
    )
    assert code == 0, text
    doc = json.loads(text)
    assert [s["shape"] for s in doc["shapes"]] == ["1x1024x1024", "64x1024x1024"]
    assert all(s["winner"] for s in doc["shapes"])
    assert doc["counter_kind"] == "fake" and doc["liveness"] == seen.describe()
    assert doc["signer"] == json.loads(target.read_text())["signature"]["public_key"]
    assert json.loads(target.read_text())["provenance"]["counter_kind"] == "fake"
    assert run("verify", str(target))[0] == 0


def test_a_bad_signing_key_is_a_usage_error_before_any_tuning(tmp_path: Path) -> None:
    bad = tmp_path / "key.pem"
    bad.write_text("not a key")
    assert (
        run("autotune", "--small", "--sign-key", str(bad), "--out", str(tmp_path / "p.json"))[0]
        == 2
    )
    assert run("autotune", "--small", "--sign-key", str(tmp_path / "absent.pem"))[0] == 2
    assert run("autotune", "--seconds", "0")[0] == 2
