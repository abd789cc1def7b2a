"""Browser benchmarks: time to first answer, and the cost of hits inside Pyodide.

    python bench/web.py [--loads 5] [--json]      # needs `make web` and Debian's chromium

* first answer: a fresh page opened at ``/?q=what+is+2%2B2`` boots Pyodide, installs the eoc
  wheel and answers; the page records ``performance.now()`` (ms since navigation started) at
  its first answer. Median over ``--loads`` page loads, each in a new browser context.
* inside Pyodide: median cost of a cache-hit ``Cascade.resolve`` and of a kv similarity hit,
  timed by Python in the page (batches timed with ``time.perf_counter_ns``), next to the same
  code run natively by this process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "web"))

from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from serve import DIST, make_server  # noqa: E402

# Defines measure(); run both in the page (Pyodide) and here (CPython).
HITS = r"""
import hashlib, json, statistics, time
from eoc import Cascade, Query

def median_ns(fn, batch, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        out.append((time.perf_counter_ns() - t0) / batch)
    return statistics.median(out)

def measure():
    cascade = Cascade()
    prompt = "what is the capital of Japan"
    cascade.resolve(prompt)
    assert cascade.resolve(prompt).stage.value == "cache"
    table = {hashlib.sha256(prompt.encode()).hexdigest(): "Tokyo"}
    kv = next(s for s in cascade.stages if s.stage.value == "kv")
    paraphrase = Query("whats the default port for postgresql, please?")
    hit = kv.lookup(paraphrase)
    assert hit is not None and hit.payload == "5432"
    return {
        "baseline_ns": median_ns(lambda: table[hashlib.sha256(prompt.encode()).hexdigest()], 2000, 15),
        "cache_hit_ns": median_ns(lambda: cascade.resolve(prompt), 2000, 15),
        "kv_similarity_hit_ns": median_ns(lambda: kv.lookup(paraphrase), 200, 15),
    }
"""


def run_natively() -> dict[str, float]:
    os.environ["EOC_EMBEDDER"] = "hashed"  # the browser's embedder, for a like-for-like comparison
    scope: dict[str, object] = {}
    exec(HITS, scope)
    return scope["measure"]()  # type: ignore[operator, no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    server = make_server(DIST, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    firsts: list[float] = []
    phases: list[dict[str, float]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.loads):
            context = browser.new_context()
            page = context.new_page()
            page.goto(site + "?q=what+is+2%2B2")
            page.wait_for_function(
                "window.eocTimings && window.eocTimings.firstAnswer", timeout=60_000
            )
            t = page.evaluate("window.eocTimings")
            firsts.append(t["firstAnswer"])
            phases.append({k: t[k] for k in ("start", "pyodide", "eoc", "firstAnswer")})
            context.close()
        page = browser.new_page()
        page.goto(site)
        page.wait_for_selector("body[data-state=ready]", timeout=60_000)
        code = HITS + "\njson.dumps(measure())"
        in_pyodide = json.loads(page.evaluate("code => window.eoc.pyodide.runPython(code)", code))
        browser.close()
    server.shutdown()
    native = run_natively()
    result = {
        "first_answer_ms": {
            "median": statistics.median(firsts),
            "min": min(firsts),
            "max": max(firsts),
        },
        "phases_ms_of_median_load": sorted(phases, key=lambda ph: ph["firstAnswer"])[
            len(phases) // 2
        ],
        "pyodide": in_pyodide,
        "native": native,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    f = result["first_answer_ms"]
    ph = result["phases_ms_of_median_load"]
    print(
        f"eoc browser benchmarks — {args.loads} page loads in Debian's Chromium, served from 127.0.0.1"
    )
    print(
        f"page load to first answer: median {f['median'] / 1000:.2f} s (min {f['min'] / 1000:.2f}, "
        f"max {f['max'] / 1000:.2f}; target <= 5 s)"
    )
    print(
        f"  median load: script start {ph['start']:.0f} ms, Pyodide booted {ph['pyodide']:.0f} ms, "
        f"eoc installed {ph['eoc']:.0f} ms, answered {ph['firstAnswer']:.0f} ms"
    )
    print("inside Pyodide vs native CPython (medians):")
    for key, label in (
        ("baseline_ns", "dict lookup + SHA-256   "),
        ("cache_hit_ns", "cache hit resolve       "),
        ("kv_similarity_hit_ns", "kv similarity hit       "),
    ):
        print(
            f"  {label}: Pyodide {in_pyodide[key] / 1000:8.2f} µs   native {native[key] / 1000:8.2f} µs"
        )
    print("  (target: cache hit inside Pyodide <= 10 µs)")


if __name__ == "__main__":
    main()
