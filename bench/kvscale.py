"""The kv's vector index at scale, against faiss HNSW and hnswlib used directly, in one run.

    python bench/kvscale.py [--sizes 10000,100000,1000000] [--real 100000] [--rounds 3]
                            [--quick] [--json] [--record]

For each size, random unit vectors (384 dimensions, MiniLM's) are indexed by each engine with the
same graph settings (links per node, build and search widths: eoc's defaults,
``eoc_native.semantic.index``): eoc through its public API (``AnnIndex``: ``add_many`` and
``search(vec, 0.7, 1)``, which checks and normalises every vector it is given, as the kv's
lookups do; and ``AutoIndex``, what the kv builds, exact below its switch), faiss's
``IndexHNSWFlat`` and hnswlib's ``Index``. Then, in ``--rounds`` interleaved rounds (the engines'
order turned each round), each engine answers single-vector queries one at a time:

* **hit**: a stored vector with noise added (cosine about 0.9 to it), so an answer is found;
* **miss**: a fresh random vector (no stored one is within the kv's 0.7).

Reported per engine: hit and miss latency p50/p99 (µs, over all rounds), recall@1 of the hit
queries against exact search, bytes per entry (the process's resident memory before and after
the build, over the entries; the caller's vectors and key strings exist before, so they are not
counted), build time, and cold open time (the built index saved to a file, then read back and
searched once: eoc's ``AnnIndex.save``/``open``, which checks the file's owner and digest first;
``faiss.write_index``/``read_index``; hnswlib's ``save_index``/``load_index``).

Random vectors are the hardest case for a graph index; what a kv holds is sentence embeddings,
which lie near a far lower-dimensional surface. ``--real N`` (default 100,000) adds a set of
real MiniLM embeddings (``bench/kvreal.py``: docstring sentences of the installed Python, built
once, about 20 minutes, then cached): recall@1 against exact search for sentences with one word
dropped (a near neighbour exists, as for a reworded question) and for unseen sentences (most
lie far from every stored one), per engine; and, where 1,000,000 is among the sizes, the same
queries over those real vectors plus random ones up to a million entries.

``--quick``: 10,000 entries, a 10,000-sentence real set, 2 rounds (a few minutes, plus the real
set's first build). ``--json`` prints one JSON object whose ``ratios`` hold, per size,
``hit_p50_vs_faiss_hnsw`` and ``bytes_per_entry_vs_faiss_hnsw`` (eoc's ``AnnIndex`` over faiss's);
``--record`` writes it to ``docs/figures/kvscale.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it

from kvreal import real_set
from record import record

DIM = 384
THRESHOLD = 0.7
QUERIES = 500
SEED = 7
AUTO_UP_TO = 100_000
ENGINES = ("eoc", "eoc-auto", "faiss-hnsw", "hnswlib")


def rss() -> int:
    """This process's resident memory, in bytes, after the allocator hands back what it holds
    free (so a build's temporaries are not counted as its index)."""
    import ctypes

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def unit(rng: Any, n: int) -> Any:
    import numpy as np

    out = np.empty((n, DIM), np.float32)
    for start in range(0, n, 100_000):  # bounded temporaries
        block = rng.standard_normal((min(100_000, n - start), DIM), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + len(block)] = block
    return out


def exact_top1(base: Any, queries: Any) -> list[int]:
    import numpy as np

    best = np.full(len(queries), -2.0, np.float32)
    arg = np.zeros(len(queries), np.int64)
    for start in range(0, len(base), 50_000):
        scores = queries @ base[start : start + 50_000].T
        i = scores.argmax(axis=1)
        s = scores[np.arange(len(queries)), i]
        better = s > best
        best[better], arg[better] = s[better], i[better] + start
    return arg.tolist()


class Engine:
    """One index, built and asked the same way as the others."""

    name = ""
    row: dict[str, int]

    def build(self, keys: list[str], base: Any) -> None: ...

    def top(self, q: Any) -> int | None:
        """The row of the best stored vector at or above the threshold, or None."""
        raise NotImplementedError

    def save(self, path: str) -> None: ...

    def reopen(self, path: str) -> None: ...


class Eoc(Engine):
    name = "eoc"

    def __init__(self, auto: bool = False) -> None:
        from eoc_native.semantic import AnnIndex, AutoIndex

        self.auto = auto
        self.name = "eoc-auto" if auto else "eoc"
        self.index: Any = AutoIndex(DIM) if auto else AnnIndex(DIM)
        self._cls = AnnIndex

    def build(self, keys: list[str], base: Any) -> None:
        if self.auto:
            for key, row in zip(keys, base, strict=True):
                self.index.add(key, row)
        else:
            self.index.add_many(keys, base)

    def top(self, q: Any) -> int | None:
        found = self.index.search(q, THRESHOLD, 1)
        return self.row[found[0][1]] if found else None

    def top_any(self, q: Any) -> int | None:
        found = self.index.search(q, -1.0, 1)
        return self.row[found[0][1]] if found else None

    def save(self, path: str) -> None:
        self.index.save(path)

    def reopen(self, path: str) -> None:
        self.index = self._cls.open(path, dim=DIM)


class Faiss(Engine):
    name = "faiss-hnsw"

    def build(self, keys: list[str], base: Any) -> None:
        import faiss

        from eoc_native.semantic.index import CONNECTIVITY, CONSTRUCTION, EXPANSION

        self.faiss = faiss
        self.index = faiss.IndexHNSWFlat(DIM, CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = CONSTRUCTION
        self.index.hnsw.efSearch = EXPANSION
        self.index.add(base)

    def top(self, q: Any) -> int | None:
        s, i = self.index.search(q.reshape(1, -1), 1)
        return int(i[0, 0]) if s[0, 0] >= THRESHOLD else None

    def top_any(self, q: Any) -> int | None:
        return int(self.index.search(q.reshape(1, -1), 1)[1][0, 0])

    def save(self, path: str) -> None:
        self.faiss.write_index(self.index, path)

    def reopen(self, path: str) -> None:
        self.index = self.faiss.read_index(path)


class Hnswlib(Engine):
    name = "hnswlib"

    def build(self, keys: list[str], base: Any) -> None:
        import hnswlib

        from eoc_native.semantic.index import CONNECTIVITY, CONSTRUCTION, EXPANSION

        self.hnswlib = hnswlib
        self.index = hnswlib.Index(space="ip", dim=DIM)
        self.index.init_index(
            max_elements=len(base), M=CONNECTIVITY, ef_construction=CONSTRUCTION, random_seed=1
        )
        self.index.add_items(base, num_threads=os.cpu_count() or 1)
        self.index.set_ef(EXPANSION)
        self.index.set_num_threads(1)

    def top(self, q: Any) -> int | None:
        labels, dist = self.index.knn_query(q, k=1)
        return int(labels[0, 0]) if 1.0 - dist[0, 0] >= THRESHOLD else None

    def top_any(self, q: Any) -> int | None:
        return int(self.index.knn_query(q, k=1)[0][0, 0])

    def save(self, path: str) -> None:
        self.index.save_index(path)

    def reopen(self, path: str) -> None:
        from eoc_native.semantic.index import EXPANSION

        self.index = self.hnswlib.Index(space="ip", dim=DIM)
        self.index.load_index(path)
        self.index.set_ef(EXPANSION)
        self.index.set_num_threads(1)


def make(name: str) -> Engine:
    return {
        "eoc": lambda: Eoc(),
        "eoc-auto": lambda: Eoc(auto=True),
        "faiss-hnsw": Faiss,
        "hnswlib": Hnswlib,
    }[name]()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def built(names: tuple[str, ...], base: Any, keys: list[str]) -> dict[str, dict[str, Any]]:
    """Each engine built over ``base``: its object, build seconds and bytes per entry."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        gc.collect()
        before = rss()
        engine = make(name)
        t0 = time.perf_counter()
        engine.build(keys, base)
        seconds = time.perf_counter() - t0
        gc.collect()
        used = rss() - before
        engine.row = {k: i for i, k in enumerate(keys)}  # the bench's own lookup: not counted
        out[name] = {
            "engine": engine,
            "build_s": round(seconds, 2),
            "bytes_per_entry": round(used / len(base)),
        }
    return out


def timed(engine: Engine, queries: Any) -> tuple[list[float], list[int | None]]:
    times, found = [], []
    for q in queries:
        t = time.perf_counter_ns()
        got = engine.top(q)
        times.append((time.perf_counter_ns() - t) / 1000)
        found.append(got)
    return times, found


def one_size(n: int, names: tuple[str, ...], rounds: int, rng: Any) -> dict[str, Any]:
    import numpy as np

    base = unit(rng, n)
    keys = [f"stored question {i}" for i in range(n)]
    rows = rng.choice(n, QUERIES, replace=False)
    noise = rng.standard_normal((QUERIES, DIM), dtype=np.float32) * (0.5 / DIM**0.5)
    hits = base[rows] + noise
    hits /= np.linalg.norm(hits, axis=1, keepdims=True)
    misses = unit(rng, QUERIES)
    truth = exact_top1(base, hits)
    if n > AUTO_UP_TO:  # past its switch the kv's AutoIndex is eoc's AnnIndex, added one by one
        names = tuple(k for k in names if k != "eoc-auto")
    engines = built(names, base, keys)
    hit_us: dict[str, list[float]] = {k: [] for k in names}
    miss_us: dict[str, list[float]] = {k: [] for k in names}
    recall: dict[str, float] = {}
    false_hits: dict[str, int] = {}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            engine = engines[name]["engine"]
            times, found = timed(engine, hits)
            hit_us[name] += times
            recall[name] = sum(f == t for f, t in zip(found, truth, strict=True)) / QUERIES
            times, found = timed(engine, misses)
            miss_us[name] += times
            false_hits[name] = sum(f is not None for f in found)
    out: dict[str, Any] = {"entries": n, "engines": {}}
    with tempfile.TemporaryDirectory(prefix="eoc-kvscale-") as tmp:
        for name in names:
            e = engines[name]
            engine = e["engine"]
            opened = None
            if name != "eoc-auto":  # the same saved form as eoc's AnnIndex
                path = str(Path(tmp) / name)
                engine.save(path)
                t0 = time.perf_counter()
                engine.reopen(path)
                engine.top(hits[0])
                opened = round(time.perf_counter() - t0, 3)
                os.unlink(path)
            out["engines"][name] = {
                "hit_p50_us": round(statistics.median(hit_us[name]), 1),
                "hit_p99_us": round(percentile(hit_us[name], 0.99), 1),
                "miss_p50_us": round(statistics.median(miss_us[name]), 1),
                "miss_p99_us": round(percentile(miss_us[name], 0.99), 1),
                "recall_at_1": round(recall[name], 4),
                "false_hits": false_hits[name],
                "bytes_per_entry": e["bytes_per_entry"],
                "build_s": e["build_s"],
                "cold_open_s": opened,
            }
            if name == "eoc-auto":
                out["engines"][name]["kind"] = engine.index.kind
    del engines
    gc.collect()
    return out


def real_recall(n: int, names: tuple[str, ...], pad_to: int, rng: Any) -> dict[str, Any]:
    """Recall@1 against exact search on real MiniLM embeddings (``bench/kvreal.py``), the stored
    set padded with random unit vectors up to ``pad_to`` entries when that is larger."""
    import numpy as np

    data = real_set(n)
    stored = data["stored"]
    if pad_to > len(stored):
        stored = np.concatenate([stored, unit(rng, pad_to - len(stored))])
    keys = [f"stored question {i}" for i in range(len(stored))]
    engines = built(tuple(k for k in names if k != "eoc-auto"), stored, keys)
    out: dict[str, Any] = {"real": n, "entries": len(stored), "engines": {}}
    for part in ("reworded", "unseen"):
        queries = data[part]
        truth = exact_top1(stored, queries)
        for name, e in engines.items():
            engine = e["engine"]
            found = [engine.top_any(q) for q in queries]
            agree = sum(f == t for f, t in zip(found, truth, strict=True)) / len(queries)
            out["engines"].setdefault(name, {})[f"recall_at_1_{part}"] = round(agree, 4)
            out["engines"][name]["build_s"] = e["build_s"]
            out["engines"][name]["bytes_per_entry"] = e["bytes_per_entry"]
        if part == "reworded":
            served = sum(
                float(stored[t] @ q) >= THRESHOLD for t, q in zip(truth, queries, strict=True)
            )
            out["reworded_within_threshold"] = served
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--real", type=int, default=100_000, help="real MiniLM entries (0: none)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--quick", action="store_true", help="10,000 entries, 2 rounds")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--record", action="store_true", help="write docs/figures/kvscale.json")
    args = ap.parse_args(argv)
    import numpy as np

    if args.quick:
        args.sizes, args.real, args.rounds = "10000", 10_000, 2
    sizes = [int(s) for s in args.sizes.split(",") if s]
    names = tuple(e for e in args.engines.split(",") if e)
    unknown = set(names) - set(ENGINES)
    if unknown:
        ap.error(f"unknown engines {sorted(unknown)}; known: {', '.join(ENGINES)}")
    rng = np.random.default_rng(SEED)
    result: dict[str, Any] = {"dim": DIM, "threshold": THRESHOLD, "queries": QUERIES}
    from eoc_native.semantic.index import CONNECTIVITY, CONSTRUCTION, EXPANSION

    result["settings"] = {"M": CONNECTIVITY, "efConstruction": CONSTRUCTION, "efSearch": EXPANSION}
    result["sizes"] = []
    for n in sizes:
        part = one_size(n, names, args.rounds, rng)
        result["sizes"].append(part)
        if not args.json:
            show(part)
    result["real"] = []
    if args.real:
        pads = [args.real] + [n for n in sizes if n > args.real and n >= 1_000_000]
        for pad in pads:
            part = real_recall(args.real, names, pad, rng)
            result["real"].append(part)
            if not args.json:
                print(f"real MiniLM {args.real} stored, {part['entries']} entries in all:")
                for name, e in part["engines"].items():
                    print(f"  {name:10s} recall@1 reworded {e['recall_at_1_reworded']:.4f}, "
                          f"unseen {e['recall_at_1_unseen']:.4f}")  # fmt: skip
    result["ratios"] = {
        str(p["entries"]): {
            "hit_p50_vs_faiss_hnsw": round(
                p["engines"]["eoc"]["hit_p50_us"] / p["engines"]["faiss-hnsw"]["hit_p50_us"], 3
            ),
            "bytes_per_entry_vs_faiss_hnsw": round(
                p["engines"]["eoc"]["bytes_per_entry"]
                / max(1, p["engines"]["faiss-hnsw"]["bytes_per_entry"]),
                3,
            ),
        }
        for p in result["sizes"]
        if "eoc" in p["engines"] and "faiss-hnsw" in p["engines"]
    }
    if args.record:
        record("kvscale", result, argv=argv)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print("ratios (eoc AnnIndex / faiss HNSW):", json.dumps(result["ratios"]))
    return 0


def show(part: dict[str, Any]) -> None:
    print(f"{part['entries']:,} random entries:")
    print("  engine      hit p50/p99 µs   miss p50/p99 µs  recall@1  bytes/entry  build s  open s")
    for name, e in part["engines"].items():
        print(
            f"  {name:10s} {e['hit_p50_us']:7.1f}/{e['hit_p99_us']:<7.1f} "
            f"{e['miss_p50_us']:7.1f}/{e['miss_p99_us']:<7.1f}  {e['recall_at_1']:.4f}  "
            f"{e['bytes_per_entry']:10d}  {e['build_s']:7.1f}  {e['cold_open_s']}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
