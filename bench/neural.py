"""Neural benchmarks: eoc's GGUF runner against llama.cpp on the same model file, in one run.

    python bench/neural.py            # full run (a few minutes on 2 cores)
    python bench/neural.py --quick    # a smoke test: fewer tokens, one repeat
    python bench/neural.py --json     # machine-readable
    python bench/neural.py --threads 1   # one thread per engine (a busy, shared machine)
    python bench/neural.py --one ENGINE --json   # one engine only (what the main run spawns)
    python bench/neural.py --record      # write docs/figures/neural.json (--threads N:
                                         # neural-threads-N.json), which the docs cite

Engines: eoc's runner on each matmul backend that runs here (``cpu-quant``, ``numpy``,
``mlx``) and llama.cpp (``llama_cpp.Llama``, n_ctx=512, n_threads = the core count). Each is
measured in its own subprocess, so the peak RSS of one is not counted for another. Both get
the same prompt token ids (128 of them, built with eoc's tokenizer from the same GGUF file).

Threads: each subprocess gets EOC_THREADS (eoc's kernels), OPENBLAS_NUM_THREADS and
NUMBA_NUM_THREADS = the core count (unless set) and llama.cpp n_threads = the core count;
``--threads N`` sets all four. Where
other work holds a core, thread pools that spin while they wait (OpenBLAS, numba's, llama.cpp's)
wait on each other's descheduled threads and every engine slows by 10x or more, so on a shared
machine ``--threads 1`` is the fair comparison. The load average before and after is reported.

Figures, per engine:

* load: opening the model plus its first one-token forward (eoc prepares each backend's copy
  of a weight and compiles its kernels on first use, so the bare open would flatter it);
* prefill: the time of the 128-token prompt, and tokens/s (median over the repeats);
* decode: ms per token of greedy decoding after the prompt (the median over the repeats of
  the time of all steps / steps); each step is one forward of one token and an argmax, the
  same work for both engines (llama.cpp through ``Llama.eval`` and its logits);
* peak RSS: ``ru_maxrss`` of the engine's subprocess (its baseline, before the model is
  opened, is shown too);
* µJ per token (eoc only): ESTIMATED from the matmuls the dispatcher counted
  (:func:`eoc_native.llm.energy.estimate`), decode steps only; no counter is read.

Timings are medians of repeated runs (time.perf_counter_ns), so one slow run does not move them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EOC_BACKENDS = ("cpu-quant", "numpy", "mlx")
LLAMA_CPP = "llama.cpp"
ENGINES = (*EOC_BACKENDS, LLAMA_CPP)
N_CTX = 512
PROMPT_TOKENS = 128
# the targets, eoc / llama.cpp
TARGETS = {"decode_ms_per_token": 2.0, "prefill_s": 2.0, "peak_rss_mb": 2.0}
DECODE_AIM = 1.2
AIMS = {"decode_ms_per_token": DECODE_AIM, "peak_rss_mb": 1.3}  # issue 26's, eoc / llama.cpp
FULL = (32, 3)  # decode tokens, repeats
QUICK = (4, 1)
PROMPT_TEXT = (
    "The history of energy measurement begins with the steam engine. Engineers wanted to know "
    "how much coal a machine burned for the work it did, and so the joule, the watt and the "
    "calorie were defined and compared. Today the same question is asked of computers: how "
    "many joules does one answer cost, and was that figure measured or only estimated? "
)


THREAD_VARS = ("EOC_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
"""eoc's model threads (its C kernels' pool: ``eoc_native.llm.threads``), BLAS's and numba's."""


def threads() -> int:
    """Threads per engine: ``$EOC_BENCH_THREADS`` (what ``--threads`` sets), else the cores."""
    return int(os.environ.get("EOC_BENCH_THREADS") or os.cpu_count() or 1)


def child_env(n: int | None) -> dict[str, str]:
    """The environment of an engine's subprocess: BLAS and numba threads = ``n`` if given,
    else those already set, else the core count."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        if n is not None:
            env[var] = str(n)
        else:
            env.setdefault(var, str(threads()))
    if n is not None:
        env["EOC_BENCH_THREADS"] = str(n)
    return env


