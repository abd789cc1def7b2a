"""Browser benchmarks: time to first answer, the cost of hits inside Pyodide, and the model in
the page against the same model natively.

    python bench/web.py [--loads 5] [--tokens 64] [--no-model] [--json] [--record]
    # needs `make web` and Debian's chromium; the native rows need the native extra and
    # llama-cpp-python (make test installs both)

* first answer: a fresh page opened at ``/?q=what+is+2%2B2`` boots Pyodide, installs the eoc
  wheel and answers; the page records ``performance.now()`` (ms since navigation started) at
  its first answer. Median over ``--loads`` page loads, each in a new browser context.
* inside Pyodide: median cost of a cache-hit ``Cascade.resolve`` and of a kv similarity hit,
  timed by Python in the page (batches timed with ``time.perf_counter_ns``), next to the same
  code run natively by this process.
* the model in the page (SmolLM2-135M, llama.cpp in WebAssembly): loaded by a first question,
  then asked :data:`PROMPT` (never seen, so no prompt cache): the time from the question to the
  first token, and decode tokens/s ((tokens - 1) over the time from the first token to the
  last), greedy, ``--tokens`` at most. The same prompt, the same way, natively in this process
  after the browser has closed: eoc's runner (``eoc_native.llm.backend.LocalModel``) and
  llama.cpp (``llama_cpp.Llama.create_chat_completion``, n_threads = the page's threads), each
  loaded and warmed by another question first. Each row's text is printed, so one can see they
  are the same model's answer.

``--record`` writes the result to ``docs/figures/web.json``, which the docs cite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "web"))

from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from record import record  # noqa: E402
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
    paraphrase = Query("whats the speed of light, please?")
    hit = kv.lookup(paraphrase)
    assert hit is not None and hit.payload.startswith("299792458"), hit
    return {
        "baseline_ns": median_ns(lambda: table[hashlib.sha256(prompt.encode()).hexdigest()], 2000, 15),
        "cache_hit_ns": median_ns(lambda: cascade.resolve(prompt), 2000, 15),
        "kv_similarity_hit_ns": median_ns(lambda: kv.lookup(paraphrase), 200, 15),
    }
"""


PROMPT = "Write one short paragraph about lighthouses."
WARM = "Name three colours."

# Asks through the cascade (cheap tiers first, then the model in the page) and times the pieces.
ASK_MODEL = """async (q) => {
  const m = window.eocPageModel;
  const shown = m.listeners.piece;
  let first = null;
  const t0 = performance.now();
  m.on("piece", (p, t) => { if (first === null) first = performance.now() - t0; shown(p, t); });
  try {
    const doc = await window.eoc.askAsync(q);
    return { doc, first_ms: first, total_ms: performance.now() - t0, reply: m.last,
             threads: m.threads, multithread: m.multithread, load_ms: m.loadMs };
  } finally { m.on("piece", shown); }
}"""


def page_model(browser: Any, site: str, tokens: int) -> dict[str, Any]:
    page = browser.new_page()
    page.goto(f"{site}?max_tokens={tokens}")
    page.wait_for_selector("body[data-state=ready]", timeout=60_000)
    warm = page.evaluate(ASK_MODEL, WARM)  # loads the model
    got = page.evaluate(ASK_MODEL, PROMPT)
    page.close()
    if got["doc"].get("stage") != "neural":
        raise SystemExit(f"bench/web.py: the page answered {PROMPT!r} from {got['doc']}")
    reply = got["reply"]
    n = reply["completion_tokens"]
    span = (reply["last_token_ms"] - reply["first_token_ms"]) / 1000
    return {
        "load_ms": warm["load_ms"],
        "threads": got["threads"],
        "first_token_ms": got["first_ms"],
        "tokens": n,
        "decode_tokens_per_s": (n - 1) / span if n > 1 and span > 0 else None,
        "text": got["doc"]["payload"],
    }


def _timed(stream: Any) -> tuple[float | None, float | None, int, str]:
    """(first piece s, last piece s, pieces, text) of an iterator of text pieces."""
    t0 = time.perf_counter()
    first = last = None
    n, text = 0, ""
    for piece in stream:
        if not piece:
            continue
        now = time.perf_counter() - t0
        first = now if first is None else first
        last = now
        n += 1
        text += piece
    return first, last, n, text


def _row(first: float | None, last: float | None, n: int, text: str) -> dict[str, Any]:
    span = (last or 0) - (first or 0)
    return {
        "first_token_ms": None if first is None else first * 1000,
        "tokens": n,
        "decode_tokens_per_s": (n - 1) / span if n > 1 and span > 0 else None,
        "text": text,
    }


