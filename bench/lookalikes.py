"""Look-alike precision: questions that read like a stored one but ask something else.

    python bench/lookalikes.py [--suite lookalikes|lookalikes-sealed] [--no-minilm] [--json] [--show N]

Two parts, both counted per configuration (eoc's native default, MiniLM + guard; eoc's core and
browser default, hashed n-grams + guard; and plain cosine at GPTCache's and RedisVL's defaults
for comparison):

* **the suite** (``bench/suites/lookalikes.jsonl``): 199 pairs written by hand, one by one, apart
  from the guard and before it was changed for them (committed first), in nine classes: roles
  swapped, comparisons, unit direction, percent, operators, symbols, tense, negation, other. A kv
  stage holds every pair's stored question with its answer; each look-alike is asked, and any
  answer served to it by similarity is *wrong* (its right answer is not in the store). Each pair's
  paraphrase is asked too: served its own answer is *right*, another is wrong, none is missed.
* **the pack's computations**: each arithmetic question of the seeded pack with its operator
  swapped for each other one (``what is 7*8`` -> ``what is 7+8``), asked of the seeded kv: any
  similarity hit is wrong, since a computation is answered by computing it.

``--suite lookalikes-sealed`` runs 133 more pairs of the same classes, written apart from the
guard and from the first suite and committed before the guard's changes were finished; it was
run once, after them: the figure that says whether the rules generalize.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it
sys.path.append(str(Path(__file__).resolve().parent))  # kvquality (after the checkout's packages)

from kvquality import GivenVectors, configurations, minilm_vectors
from record import record

from eoc import Query
from eoc.knowledge import kv_pairs
from eoc.stages import KVStage
from eoc.text.forms import fold

SUITES = Path(__file__).resolve().parent / "suites"
SUITE = SUITES / "lookalikes.jsonl"
_OPERATOR = re.compile(r"(?<=\d)\s*([-+*/^])\s*(?=\d)")


def load_suite(path: Path = SUITE) -> list[dict[str, str]]:
    """The suite's pairs (id, class, stored, answer, query, paraphrase)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for r in rows:
        missing = {"id", "class", "stored", "answer", "query", "paraphrase"} - set(r)
        if missing:
            raise SystemExit(f"{path}: {r.get('id', '?')} lacks {sorted(missing)}")
    return rows


def swapped_computations() -> list[tuple[str, str]]:
    """(stored pack question, the same with another operator) for every pack computation."""
    out = []
    for prompt, _ in kv_pairs():
        m = _OPERATOR.search(prompt)
        if m is None:
            continue
        for op in "+-*/^":
            if op != m.group(1):
                out.append((prompt, prompt[: m.start(1)] + op + prompt[m.end(1) :]))
    return out


def texts(rows: list[dict[str, str]]) -> list[str]:
    out = {r[k] for r in rows for k in ("stored", "query", "paraphrase")}
    out.update(t for pair in swapped_computations() for t in pair)
    out.update(p for p, _ in kv_pairs())
    return sorted(out)


def evaluate(
    make_kv: Any, rows: list[dict[str, str]], vectors: dict[str, Any] | None
) -> dict[str, Any]:
    """The suite's and the pack's figures for one configuration (``make_kv()`` builds an empty kv)."""

    def ask(kv: KVStage, text: str) -> str | None:
        hit = kv.lookup(Query(text, embedding=None if vectors is None else vectors[text]))
        return None if hit is None else hit.payload

    kv = make_kv()
    stored: dict[str, str] = {}
    for r in rows:
        stored.setdefault(r["stored"], r["answer"])
    kv.load_pairs(stored.items())
    by_key = {fold(q): a for q, a in stored.items()}
    wrong: list[dict[str, str]] = []
    by_class: dict[str, list[int]] = {}
    right = para_wrong = 0
    for r in rows:
        counts = by_class.setdefault(r["class"], [0, 0])
        counts[0] += 1
        got = ask(kv, r["query"])
        if got is not None and by_key.get(fold(r["query"])) != got:
            counts[1] += 1
            wrong.append({"id": r["id"], "query": r["query"], "served": got[:60]})
        para = ask(kv, r["paraphrase"])
        if para == r["answer"]:
            right += 1
        elif para is not None:
            para_wrong += 1
    pack = make_kv()
    pack.load_pairs(kv_pairs())
    own = {fold(q): a for q, a in kv_pairs()}  # a swap that is itself a pack question
    swaps = swapped_computations()
    pack_wrong = []
    for s, q in swaps:
        got = ask(pack, q)
        if got is not None and got != own.get(fold(q)):
            pack_wrong.append((s, q))
    return {
        "pairs": len(rows),
        "served_wrong": len(wrong),
        "wrong_by_class": {k: v[1] for k, v in sorted(by_class.items())},
        "asked_by_class": {k: v[0] for k, v in sorted(by_class.items())},
        "wrong": wrong,
        "paraphrases_served_right": right / len(rows),
        "paraphrases_served_wrong": para_wrong,
        "pack_swaps": len(swaps),
        "pack_swaps_served": len(pack_wrong),
        "pack_wrong": pack_wrong,
    }


