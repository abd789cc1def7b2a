"""Follow-ups in conversations: may kv answer the last message? bench/suites/human/conversations.jsonl.

    python bench/conversations.py [--no-minilm] [--show N]

Each conversation ends with a user message; a kv stage holds every conversation's stored FAQ
question with its answer. A request is built from the whole conversation (``parse_chat``): kv
may answer it only where eoc's follow-up rule lets a fact answer (``Query.facts_ok``: the last
message stands alone; eoc/followup.py), and then only what the kv guard serves. A conversation
marked ``same`` served its stored answer is *served*; any other served answer is *wrong*; a
trap (its last message points back, so the stored answer would be wrong) served anything is
*wrong*. The traps' final messages repeat across conversations ("how much does it cost?").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it
sys.path.append(str(Path(__file__).resolve().parent))  # kvquality (after the checkout's packages)

from kvquality import GivenVectors, configurations, minilm_vectors

from eoc.chat.request import ChatDefaults, parse_chat
from eoc.stages import KVStage

SUITE = Path(__file__).resolve().parent / "suites" / "human" / "conversations.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-minilm", action="store_true")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args(argv)
    rows = [json.loads(x) for x in SUITE.read_text(encoding="utf-8").splitlines() if x]
    defaults = ChatDefaults("m")
    minilm = not args.no_minilm
    vectors: dict[str, Any] = {}
    if minilm:
        texts = {r["stored"] for r in rows} | {r["messages"][-1]["content"] for r in rows}
        vectors = minilm_vectors(sorted(texts))
    queries = [
        parse_chat({"model": "m", "messages": r["messages"]}, defaults).query() for r in rows
    ]
    allowed = sum(q.facts_ok for q in queries)
    traps_allowed = sum(q.facts_ok for r, q in zip(rows, queries, strict=True) if not r["same"])
    print(
        f"follow-up rule: {allowed}/{len(rows)} conversations may be answered by a fact "
        f"({traps_allowed}/{sum(not r['same'] for r in rows)} traps let through to kv)"
    )
    for label, embedder, threshold, guard in configurations(minilm):
        kw: dict[str, Any] = {"threshold": threshold, "guard": guard}
        if embedder == "minilm":
            from eoc_native.semantic import ExactIndex

            kw.update(embedder=GivenVectors(vectors), index=ExactIndex(384))
        kv = KVStage(**kw)
        for stored in {r["stored"]: r["stored_answer"] for r in rows}.items():
            kv.put(*stored)
        served = wrong = hits = 0
        shown: list[str] = []
        for r, q in zip(rows, queries, strict=True):
            got = kv.lookup(q) if q.facts_ok else None
            hits += got is not None
            if got is None:
                continue
            if r["same"] and got.payload == r["stored_answer"]:
                served += 1
            else:
                wrong += 1
                shown.append(f"    wrong [{r['class']}] {r['messages'][-1]['content']!r}")
        same = sum(1 for r in rows if r["same"])
        print(
            f"{label:45s} served {served:3d}/{same:<3d} ({100 * served / same:5.1f} %)  "
            f"wrong {wrong}/{hits} hits"
        )
        for line in shown[: args.show]:
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
