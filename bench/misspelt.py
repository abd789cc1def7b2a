"""Misspelt fact questions: does the graph stage answer them as it answers them spelled right,
and never another name's answer?

    python bench/misspelt.py [--part tune|heldout ...] [--json] [--record] [--show]

The suite (``bench/suites/misspelt-facts.jsonl``) holds fact questions written by hand with the
slips people make (a letter left out, doubled, swapped or mistyped; a word spelled as it
sounds), each beside the question it means, spelled right; some are names written right that
are one slip from another name ("Iran" / "Iraq", "Gambia" / "Zambia"). ``tune`` is what the
repair's rules were written against; ``heldout`` was written after them and is what is
reported. The graph stage is the core's, as ``eoc query`` and the browser build it, over the
knowledge pack; each question is asked of it alone:

* **right**: answered, with the answer to the question meant;
* **wrong**: answered with anything else (another name's answer: the failure that matters);
* **passed**: not answered (it goes on to the model, which reads it whole);
* **names changed**: repairs that made a word the question meant does not hold.

``--record`` writes the result to ``docs/figures/misspelt.json``, which the docs cite.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it

from record import record

from eoc.assemble import default_stages
from eoc.query import Query
from eoc.stages.graph import GraphStage
from eoc.text.forms import normalize

SUITE = Path(__file__).resolve().parent / "suites" / "misspelt-facts.jsonl"
PARTS = ("tune", "heldout")


def load(parts: tuple[str, ...] = PARTS) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["part"] in parts]


def graph_stage() -> GraphStage:
    """The core's graph stage over the knowledge pack, as the default cascade builds it."""
    return next(s for s in default_stages() if isinstance(s, GraphStage))


def measure(rows: list[dict[str, Any]], graph: GraphStage | None = None) -> dict[str, Any]:
    graph = graph or graph_stage()
    outcomes = []
    for r in rows:
        meant = graph.lookup(Query(r["meant"]))
        got = graph.lookup(Query(r["asked"]))
        _, repairs = graph._fact_words().repair(normalize(r["asked"]))
        meant_words = set(normalize(r["meant"]).split())
        changed = [(a, b) for a, b in repairs if b not in meant_words]
        if got is None:
            verdict = "passed"
        elif meant is not None and got.payload == meant.payload:
            verdict = "right"
        else:
            verdict = "wrong"
        outcomes.append(
            {
                "id": r["id"],
                "part": r["part"],
                "asked": r["asked"],
                "meant": r["meant"],
                "verdict": verdict,
                "meant_answered": meant is not None,
                "repairs": repairs,
                "names_changed": changed,
            }
        )
    return summary(outcomes)


def summary(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in PARTS:
        mine = [o for o in outcomes if o["part"] == part]
        if not mine:
            continue
        misspelt = [o for o in mine if normalize(o["asked"]) != normalize(o["meant"])]
        spelled_right = [o for o in mine if o not in misspelt]
        out[part] = {
            "questions": len(mine),
            "misspelt": len(misspelt),
            "misspelt_right": sum(o["verdict"] == "right" for o in misspelt),
            "right": sum(o["verdict"] == "right" for o in mine),
            "wrong": sum(o["verdict"] == "wrong" for o in mine),
            "passed": sum(o["verdict"] == "passed" for o in mine),
            "names_changed": sum(len(o["names_changed"]) for o in mine),
            "meant_unanswered": sum(not o["meant_answered"] for o in mine),
            "spelled_right_kept": sum(
                o["verdict"] == "right" and not o["repairs"] for o in spelled_right
            ),
            "spelled_right": len(spelled_right),
            "outcomes": mine,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", action="append", choices=PARTS, help="default: both")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", action="store_true", help="list every question's outcome")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/misspelt.json, which the docs cite (both parts)",
    )
    args = ap.parse_args(argv)
    if args.record and args.part:
        ap.error("--record records both parts: leave out --part")
    result = measure(load(tuple(args.part or PARTS)))
    if args.record:
        record("misspelt", result, argv=argv)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for part, s in result.items():
        print(
            f"{part:8s} {s['questions']:3d} questions: right {s['right']}, wrong {s['wrong']}, "
            f"passed {s['passed']}, names changed {s['names_changed']}; misspelt "
            f"{s['misspelt_right']}/{s['misspelt']} right, spelled right and kept "
            f"{s['spelled_right_kept']}/{s['spelled_right']}"
            f" (meant unanswered: {s['meant_unanswered']})"
        )
        for o in s["outcomes"]:
            if args.show or o["verdict"] == "wrong" or o["names_changed"]:
                print(f"  {o['verdict']:6s} {o['id']} {o['asked']!r} {o['repairs']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
