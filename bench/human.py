"""The kv stage on people's own wording: bench/suites/human/ (hand-written, see its README).

    python bench/human.py [--part tune|heldout|sealed ...] [--no-minilm] [--json] [--show N]

For each part, a kv stage holds every stored FAQ question of the part with its answer (the
part's store: no pair's asked text is in it). Each pair's asked text is looked up:

* a **should-hit** pair (``same``) served its own stored answer is *served*; served another
  answer is *wrong*; not served is *missed*;
* a **trap** (``same`` false: the stored answer would be wrong for it) served anything is
  *wrong*.

Reported per configuration (eoc's native default, MiniLM + guard; the core and browser default,
hashed n-grams + guard; plain cosine at GPTCache's and RedisVL's defaults): the share of
should-hit pairs served, and the share of all hits that were wrong. ``sealed`` is run once, at
the end of the work it measures (its README says so).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it
sys.path.append(str(Path(__file__).resolve().parent))  # kvquality (after the checkout's packages)

from kvquality import GivenVectors, configurations, minilm_vectors

from eoc import Query
from eoc.stages import KVStage

HUMAN = Path(__file__).resolve().parent / "suites" / "human"
PARTS = ("tune", "heldout", "sealed")


def load(part: str) -> list[dict[str, Any]]:
    path = HUMAN / f"{part}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for r in rows:
        missing = {"id", "domain", "stored", "stored_answer", "asked", "same", "class"} - set(r)
        if missing:
            raise SystemExit(f"{path}: {r.get('id', '?')} lacks {sorted(missing)}")
    return rows


def measure(rows: list[dict[str, Any]], make_kv: Callable[[], KVStage]) -> dict[str, Any]:
    kv = make_kv()
    answers: dict[str, str] = {}
    for r in rows:
        if r["stored"] not in answers:
            answers[r["stored"]] = r["stored_answer"]
            kv.put(r["stored"], r["stored_answer"])
    served = missed = wrong = hits = 0
    by_class: Counter[str] = Counter()
    misses: list[tuple[str, str, str]] = []
    wrongs: list[tuple[str, str, str]] = []
    for r in rows:
        got = kv.lookup(Query(r["asked"]))
        if got is not None:
            hits += 1
        if r["same"]:
            if got is None:
                missed += 1
                misses.append((r["class"], r["stored"], r["asked"]))
            elif got.payload == r["stored_answer"]:
                served += 1
                by_class[r["class"]] += 1
            else:
                wrong += 1
                wrongs.append((r["class"], r["stored"], r["asked"]))
        elif got is not None:
            wrong += 1
            wrongs.append((r["class"], r["stored"], r["asked"]))
    should = sum(1 for r in rows if r["same"])
    return {
        "pairs": len(rows),
        "should_hit": should,
        "served": served,
        "served_pct": 100.0 * served / should if should else 0.0,
        "hits": hits,
        "wrong": wrong,
        "wrong_pct_of_hits": 100.0 * wrong / hits if hits else 0.0,
        "misses": misses,
        "wrongs": wrongs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", action="append", choices=PARTS, help="default: tune and heldout")
    ap.add_argument("--no-minilm", action="store_true", help="the core's hashed embedder only")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print N misses and wrong hits")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write every part (sealed included) to docs/figures/human.json (/<part>/<n>, the "
        "configurations in kvquality's order), which the docs cite",
    )
    args = ap.parse_args(argv)
    if args.record and (args.part or args.no_minilm):
        ap.error("--record records every part and configuration: leave out --part, --no-minilm")
    parts = args.part or (list(PARTS) if args.record else ["tune", "heldout"])
    data = {p: load(p) for p in parts}
    minilm = not args.no_minilm
    vectors: dict[str, Any] = {}
    if minilm:
        texts = sorted(
            {t for rows in data.values() for r in rows for t in (r["stored"], r["asked"])}
        )
        vectors = minilm_vectors(texts)
    report = []
    for label, embedder, threshold, guard in configurations(minilm):

        def make_kv(
            embedder: str = embedder, threshold: float = threshold, guard: Any = guard
        ) -> KVStage:
            if embedder != "minilm":
                return KVStage(threshold=threshold, guard=guard)
            from eoc_native.semantic import ExactIndex

            return KVStage(
                embedder=GivenVectors(vectors),
                index=ExactIndex(384),
                threshold=threshold,
                guard=guard,
            )

        for part, rows in data.items():
            m = measure(rows, make_kv)
            report.append({"configuration": label, "part": part, **m})
            if not args.json:
                print(
                    f"{label:45s} {part:8s} served {m['served']:4d}/{m['should_hit']:<4d} "
                    f"({m['served_pct']:5.1f} %)  wrong {m['wrong']:3d}/{m['hits']:<4d} "
                    f"({m['wrong_pct_of_hits']:4.1f} % of hits)"
                )
                for kind, items in (("missed", m["misses"]), ("wrong", m["wrongs"])):
                    for cls, stored, asked in items[: args.show]:
                        print(f"    {kind:6s} [{cls}] {stored!r} <- {asked!r}")
    for r in report:
        r["misses"], r["wrongs"] = len(r["misses"]), len(r["wrongs"])
    if args.record:
        from record import record

        table: dict[str, list[dict[str, Any]]] = {}
        for r in report:
            table.setdefault(r["part"], []).append(r)
        record("human", table, argv=argv)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