def native_eoc(tokens: int) -> dict[str, Any]:
    from eoc_native.llm.backend import LocalModel

    model = LocalModel(max_tokens=tokens)
    model.generate(WARM)  # loads, prepares and compiles

    stamps: list[float] = []  # when each piece came, from the question
    t0 = time.perf_counter()
    reply = model.generate(PROMPT, on_piece=lambda p: stamps.append(time.perf_counter() - t0))
    first, last = (stamps[0], stamps[-1]) if stamps else (None, None)
    return _row(first, last, reply.tokens_out or 0, reply.text)


def native_llama_cpp(tokens: int, threads: int) -> dict[str, Any]:
    from llama_cpp import Llama

    from eoc_native.llm.backend import default_model_path

    llm = Llama(str(default_model_path()), n_ctx=2048, n_threads=threads, verbose=False)
    ask = [{"role": "user", "content": WARM}]
    llm.create_chat_completion(ask, max_tokens=tokens, temperature=0.0)
    stream = llm.create_chat_completion(
        [{"role": "user", "content": PROMPT}], max_tokens=tokens, temperature=0.0, stream=True
    )
    return _row(*_timed(c["choices"][0]["delta"].get("content", "") for c in stream))


def run_natively() -> dict[str, float]:
    os.environ["EOC_EMBEDDER"] = "hashed"  # the browser's embedder, for a like-for-like comparison
    os.environ["EOC_MODEL"] = "none"  # the hits need no model
    scope: dict[str, object] = {}
    exec(HITS, scope)
    return scope["measure"]()  # type: ignore[operator, no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--tokens", type=int, default=64, help="most tokens of the model's answer")
    parser.add_argument("--no-model", action="store_true", help="leave out the model rows")
    parser.add_argument("--dist", type=Path, default=DIST, help="the built page (web/dist)")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/web.json, which the docs cite (not with "
        "--no-model or --dist)",
    )
    args = parser.parse_args()
    if args.loads < 1 or args.tokens < 1:
        parser.error("--loads and --tokens take a count of 1 or more")
    if args.record and (args.no_model or args.dist != DIST):
        parser.error(
            "--record records this checkout's page with its model: leave out --no-model, --dist"
        )
    from playwright.sync_api import sync_playwright

    server = make_server(args.dist, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    # the page's defaults: a page with a model of its own loads it only when a question needs it
    has_model = "model" in json.loads((args.dist / "manifest.json").read_text())
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
        in_page = None if args.no_model or not has_model else page_model(browser, site, args.tokens)
        browser.close()
    server.shutdown()
    native = run_natively()
    model: dict[str, Any] | None = None
    if in_page is not None:
        model = {
            "page": in_page,
            "eoc": native_eoc(args.tokens),
            "llama.cpp": native_llama_cpp(args.tokens, in_page["threads"]),
            "load_average": os.getloadavg(),
        }
        compare_to_page(model)
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
        "model": model,
    }
    if args.record:
        record("web", result)
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
    if model is None:
        return
    pg = model["page"]
    print(
        f"the model in the page (SmolLM2-135M Q4_1, llama.cpp in WebAssembly, {pg['threads']} "
        f"thread{'s' if pg['threads'] != 1 else ''}; loaded in {pg['load_ms'] / 1000:.1f} s), "
        f"{PROMPT!r}, greedy, at most {args.tokens} tokens; load average "
        + ", ".join(f"{x:.2f}" for x in model["load_average"])
    )
    for name in ("page", "eoc", "llama.cpp"):
        row = model[name]
        rate = row["decode_tokens_per_s"]
        ratio = "-" if row["decode_vs_page"] is None else f"{row['decode_vs_page']:.2f}"
        label = {"page": "in the page", "eoc": "eoc's runner", "llama.cpp": "llama.cpp"}[name]
        print(
            f"  {label:13}: first token {row['first_token_ms']:7.0f} ms after the question, "
            f"decode {rate or 0:5.1f} tokens/s ({ratio}× the page's), {row['tokens']} tokens"
        )
    for name in ("eoc", "llama.cpp"):
        print(
            f"  {name} said the page's first {model[name]['same_words_as_page']} words of "
            f"{model['page']['words']} (greedy; the engines' arithmetic differs in "
            "the last bits, so a near tie can go another way)"
        )


def compare_to_page(model: dict[str, Any]) -> None:
    """Add to each engine's row its decode rate over the page's (``decode_vs_page``) and how
    many of the page's first words it said too (``same_words_as_page``)."""
    page = model["page"]
    words = page["text"].split()
    for name in ("page", "eoc", "llama.cpp"):
        row = model[name]
        rate, base = row["decode_tokens_per_s"], page["decode_tokens_per_s"]
        row["decode_vs_page"] = rate / base if rate and base else None
        same = 0
        for a, b in zip(words, row["text"].split(), strict=False):
            if a != b:
                break
            same += 1
        row["same_words_as_page"] = same
        row["words"] = len(row["text"].split())


if __name__ == "__main__":
    main()
