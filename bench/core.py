"""Core benchmarks: every figure measured side by side in one run.

    python bench/core.py            # full run (about a minute on 2 cores)
    python bench/core.py --quick    # smaller stores, fewer repeats
    python bench/core.py --json     # machine-readable

Timings are medians over repeated batches (time.perf_counter_ns around a batch,
divided by its size), so one slow batch does not move them.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eoc import Cascade, Query
from eoc.knowledge import default_stages
from eoc.stages import GraphStage, KVStage, TripleStore


def median_ns(fn: Callable[[], object], batch: int, repeats: int) -> float:
    """Median time of one call in ns, over ``repeats`` batches of ``batch`` calls."""
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter_ns() - t0) / batch)
    return statistics.median(per_call)


def cycling(fn: Callable[[Query], object], items: list[Query]) -> Callable[[], object]:
    """A call of ``fn`` on the next item, round and round."""
    nxt = itertools.cycle(items).__next__
    return lambda: fn(nxt())


WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river mountain city "
    "engine protocol server kernel module packet socket buffer thread process memory cache "
    "planet comet galaxy nebula quasar photon neutron proton electron muon boson lepton "
    "copper silver gold iron zinc tin lead cobalt nickel carbon oxygen nitrogen helium "
    "default port version speed mass charge density pressure volume capital currency code"
).split()


def synthetic_prompts(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct question-like prompts with numbers and words, like a user's store."""
    out: set[str] = set()
    while len(out) < n:
        a, b, c = rng.sample(WORDS, 3)
        out.add(f"what is the {a} {b} of {c} {rng.randint(0, 99_999)}")
    return sorted(out)


def bench_cache_hit(repeats: int) -> dict[str, float]:
    cascade = Cascade(default_stages())
    prompt = "what is the capital of Japan"
    cascade.resolve(prompt)
    assert cascade.resolve(prompt).stage.value == "cache"
    table = {hashlib.sha256(prompt.encode("utf-8")).hexdigest(): "Tokyo"}
    sha = hashlib.sha256

    def baseline() -> object:
        return table[sha(prompt.encode("utf-8")).hexdigest()]

    def hit() -> object:
        return cascade.resolve(prompt)

    q = Query(prompt)

    def hit_query() -> object:
        return cascade.resolve(q)

    base = median_ns(baseline, 10_000, repeats)
    resolve = median_ns(hit, 10_000, repeats)
    resolve_q = median_ns(hit_query, 10_000, repeats)
    return {
        "baseline_dict_plus_sha256_ns": base,
        "cache_hit_resolve_str_ns": resolve,
        "cache_hit_resolve_query_ns": resolve_q,
        "ratio_str_vs_baseline": resolve / base,
    }


def bench_kv(sizes: list[int], repeats: int) -> dict[str, dict[str, float]]:
    rng = random.Random(42)
    out: dict[str, dict[str, float]] = {}
    prompts = synthetic_prompts(max(sizes), rng)
    for n in sizes:
        kv = KVStage()
        t0 = time.perf_counter()
        kv.load_pairs((p, f"answer {i}") for i, p in enumerate(prompts[:n]))
        load_s = time.perf_counter() - t0
        targets = rng.sample(prompts[:n], 50)
        # paraphrases: other stopwords and punctuation, so the exact-key path misses
        queries = [
            Query("tell me " + t.replace("what is the ", "the ") + " please?") for t in targets
        ]
        for q, t in zip(queries, targets, strict=True):
            hit = kv.lookup(q)
            assert hit is not None and hit.payload == f"answer {prompts.index(t)}", q.prompt
        misses = [Query(f"what is the {w} of nothing {i}") for i, w in enumerate(WORDS[:50])]
        batch = 200 if n <= 10_000 else 50
        out[str(n)] = {
            "load_s": load_s,
            "similarity_hit_ns": median_ns(cycling(kv.lookup, queries), batch, repeats),
            "similarity_miss_ns": median_ns(cycling(kv.lookup, misses), batch, repeats),
        }
    return out


def bench_graph(n_triples: int, repeats: int) -> dict[str, float]:
    rng = random.Random(7)
    preds = ["capital", "currency", "region", "population", "code", "anthem", "leader", "language"]
    store = TripleStore()
    i = 0
    while len(store) < n_triples:
        store.add(f"Country {i}", preds[i % len(preds)], f"Value {rng.randint(0, 10**6)}")
        i += 1
    stage = GraphStage(store)
    queries = [
        Query(f"what is the {preds[j % len(preds)]} of Country {j}")
        for j in range(0, i, max(i // 100, 1))
    ]
    for q in queries:
        assert stage.lookup(q) is not None, q.prompt
    reverse = Query("Value 12345 is the capital of which country?")
    return {
        "triples": float(len(store)),
        "forward_question_ns": median_ns(cycling(stage.lookup, queries), 500, repeats),
        "reverse_question_ns": median_ns(lambda: stage.lookup(reverse), 500, repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    repeats = 7 if args.quick else 21
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    results = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cache_hit": bench_cache_hit(repeats),
        "kv": bench_kv(sizes, repeats),
        "graph": bench_graph(10_000, repeats),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    c = results["cache_hit"]
    print(
        f"eoc core benchmarks — CPython {results['python']} on {results['machine']}, medians of {repeats} batches"
    )
    print("cache hit (receipt included):")
    print(
        f"  baseline dict lookup + SHA-256 of prompt : {c['baseline_dict_plus_sha256_ns'] / 1000:7.3f} µs"
    )
    print(
        f"  Cascade.resolve(str)                     : {c['cache_hit_resolve_str_ns'] / 1000:7.3f} µs   ({c['ratio_str_vs_baseline']:.2f}x baseline; target <= 1.5 µs)"
    )
    print(
        f"  Cascade.resolve(Query)                   : {c['cache_hit_resolve_query_ns'] / 1000:7.3f} µs   (id already computed)"
    )
    print("kv similarity lookup (paraphrase, exact key misses):")
    for n, r in results["kv"].items():
        print(
            f"  {int(n):>7,} entries: hit {r['similarity_hit_ns'] / 1000:8.1f} µs   miss {r['similarity_miss_ns'] / 1000:8.1f} µs   (load {r['load_s']:.1f} s; target at 10k <= 1000 µs)"
        )
    g = results["graph"]
    print(
        f"graph lookup at {int(g['triples']):,} triples: forward {g['forward_question_ns'] / 1000:.1f} µs   reverse {g['reverse_question_ns'] / 1000:.1f} µs"
    )


if __name__ == "__main__":
    main()
