"""Right in context: does a cheap answer stay right when earlier turns change what is asked?

    python bench/context.py [--suite context-conversations|context-conversations-sealed]
                            [--no-minilm] [--json] [--show N] [--record]

The suite (``bench/suites/context-conversations.jsonl``, and a sealed part run once at the end)
holds conversations written by hand, one by one, apart from eoc's rules: about half where an
earlier turn changes the meaning or the form of the last question's answer (an instruction,
"answer only in JSON"; a definition, "here ^ means XOR"; a sense chosen for a name, "I'm asking
about US states" then "capital of Georgia?"; units or a language asked for; a changed world),
half where it does not. Each lists the answers that are right in that conversation.

Each conversation is sent as a chat request (``parse_chat``) to a cascade with eoc's seeded
stages (the pack's kv, the graph, computed answers) and a model that marks what reaches it:

* **served**: a cheap stage (cache, kv, graph) answered; **right** if one of the conversation's
  right answers is in it (whole words, case and thousands separators aside), else **wrong**;
* **passed**: it went to the model (never wrong, costs the model's joules).

Configurations: eoc's native default (MiniLM kv), eoc's core and browser default (hashed
n-grams), and for reference GPTCache's default: its ``last_content`` pre-processing keys a
request by its last message alone, so a cache that once answered that question asked alone
(with the pack's answer, which is right for it alone) serves it in every conversation.

``--record`` writes the result to ``docs/figures/<suite>.json`` (``context-conversations`` is
recorded as ``context``, the sealed part as ``context-sealed``), which the docs cite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it

from record import record

from eoc import Cascade
from eoc.assemble import EMBEDDER_ENV, default_stages
from eoc.chat.request import ChatDefaults, parse_chat
from eoc.meter.counter import StubCounter
from eoc.query import Stage
from eoc.stages.neural import Reply

SUITES = Path(__file__).resolve().parent / "suites"
MARK = "<<the model answered>>"
_SEP = re.compile(r"(?<=\d)[,\u202f\u00a0](?=\d{3})")
_NON_WORD = re.compile(r"[^\w.+\-/°☿♀♂♃♄♅♆⊕]+")


class Marker:
    """A model that only marks that a request reached it (never remembered)."""

    name = "marker"
    runs_model = False

    def generate(self, prompt: str) -> Reply:
        return Reply(MARK)

    def chat(self, request: Any, on_piece: Any = None) -> Reply:
        return Reply(MARK)


def load(name: str) -> list[dict[str, Any]]:
    path = SUITES / f"{name}.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    for r in rows:
        missing = {"id", "class", "context_changes", "messages", "acceptable"} - set(r)
        if missing:
            raise SystemExit(f"{path}: {r.get('id', '?')} lacks {sorted(missing)}")
    return rows


def _flat(text: str) -> str:
    t = _SEP.sub("", text.casefold())
    return " " + " ".join(_NON_WORD.sub(" ", t).split()) + " "


def right(payload: str, acceptable: list[str]) -> bool:
    """Whether one of the right answers is in ``payload``, as whole words."""
    said = _flat(payload)
    return any(_flat(a).strip() and _flat(a) in said for a in acceptable)


def cascade(embedder: str) -> Cascade:
    """eoc's seeded stages with ``embedder`` ("minilm" or "hashed") and the marking model."""
    before = os.environ.get(EMBEDDER_ENV)
    os.environ[EMBEDDER_ENV] = embedder
    try:
        stages = default_stages(Marker())
    finally:
        if before is None:
            del os.environ[EMBEDDER_ENV]
        else:
            os.environ[EMBEDDER_ENV] = before
    return Cascade(stages, meter=StubCounter())


def run(c: Cascade, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each conversation's outcome: served (and right or wrong) or passed to the model."""
    defaults = ChatDefaults("m")
    out = []
    for r in rows:
        request = parse_chat({"model": "m", "messages": r["messages"]}, defaults)
        got = c.resolve(request.query())
        served = got.stage is not Stage.NEURAL
        out.append(
            {
                "id": r["id"],
                "class": r["class"],
                "changes": r["context_changes"],
                "stage": got.stage.value,
                "served": served,
                "right": served and right(got.payload, r["acceptable"]),
                "payload": got.payload if served else "",
            }
        )
    return out


def gptcache_default(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GPTCache's default (``last_content``): the last message alone decides, so the answer
    cached for that question asked alone (``pack_answer``) is served in every conversation."""
    return [
        {
            "id": r["id"],
            "class": r["class"],
            "changes": r["context_changes"],
            "stage": "cache",
            "served": True,
            "right": right(r["pack_answer"], r["acceptable"]),
            "payload": r["pack_answer"],
        }
        for r in rows
        if r.get("pack_answer")
    ]


def summary(label: str, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    changed = [o for o in outcomes if o["changes"]]
    same = [o for o in outcomes if not o["changes"]]
    wrong = [o for o in outcomes if o["served"] and not o["right"]]
    return {
        "configuration": label,
        "conversations": len(outcomes),
        "served": sum(o["served"] for o in outcomes),
        "wrong": len(wrong),
        "changed_served_wrong": sum(o in wrong for o in changed),
        "changed": len(changed),
        "unchanged": len(same),
        "unchanged_served_right": sum(o["served"] and o["right"] for o in same),
        "wrong_ids": [o["id"] for o in wrong],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", default="context-conversations")
    ap.add_argument("--no-minilm", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="list up to N wrong answers")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/ (context.json or context-sealed.json), which the "
        "docs cite (not with --no-minilm)",
    )
    args = ap.parse_args(argv)
    if args.record and args.no_minilm:
        ap.error("--record records every configuration: leave out --no-minilm")
    rows = load(args.suite)
    configs = [("eoc core default: hashed n-grams + guard", "hashed")]
    if not args.no_minilm:
        configs.insert(0, ("eoc native default: MiniLM + guard", "minilm"))
    results = []
    shown: list[str] = []
    for label, embedder in configs:
        outcomes = run(cascade(embedder), rows)
        results.append(summary(label, outcomes))
        for o in outcomes:
            if o["served"] and not o["right"] and len(shown) < args.show:
                shown.append(f"  {label[:18]} wrong [{o['class']}] {o['id']}: {o['payload']!r:.60}")
    results.append(summary("GPTCache default (last message alone)", gptcache_default(rows)))
    if args.record:
        file = args.suite.replace("-conversations", "")
        record("context", {"suite": args.suite, "results": results}, file=file, argv=argv)
    if args.json:
        print(json.dumps({"suite": args.suite, "results": results}, indent=1))
        return 0
    n_changed = results[0]["changed"]
    print(f"{args.suite}: {len(rows)} conversations, {n_changed} where context changes the answer")
    for s in results:
        print(
            f"{s['configuration']:45s} served {s['served']:3d}  wrong {s['wrong']:3d} "
            f"({s['changed_served_wrong']} of {s['changed']} changed by context)  "
            f"unchanged served right {s['unchanged_served_right']}/{s['unchanged']}"
        )
    for line in shown:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
