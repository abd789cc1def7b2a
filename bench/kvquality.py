"""Semantic kv quality on eoc's own evaluation sets (``bench/kvsets.py``), tuning and held-out.

    python bench/kvquality.py [--part tune|held-out] [--set facts|requests] [--json] [--record]

For each set and part, a kv stage is loaded with the part's stored questions; each paraphrase
is asked (served its own answer: right; another: wrong; nothing: missed) and each hard negative
(served anything: wrong). Reported per configuration: the share of paraphrases served right,
the share of all hits that were wrong, and the negatives served by trap class.

Configurations, all on the same vectors:

* eoc native default: all-MiniLM-L6-v2 + eoc's guard at eoc's threshold;
* eoc core default (and the browser's): hashed n-grams + the same guard;
* plain cosine at GPTCache's default: its ``SearchDistanceEvaluation`` scores a hit
  (4 - squared L2 distance) / 4 and serves at 0.8, which on unit vectors is cosine >= 0.6;
* plain cosine at RedisVL's default: ``distance_threshold`` 0.1 of cosine distance, cosine >= 0.9.

Tune only on ``--part tune``; report both. ``--record`` writes every set, part and configuration
to ``docs/figures/kvquality.json`` (``/<set>/<part>/<n>``, the configurations in the order
above), which the docs cite.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(
    str(Path(__file__).resolve().parent)
)  # kvsets (after the checkout: bench/native.py must not shadow native/eoc_native/)

from kvsets import PARTS, SETS, Item, load, parts_of

from eoc import Query
from eoc.stages import HashedNgramEmbedder, KVStage
from eoc.stages.guard import EntityGuard, NoGuard

GPTCACHE_COSINE = 0.6
REDISVL_COSINE = 0.9


def evaluate(kv: KVStage, items: list[Item], vectors: dict[str, Any] | None) -> dict[str, Any]:
    stored = {it.stored for it in items}

    def ask(text: str) -> str | None:
        emb = None if vectors is None else vectors[text]
        hit = kv.lookup(Query(text, embedding=emb))
        return None if hit is None else hit.payload

    right = wrong = asked = 0
    traps: Counter[str] = Counter()
    trap_asked: Counter[str] = Counter()
    neg_served = 0
    for it in items:
        for p in it.paraphrases:
            asked += 1
            got = ask(p)
            if got is not None:
                right += got == it.answer
                wrong += got != it.answer
        for text, kind in it.negatives:
            if text in stored:
                continue
            trap_asked[kind] += 1
            if ask(text) is not None:
                neg_served += 1
                traps[kind] += 1
    hits = right + wrong + neg_served
    return {
        "paraphrases": asked,
        "served_right": right / asked if asked else 0.0,
        "hits": hits,
        "hits_wrong": (wrong + neg_served) / hits if hits else 0.0,
        "negatives_served": {k: f"{traps[k]}/{trap_asked[k]}" for k in sorted(trap_asked)},
    }


def texts_of(items: list[Item]) -> list[str]:
    out: set[str] = set()
    for it in items:
        out.add(it.stored)
        out.update(it.paraphrases)
        out.update(t for t, _ in it.negatives)
    return sorted(out)


def configurations(minilm: bool) -> list[tuple[str, str, float, Any]]:
    rows = [
        (
            "eoc core default: hashed n-grams + guard",
            "hashed",
            HashedNgramEmbedder.threshold,
            EntityGuard(rewordings=False),
        )
    ]
    if minilm:
        rows = [
            ("eoc native default: MiniLM + guard", "minilm", 0.7, EntityGuard()),
            *rows,
            ("plain cosine, GPTCache default (>= 0.6)", "minilm", GPTCACHE_COSINE, NoGuard()),
            ("plain cosine, RedisVL default (>= 0.9)", "minilm", REDISVL_COSINE, NoGuard()),
        ]
    return rows


_MINI: Any = None


def minilm_vectors(texts: list[str], quiet: bool = False) -> dict[str, Any]:
    """MiniLM's vector of each text, embedded once up front (every configuration reads them)."""
    from eoc_native.semantic import CachedEmbedder, MiniLMEmbedder

    global _MINI
    if _MINI is None:
        _MINI = CachedEmbedder(MiniLMEmbedder())
    mini = _MINI
    vectors: dict[str, Any] = {}
    t0 = time.perf_counter()
    for start in range(0, len(texts), 256):
        chunk = texts[start : start + 256]
        for t, v in zip(chunk, mini.embed_batch(chunk), strict=True):
            vectors[t] = tuple(float(x) for x in v)
    mini.flush()
    if not quiet:
        print(f"(embedded {len(texts)} texts in {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return vectors


class GivenVectors:
    """An embedder serving vectors computed up front (:func:`minilm_vectors`)."""

    name, dim, dense = "all-MiniLM-L6-v2", 384, True
    rewordings = False  # as MiniLMEmbedder

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors

    def embed(self, text: str) -> Any:
        # a query the kv stage reworded before embedding it (no greeting, slips repaired) is
        # embedded here, once
        if text not in self.vectors:
            self.vectors.update(minilm_vectors([text], quiet=True))
        return self.vectors[text]

    def embed_batch(self, batch: list[str]) -> list[Any]:
        return [self.embed(t) for t in batch]


def run(sets: list[str], parts: list[str], minilm: bool) -> list[dict[str, Any]]:
    vectors: dict[str, Any] = {}
    if minilm:
        every = {t for s in sets for p in parts if p in parts_of(s) for t in texts_of(load(s, p))}
        vectors = minilm_vectors(sorted(every))

    rows = []
    for name in sets:
        for part in parts:
            if part not in parts_of(name):
                continue
            items = load(name, part)
            for label, embedder, threshold, guard in configurations(minilm):
                if embedder == "minilm":
                    from eoc_native.semantic import ExactIndex

                    kv = KVStage(
                        embedder=GivenVectors(vectors),
                        index=ExactIndex(384),
                        threshold=threshold,
                        guard=guard,
                    )
                    vecs: dict[str, Any] | None = vectors
                else:
                    kv = KVStage(threshold=threshold, guard=guard)
                    vecs = None
                kv.load_pairs([(it.stored, it.answer) for it in items])
                rows.append(
                    {
                        "set": name,
                        "part": part,
                        "config": label,
                        "threshold": threshold,
                        **evaluate(kv, items, vecs),
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), action="append")
    parser.add_argument("--part", choices=PARTS, action="append")
    parser.add_argument("--no-minilm", action="store_true", help="the core's embedder only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write every set and part to docs/figures/kvquality.json, which the docs cite",
    )
    args = parser.parse_args()
    if args.record and (args.set or args.part or args.no_minilm):
        parser.error("--record records every set, part and configuration: leave out the others")
    rows = run(args.set or sorted(SETS), args.part or list(PARTS), not args.no_minilm)
    if args.record:
        from record import record

        table: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for r in rows:
            table.setdefault(r["set"], {}).setdefault(r["part"], []).append(r)
        record("kvquality", table)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'set':<9}{'part':<10}{'configuration':<43}{'served':>8}{'hits wrong':>11}{'hits':>6}  negatives served by trap"
    )
    for r in rows:
        traps = " ".join(f"{k} {v}" for k, v in r["negatives_served"].items())
        print(
            f"{r['set']:<9}{r['part']:<10}{r['config']:<43}{r['served_right']:>8.1%}{r['hits_wrong']:>11.1%}{r['hits']:>6}  {traps}"
        )


if __name__ == "__main__":
    main()
