"""``eoc query`` and ``eoc meter`` with the installed model (SmolLM2-135M-Instruct).

Kept apart from test_model_backend.py (the tiny random model) because each run loads the real
model: scripts/falsify.py runs the fast file for every break in native/eoc_native/llm/.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")

from tests.native.smollm2 import needs_smollm2
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model

pytestmark = needs_smollm2


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)


def test_eoc_query_runs_the_installed_model_and_streams_it(tmp_path: Path) -> None:
    env = {"EOC_EMBEDDER": "hashed", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "eoc", "query", "--json", "--max-tokens", "24", "Name a colour."],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["stage"] == "neural" and doc["payload"].strip()
    assert "No language model" not in doc["payload"]
    assert doc["tokens"]["out"] > 0 and doc["cost"]["provenance"] == "estimated"
    assert "SmolLM2" in doc["cost"]["basis"]


def test_eoc_query_model_flag_and_meter_name_the_model(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc.cli.main import main

    monkeypatch.delenv("EOC_MODEL")
    out = io.StringIO()
    assert main(["query", "--json", "--model", str(tiny), "say something"], out=out) == 0
    assert json.loads(out.getvalue())["cost"]["basis"].startswith(f"local:{tiny.name}")
    out = io.StringIO()
    assert main(["query", "--model", str(tiny.parent / "absent.gguf"), "hi there"], out=out) == 2
    out = io.StringIO()
    assert main(["meter", "--seconds", "0.05", "--json"], out=out) == 0
    neural = json.loads(out.getvalue())["neural"]
    assert "SmolLM2-135M-Instruct" in neural["neural model"]
    assert "cpu-quant" in neural["neural dispatch"] and "numpy" in neural["neural compute backends"]


@pytest.mark.parametrize(("choice", "keeper"), [("c", "eoc"), ("numba", "numba")])
def test_a_first_run_says_it_compiles_the_kernels_and_a_later_one_does_not(
    tiny: Path, tmp_path: Path, choice: str, keeper: str
) -> None:
    """Progress on stderr while something slow happens the first time: the kernels compile once
    (the C kernels into eoc's cache, numba's into its own; here fresh ones), and the next run
    says nothing of it."""
    from eoc_native.quant import cbuild

    cc = cbuild.compiler()
    if choice == "c" and cc is None:
        pytest.skip("no C compiler here")
    # a compiler of its own (the same one, by another file): a build made at install is not its
    wrapper = tmp_path / "cc-of-this-test"
    wrapper.write_text(f'#!/bin/sh\nexec {cc} "$@"\n')
    wrapper.chmod(0o755)
    env = {
        "EOC_EMBEDDER": "hashed",
        "EOC_KERNELS": choice,
        "CC": str(wrapper),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        # the code under test (scripts/falsify.py runs a copy, found through PYTHONPATH)
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
    }
    ask = [sys.executable, "-m", "eoc", "query", "--no-store", "--model", str(tiny)]
    ask += ["--max-tokens", "2", "why is the sky blue"]
    said = []
    for _ in range(2):
        run = subprocess.run(ask, capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr
        said.append(run.stderr)
    line = f"compiling the matmul kernels: the first run only ({keeper} keeps them)\n"
    assert line in said[0] and "(0%)" not in said[0]
    assert "loading tiny.gguf: layer" in said[0]
    assert "compiling" not in said[1] and "loading tiny.gguf" in said[1]
