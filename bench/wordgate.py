"""How many of people's misses the kv's word gate keeps from being embedded, and what it costs.

    python bench/wordgate.py [--json] [--record]

A kv with no judge of meaning (``EOC_JUDGE=off``; with one, every question is embedded) and the
default entity guard is asked the held-out questions of the everyday suite and the human suite
(``bench/suites/everyday/*.jsonl`` part ``heldout``, ``bench/suites/human/heldout.jsonl``:
written one by one, in people's wording, apart from the guard and the gate), twice each: with the
word gate (:mod:`eoc.stages.kv_words`) and without it. Two ways:

* **FAQ**: the suites' stored questions and answers are written to the kv first, then each asked
  question is looked up (most are rewordings or near misses of a stored one: the gate's worst
  case);
* **remembered as asked**: no FAQ; the asked and stored questions, shuffled, are looked up one
  after another and each miss's question is stored with an answer, as a server remembers what its
  model said (most misses are new questions).

Printed for each: lookups, hits (they must be the same with and without the gate, or the run
fails), misses, and how many misses were embedded with the gate and without it; the gate's own
time per lookup that it kept from embedding and the time to key one stored question (p50, this
process). The kv embeds with MiniLM where the native extra is installed, else with the core's
hashed n-grams (the gate is the same either way; the hits are the embedder's).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "native")]
SUITES = ROOT / "bench" / "suites"


def rows() -> list[dict[str, Any]]:
    """The held-out rows of the everyday and human suites."""
    out = []
    for path in [
        *sorted((SUITES / "everyday").glob("*.jsonl")),
        SUITES / "human" / "heldout.jsonl",
    ]:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("part", "heldout") == "heldout":
                out.append(row)
    return out


class Counting:
    """An embedder that counts what it embeds (the texts), wrapping the kv's own."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, 0
        self.name, self.dim = inner.name, inner.dim
        self.threshold = getattr(inner, "threshold", None)
        self.dense = getattr(inner, "dense", False)

    def embed(self, text: str) -> Any:
        self.calls += 1
        return self.inner.embed(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def embedder() -> tuple[Any, Any, str]:
    """MiniLM and its index where the native extra is there, else the core's hashed n-grams."""
    try:
        from eoc_native.semantic import AutoIndex
        from eoc_native.semantic.minilm import MiniLMEmbedder

        inner = MiniLMEmbedder()
        return inner, AutoIndex(inner.dim), inner.name
    except Exception as exc:
        from eoc.stages.embed import HashedNgramEmbedder

        return HashedNgramEmbedder(), None, f"hashed n-grams (MiniLM not available: {exc})"


def run(way: str, data: list[dict[str, Any]], gated: bool) -> dict[str, Any]:
    from eoc.query import Query
    from eoc.stages.guard import EntityGuard
    from eoc.stages.kv import KVStage

    inner, index, name = embedder()
    emb = Counting(inner)
    kw: dict[str, Any] = {"index": index} if index is not None else {}
    kv = KVStage(embedder=emb, guard=EntityGuard(), judging=None, **kw)
    if not gated:
        kv._stored_keys = None  # the same kv without its word gate
    if way == "faq":
        kv.load_pairs({str(r["stored"]): str(r["stored_answer"]) for r in data}.items())
        asked = [str(r["asked"]) for r in data]
    else:
        asked = sorted({str(r[k]) for r in data for k in ("asked", "stored")})
        random.Random(40).shuffle(asked)
    emb.calls = 0
    hits: list[str | None] = []
    misses = embedded = 0
    kept_out_us: list[float] = []
    for i, text in enumerate(asked):
        before = emb.calls
        t0 = time.perf_counter()
        answer = kv.lookup(Query(text))
        dt = (time.perf_counter() - t0) * 1e6
        hits.append(None if answer is None else answer.payload)
        if answer is None:
            misses += 1
            embedded += emb.calls > before
            if emb.calls == before:
                kept_out_us.append(dt)
            if way == "remembered":
                kv.put(text, f"answer {i}")
    out = {
        "embedder": name,
        "lookups": len(asked),
        "hits": sum(h is not None for h in hits),
        "misses": misses,
        "misses_embedded": embedded,
        "answers": hits,
    }
    if gated and kept_out_us:
        out["kept_out_lookup_us_p50"] = statistics.median(kept_out_us)
    return out


def keying_us(data: list[dict[str, Any]]) -> float:
    from eoc.stages.guard import EntityGuard

    guard = EntityGuard()
    texts = sorted({str(r["stored"]) for r in data})
    times = []
    for t in texts:
        t0 = time.perf_counter()
        guard.stored_keys(t + " ")  # (a text the caches have not seen)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record", action="store_true", help="write docs/figures/wordgate.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    data = rows()
    result: dict[str, Any] = {"rows": len(data), "ways": {}}
    for way in ("faq", "remembered"):
        on, off = run(way, data, True), run(way, data, False)
        if on["answers"] != off["answers"]:
            raise SystemExit(f"{way}: the gate changed what the kv served: it must never")
        result["ways"][way] = {
            "embedder": on["embedder"],
            "lookups": on["lookups"],
            "hits": on["hits"],
            "misses": on["misses"],
            "misses_embedded_with_gate": on["misses_embedded"],
            "misses_embedded_without_gate": off["misses_embedded"],
            "kept_out_lookup_us_p50": on.get("kept_out_lookup_us_p50"),
        }
    result["key_one_stored_question_us_p50"] = keying_us(data)
    result["load_avg_1min"] = os.getloadavg()[0]
    if args.record:
        from record import record

        record("wordgate", result, file="wordgate", argv=argv)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(
        f"the kv's word gate, {result['rows']} held-out rows (load {result['load_avg_1min']:.2f})"
    )
    for way, r in result["ways"].items():
        print(
            f"  {way}: {r['lookups']} lookups, {r['hits']} hits (the same without the gate), "
            f"{r['misses']} misses; embedded: {r['misses_embedded_with_gate']} with the gate, "
            f"{r['misses_embedded_without_gate']} without; a miss kept from embedding took "
            f"{r['kept_out_lookup_us_p50'] or 0:.0f} µs (p50) [{r['embedder']}]"
        )
    print(f"  keying one stored question: {result['key_one_stored_question_us_p50']:.0f} µs (p50)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