def model_path() -> Path:
    from eoc_native.llm.backend import resolve_model_path

    return resolve_model_path(None)


def prompt_ids(n: int = PROMPT_TOKENS) -> list[int]:
    """Exactly ``n`` token ids of plain text, by eoc's tokenizer of the model file."""
    from eoc_native.llm.gguf import GGUFFile
    from eoc_native.llm.tokenizer import GGUFTokenizer

    tok = GGUFTokenizer(GGUFFile(model_path()).metadata)
    ids: list[int] = []
    while len(ids) < n:
        ids = tok.encode(PROMPT_TEXT * (n // 16 + 1 + len(ids) // 64))
    return ids[:n]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_rss_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class EocEngine:
    def __init__(self, backend: str) -> None:
        self.backend = backend

    def open(self) -> None:
        from eoc_native.autotune.dispatch import Dispatcher
        from eoc_native.llm.generate import load

        self.dispatcher = Dispatcher(default=self.backend)
        self.model, _ = load(model_path(), n_ctx=N_CTX, dispatcher=self.dispatcher)

    def reset(self) -> None:
        self.model.reset()

    def eval(self, ids: list[int]) -> int:
        import numpy as np

        return int(np.argmax(self.model.forward(ids)[-1]))

    def ran_on(self) -> list[str]:
        return sorted({b for b, _ in self.dispatcher.calls})


class LlamaCppEngine:
    def open(self) -> None:
        import llama_cpp

        self.llm = llama_cpp.Llama(
            model_path=str(model_path()),
            n_ctx=N_CTX,
            n_threads=threads(),
            n_threads_batch=threads(),
            verbose=False,
        )
        self.n_vocab = self.llm.n_vocab()

    def reset(self) -> None:
        self.llm.reset()

    def eval(self, ids: list[int]) -> int:
        import numpy as np

        self.llm.eval(ids)
        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.n_vocab,))
        return int(np.argmax(logits))


def why_not(engine: str) -> str | None:
    """Why ``engine`` cannot run here, or None."""
    if engine == LLAMA_CPP:
        import importlib.util

        if importlib.util.find_spec("llama_cpp") is None:
            return 'llama_cpp is not installed (pip install "llama-cpp-python==0.3.36")'
        return None
    from eoc_native.autotune.dispatch import Dispatcher

    try:
        Dispatcher(default=engine)  # refuses a backend that cannot run here, saying why
    except Exception as exc:  # ConfigError with the reason, or a broken install
        return getattr(exc, "reason", None) or str(exc) or type(exc).__name__
    return None


def measure(engine: str, ids: list[int], decode_tokens: int, repeats: int) -> dict[str, Any]:
    """Every figure of one engine (run in its own process)."""
    baseline = current_rss_mb()
    eng: Any = LlamaCppEngine() if engine == LLAMA_CPP else EocEngine(engine)
    t0 = time.perf_counter_ns()
    eng.open()
    open_s = (time.perf_counter_ns() - t0) / 1e9
    eng.reset()
    eng.eval(ids[:1])  # first use: backend copies, JIT compilation, buffers
    load_s = (time.perf_counter_ns() - t0) / 1e9
    prefill, decode, tokens = [], [], []
    calls_before = calls_after = None
    for i in range(repeats):
        eng.reset()
        t0 = time.perf_counter_ns()
        token = eng.eval(ids)
        t1 = time.perf_counter_ns()
        produced = [token]
        if i == repeats - 1 and engine != LLAMA_CPP:
            calls_before = eng.dispatcher.calls.copy()
        t2 = time.perf_counter_ns()
        for _ in range(decode_tokens):
            token = eng.eval([token])
            produced.append(token)
        t3 = time.perf_counter_ns()
        if i == repeats - 1 and engine != LLAMA_CPP:
            calls_after = eng.dispatcher.calls.copy()
        prefill.append((t1 - t0) / 1e9)
        decode.append((t3 - t2) / 1e6 / decode_tokens)
        tokens = produced
    prefill_s = statistics.median(prefill)
    row: dict[str, Any] = {
        "engine": engine,
        "open_s": open_s,
        "load_s": load_s,
        "prefill_s": prefill_s,
        "prefill_tok_s": len(ids) / prefill_s,
        "decode_ms_per_token": statistics.median(decode),
        "decode_tok_s": 1000 / statistics.median(decode),
        "prefill_runs_s": prefill,
        "decode_runs_ms_per_token": decode,
        "peak_rss_mb": peak_rss_mb(),
        "baseline_rss_mb": baseline,
        "greedy_tokens": tokens,
    }
    if engine != LLAMA_CPP:
        from eoc_native.llm.energy import estimate

        assert calls_before is not None and calls_after is not None
        uj, basis = estimate(calls_after - calls_before)
        row["uj_per_token"] = uj / decode_tokens
        row["uj_per_token_provenance"] = "ESTIMATED"
        row["uj_basis"] = basis
        row["ran_on"] = eng.ran_on()
    return row


