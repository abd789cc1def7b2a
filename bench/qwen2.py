"""eoc's runner against llama.cpp on the judge model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M), side
by side in one run.

    python bench/qwen2.py [--decode N] [--threads N] [--json]

Both run the same joined file (:func:`eoc_native.llm.parts.joined_model_path`) on the same
chat-templated prompt of about 90 tokens, with the same thread count:

* load: eoc's first load (a fresh layout cache: the K-quants rewritten into kernel blocks and
  tiled into the layout file) and a later one (the layout file mapped), llama.cpp's load;
* prefill: the prompt run and its next-token logits read (eoc: the whole row, and the two ids a
  yes/no judge reads, ``Llama.forward(ids, logit_ids=[yes, no])``);
* decode: milliseconds a token over ``--decode`` greedy tokens.

Each figure is the best of ``--repeat`` runs (timing on a shared machine: the least disturbed),
printed with eoc / llama.cpp; the output projection alone (one row: every logit, or the two
``logit_ids``) is the best of 10.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTION_A = "How do I reverse a list in Python without changing the original list?"
QUESTION_B = "What is the way to get a reversed copy of a Python list, leaving the list as it is?"
PROMPT = (
    "Do two questions ask for the same thing, so that one answer serves both?\n"
    f"Question A: {QUESTION_A}\nQuestion B: {QUESTION_B}\n"
    "Do A and B ask the same thing? Answer yes or no."
)


def _best(runs: int, step: Any) -> float:
    """The least seconds ``step()`` took in ``runs`` runs."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_eoc(
    path: Path, ids: list[int], yes_no: list[int], args: argparse.Namespace
) -> dict[str, float]:
    import numpy as np

    from eoc_native.llm.generate import load
    from eoc_native.llm.layout_cache import LayoutCache

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="eoc-bench-layouts-") as root:
        t0 = time.perf_counter()
        model, _ = load(
            path, n_ctx=512, layouts=LayoutCache(path, Path(root)), threads=args.threads
        )
        out["load_first_s"] = time.perf_counter() - t0
        del model
        t0 = time.perf_counter()
        model, _ = load(
            path, n_ctx=512, layouts=LayoutCache(path, Path(root)), threads=args.threads
        )
        out["load_cached_s"] = time.perf_counter() - t0

        def prefill(**kw: Any) -> None:
            model.reset()
            model.forward(ids, **kw)

        # the output projection alone, one row: what logit_ids leaves out of every prefill
        x = np.ones((1, model.args.dim), np.float32)
        picked = np.asarray(yes_no, dtype=np.intp)
        out["head_all_ms"] = _best(10, lambda: model.dispatcher.apply(x, model.output)) * 1e3
        out["head_two_ms"] = _best(10, lambda: model.output.weight.columns(picked)) * 1e3
        out["prefill_s"] = _best(args.repeat, prefill)
        out["prefill_two_logits_s"] = _best(args.repeat, lambda: prefill(logit_ids=yes_no))
        model.reset()
        row = model.forward(ids)[0]
        t0 = time.perf_counter()
        for _ in range(args.decode):
            row = model.forward([int(np.argmax(row))])[0]
        out["decode_ms"] = (time.perf_counter() - t0) / args.decode * 1e3
    return out


def bench_llama_cpp(path: Path, ids: list[int], args: argparse.Namespace) -> dict[str, float]:
    import numpy as np
    from llama_cpp import Llama

    out: dict[str, float] = {}
    threads = args.threads or os.cpu_count() or 1
    t0 = time.perf_counter()
    ref = Llama(
        model_path=str(path),
        n_ctx=512,
        n_threads=threads,
        n_threads_batch=threads,
        logits_all=False,
        verbose=False,
    )
    out["load_s"] = time.perf_counter() - t0

    def logits() -> Any:
        return np.ctypeslib.as_array(ref._ctx.get_logits_ith(-1), shape=(ref.n_vocab(),)).copy()

    def prefill() -> None:
        ref.reset()
        ref.eval(ids)
        logits()

    out["prefill_s"] = _best(args.repeat, prefill)
    row = logits()
    t0 = time.perf_counter()
    for _ in range(args.decode):
        ref.eval([int(np.argmax(row))])
        row = logits()
    out["decode_ms"] = (time.perf_counter() - t0) / args.decode * 1e3
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decode", type=int, default=16, help="greedy tokens timed (16)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each prefill (2)")
    parser.add_argument("--threads", type=int, default=None, help="threads for both")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the figures to docs/figures/qwen2.json, which docs/model.md cites",
    )
    args = parser.parse_args(argv)

    from eoc_native.llm.gguf import GGUFFile
    from eoc_native.llm.parts import joined_model_path
    from eoc_native.llm.tokenizer import GGUFTokenizer

    path = joined_model_path()
    tok = GGUFTokenizer(GGUFFile(path).metadata)
    ids = tok.encode(tok.apply_chat_template([{"role": "user", "content": PROMPT}]), special=True)
    yes_no = [tok.encode("yes")[0], tok.encode("no")[0]]
    ours = bench_eoc(path, ids, yes_no, args)
    theirs = bench_llama_cpp(path, ids, args)
    figures: dict[str, Any] = {"prompt_tokens": len(ids), "eoc": ours, "llama_cpp": theirs}
    figures["ratios"] = {
        "load_first": ours["load_first_s"] / theirs["load_s"],
        "load_cached": ours["load_cached_s"] / theirs["load_s"],
        "prefill": ours["prefill_s"] / theirs["prefill_s"],
        "decode": ours["decode_ms"] / theirs["decode_ms"],
    }
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from record import record

        record("qwen2", figures, argv=argv)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{path.name}: a {len(ids)}-token prompt, threads {args.threads or 'default'}")
    rows = [
        ("load (first: rewrite + tile)", ours["load_first_s"], theirs["load_s"], "s"),
        ("load (layout cache mapped)", ours["load_cached_s"], theirs["load_s"], "s"),
        ("prefill + all logits", ours["prefill_s"], theirs["prefill_s"], "s"),
        ("prefill + 2 logits", ours["prefill_two_logits_s"], theirs["prefill_s"], "s"),
        ("decode", ours["decode_ms"], theirs["decode_ms"], "ms/token"),
    ]
    print(f"{'':32}{'eoc':>10}{'llama.cpp':>12}{'eoc/llama.cpp':>15}")
    for name, a, b, unit in rows:
        print(f"{name:32}{a:>10.3f}{b:>12.3f}{a / b:>14.2f}x  {unit}")
    print(
        f"output projection, one row: all {ours['head_all_ms']:.1f} ms, the two logit_ids "
        f"{ours['head_two_ms']:.2f} ms (saves {ours['head_all_ms'] - ours['head_two_ms']:.1f} ms "
        "a judgement)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