def run(minilm: bool, suite: Path = SUITE) -> list[dict[str, Any]]:
    rows = load_suite(suite)
    vectors = minilm_vectors(texts(rows)) if minilm else {}

    out = []
    for label, embedder, threshold, guard in configurations(minilm):
        if embedder == "minilm":

            def make_kv(threshold: float = threshold, guard: Any = guard) -> KVStage:
                from eoc_native.semantic import ExactIndex

                return KVStage(
                    embedder=GivenVectors(vectors),
                    index=ExactIndex(384),
                    threshold=threshold,
                    guard=guard,
                )

            result = evaluate(make_kv, rows, vectors)
        else:

            def make_kv(threshold: float = threshold, guard: Any = guard) -> KVStage:
                return KVStage(threshold=threshold, guard=guard)

            result = evaluate(make_kv, rows, None)
        out.append({"config": label, "threshold": threshold, **result})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--suite",
        default="lookalikes",
        choices=["lookalikes", "lookalikes-sealed", "nearmiss", "nearmiss-sealed"],
        help="the suite (sealed: 133 more pairs, written apart and run once after the changes; "
        "nearmiss: issue 34's classes, 120 pairs to tune and 90 sealed)",
    )
    parser.add_argument("--no-minilm", action="store_true", help="the core's embedder only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", type=int, default=0, help="list this many wrong hits each")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/<suite>.json, which the README and the docs cite "
        "(not with --no-minilm)",
    )
    args = parser.parse_args()
    if args.record and args.no_minilm:
        parser.error("--record records every configuration: leave out --no-minilm")
    results = run(not args.no_minilm, SUITES / f"{args.suite}.jsonl")
    if args.record:
        record("lookalikes", {"configurations": results}, file=args.suite)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    classes = list(results[0]["asked_by_class"])
    print(
        f"look-alike suite {args.suite}: {results[0]['pairs']} hand-written pairs; "
        "served wrongly, by class"
    )
    print(f"{'configuration':<43}{'wrong':>7}  " + " ".join(f"{c[:10]:>10}" for c in classes))
    for r in results:
        cells = " ".join(
            f"{r['wrong_by_class'][c]:>4}/{r['asked_by_class'][c]:<5}" for c in classes
        )
        print(f"{r['config']:<43}{r['served_wrong']:>7}  {cells}")
    print()
    print(f"{'configuration':<43}{'paraphrases right':>18}{'wrong':>7}{'pack swaps served':>19}")
    for r in results:
        swaps = f"{r['pack_swaps_served']}/{r['pack_swaps']}"
        print(
            f"{r['config']:<43}{r['paraphrases_served_right']:>18.1%}"
            f"{r['paraphrases_served_wrong']:>7}{swaps:>19}"
        )
    if args.show:
        for r in results:
            print(f"\n{r['config']}:")
            for w in r["wrong"][: args.show]:
                print(f"  {w['id']:<20} {w['query']!r} -> {w['served']!r}")
            for s, q in r["pack_wrong"][: args.show]:
                print(f"  pack: {q!r} (stored {s!r})")


if __name__ == "__main__":
    main()