def run_child(
    engine: str, ids: list[int], quick: bool, timeout: float, n_threads: int | None
) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", engine, "--json"]
    cmd += ["--ids", ",".join(map(str, ids))]
    if quick:
        cmd.append("--quick")
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=child_env(n_threads),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"engine": engine, "skipped": f"did not finish in {timeout:.0f} s"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"engine": engine, "skipped": f"failed (exit {done.returncode}): {tail}"}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def ratios(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """eoc / llama.cpp per eoc backend and target figure, each met or not."""
    ref = rows.get(LLAMA_CPP, {})
    out: dict[str, dict[str, Any]] = {}
    if "skipped" in ref or not ref:
        return out
    for name in EOC_BACKENDS:
        row = rows.get(name, {})
        if "skipped" in row or not row:
            continue
        out[name] = {}
        for key, target in TARGETS.items():
            ratio = row[key] / ref[key]
            entry: dict[str, Any] = {"ratio": ratio, "target": target, "met": ratio <= target}
            if key in AIMS:
                entry["aim"] = AIMS[key]
                entry["aim_met"] = ratio <= AIMS[key]
            out[name][key] = entry
    return out


def one(args: argparse.Namespace) -> None:
    ids = [int(x) for x in args.ids.split(",")] if args.ids else prompt_ids()
    decode_tokens, repeats = QUICK if args.quick else FULL
    why = why_not(args.one)
    if why:
        result: dict[str, Any] = {"engine": args.one, "skipped": why}
    else:
        result = measure(args.one, ids, decode_tokens, repeats)
    print(json.dumps(result, indent=None if args.json else 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="4 decode tokens, one repeat")
    parser.add_argument("--one", choices=ENGINES, help="measure one engine, in this process")
    parser.add_argument("--ids", help=argparse.SUPPRESS)  # the prompt ids, from the main run
    parser.add_argument(
        "--engines",
        default=",".join(ENGINES),
        help="comma-separated subset of " + ",".join(ENGINES),
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="threads for every engine (BLAS, numba, llama.cpp); default: the core count, or "
        "OPENBLAS_NUM_THREADS / NUMBA_NUM_THREADS where set. On a busy machine, 1 keeps "
        "spinning thread pools from waiting on each other",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/neural.json (neural-threads-N.json with "
        "--threads N), which the docs cite (not with --quick, --one or --engines)",
    )
    args = parser.parse_args()
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.record and (args.quick or args.one or args.engines != ",".join(ENGINES)):
        parser.error(
            "--record records the full run of every engine: leave out --quick, --one, --engines"
        )
    if args.threads is not None:  # before numpy, numba or llama.cpp is imported here
        os.environ.update(child_env(args.threads))
    if args.one:
        one(args)
        return
    ids = prompt_ids()
    assert len(ids) == PROMPT_TOKENS
    engines = args.engines.split(",")
    for engine in engines:
        if engine not in ENGINES:
            parser.error(f"unknown engine {engine!r}")
    env = child_env(args.threads)
    load_before = os.getloadavg()
    timeout = 300.0 if args.quick else 900.0
    rows = {engine: run_child(engine, ids, args.quick, timeout, args.threads) for engine in engines}
    decode_tokens, repeats = QUICK if args.quick else FULL
    result = {
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "threads": {var: int(env[var]) for var in THREAD_VARS}
        | {"llama_cpp_n_threads": int(env.get("EOC_BENCH_THREADS") or threads())},
        # a shared machine moves every figure: the 1-minute load average around the run
        "load_avg_1min": {"before": load_before[0], "after": os.getloadavg()[0]},
        "model": str(model_path()),
        "prompt_tokens": len(ids),
        "decode_tokens": decode_tokens,
        "repeats": repeats,
        "quick": args.quick,
        "engines": rows,
        "ratios": ratios(rows),
    }
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import record

        record(
            "neural",
            result,
            file="neural" if args.threads is None else f"neural-threads-{args.threads}",
        )
    if args.json:
        print(json.dumps(result, indent=2))
        return
    report(result)


def report(result: dict[str, Any]) -> None:
    rows = result["engines"]
    print(
        f"eoc neural benchmarks — {result['machine']}, {result['cores']} cores, "
        f"CPython {platform.python_version()}"
    )
    print(
        f"model {Path(result['model']).name}; prompt {result['prompt_tokens']} tokens, then "
        f"{result['decode_tokens']} greedy tokens; medians of {result['repeats']} run(s)"
    )
    load = result["load_avg_1min"]
    print(
        f"threads per engine: {result['threads']}; load average (1 min) "
        f"{load['before']:.2f} before, {load['after']:.2f} after"
    )
    head = (
        f"  {'engine':<14}{'load s':>8}{'prefill s':>11}{'tok/s':>8}"
        f"{'decode ms/tok':>15}{'peak RSS MB':>13}{'µJ/tok (est.)':>15}"
    )
    print(head)
    for name, row in rows.items():
        label = name if name == LLAMA_CPP else f"eoc {name}"
        if "skipped" in row:
            print(f"  {label:<14}not run: {row['skipped']}")
            continue
        uj = f"{row['uj_per_token']:.0f}" if "uj_per_token" in row else "—"
        print(
            f"  {label:<14}{row['load_s']:8.2f}{row['prefill_s']:11.3f}{row['prefill_tok_s']:8.0f}"
            f"{row['decode_ms_per_token']:15.2f}{row['peak_rss_mb']:13.0f}{uj:>15}"
        )
    base = [r["baseline_rss_mb"] for r in rows.values() if r.get("baseline_rss_mb")]
    if base:
        print(f"  (RSS before opening the model: {min(base):.0f}–{max(base):.0f} MB per process)")
    print("  µJ/token: ESTIMATED from the matmuls run × documented nJ per multiply-add")
    if not result["ratios"]:
        print("no ratios: llama.cpp did not run")
        return
    print("eoc / llama.cpp (target: at most the figure shown):")
    names = {"decode_ms_per_token": "decode ms/tok", "prefill_s": "prefill", "peak_rss_mb": "RSS"}
    for name, figures in result["ratios"].items():
        parts = []
        for key, e in figures.items():
            mark = "met" if e["met"] else "NOT met"
            extra = ""
            if "aim" in e:
                extra = f", aim {e['aim']}× {'met' if e['aim_met'] else 'not met'}"
            parts.append(f"{names[key]} {e['ratio']:.2f}× (≤{e['target']:.0f}× {mark}{extra})")
        print(f"  eoc {name:<10}: " + "; ".join(parts))
    same = {
        n: r["greedy_tokens"] == rows[LLAMA_CPP].get("greedy_tokens")
        for n, r in rows.items()
        if n != LLAMA_CPP and "greedy_tokens" in r
    }
    if same:
        print(
            "greedy tokens equal to llama.cpp's: "
            + ", ".join(f"{n} {'yes' if s else 'no'}" for n, s in same.items())
        )


if __name__ == "__main__":
    main()
