"""The kv's judge of meaning on people's everyday rewordings: served, wrong, ms and J per judgement.

    python bench/judge.py [--set everyday|human] [--part tune|heldout|sealed|sealed2 ...]
                          [--scores FILE] [--sweep] [--json] [--show N] [--record]

For each part, a kv stage holds every stored FAQ question of the part with its answer; each
pair's asked text is looked up (as ``bench/human.py`` does): a should-hit pair served its own
answer is *served*, another answer *wrong*; a trap served anything is *wrong*. Configurations,
all on the same MiniLM vectors:

* eoc native default with the judge off (``EOC_JUDGE=off``): MiniLM + the rule guard;
* the student alone (:mod:`eoc_native.judge.student`): it decides where it is sure, and a pair
  it is unsure of is refused;
* the judge alone (``EOC_JUDGE=on``, no student): every judgeable pair goes to the model;
* the judge with the student in front (``EOC_JUDGE=on``): the shipped native default;
* plain cosine at GPTCache's default (cosine >= 0.6, no guard), beside each figure.

Each configuration prints the judgements the model ran, their mean milliseconds and their mean
estimated joules (the runner's estimate: :mod:`eoc_native.llm.energy`). ``--scores FILE`` keeps
each pair's P(yes) and its ms and µJ, so a second run re-reads them instead of running the model
(the ms and J printed are then those recorded). ``--sweep`` prints, on the parts given, what the
judge alone would serve at each threshold: tune it on ``tune`` only.

``--set everyday`` (default) is ``bench/suites/everyday`` (its README says how it was written and
split); ``--set human`` the older ``bench/suites/human``. ``sealed`` and ``sealed2`` are each run
once, after the last change to what they measure.

``--record`` writes the result to ``docs/figures/judge-<set>.json`` (each part under its name,
each configuration under its key: ``judge_off``, ``student``, ``judge``, ``judge_student``,
``gptcache``), which the docs cite. A recording re-runs no tuning: the sealed parts' figures are
what the shipped judge serves of them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

from human import measure
from kvquality import GPTCACHE_COSINE, GivenVectors, minilm_vectors
from record import record

from eoc import Query
from eoc.stages import KVStage
from eoc.stages.guard import EntityGuard, NoGuard
from eoc.stages.judging import Judging, Verdict
from eoc_native.judge.prompt import PROMPT_ID

SUITES = Path(__file__).resolve().parent / "suites"
PARTS = ("tune", "heldout", "sealed", "sealed2")
FIELDS = {"id", "domain", "stored", "stored_answer", "asked", "same", "class"}


def load(which: str, part: str) -> list[dict[str, Any]]:
    """The pairs of one part of a set (everyday: every domain file's rows of that part)."""
    if which == "human":
        files = [SUITES / "human" / f"{part}.jsonl"]
    else:
        files = sorted((SUITES / "everyday").glob("*.jsonl"))
    rows = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            missing = FIELDS - set(r)
            if missing:
                raise SystemExit(f"{path}: {r.get('id', '?')} lacks {sorted(missing)}")
            if which == "human" or r["part"] == part:
                rows.append(r)
    return rows


class ScoredJudge:
    """The model judge, with each pair's P(yes), ms and µJ kept in a file (``--scores``)."""

    def __init__(self, scores: Path | None, serve_at: float) -> None:
        from eoc_native.judge import ModelJudge

        self.model = ModelJudge(serve_at=serve_at)
        self.name = self.model.name
        self.serve_at = serve_at
        self.path = scores
        self.known: dict[tuple[str, str], dict[str, float]] = {}
        if scores is not None and scores.exists():
            for line in scores.read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                if r.get("prompt") == PROMPT_ID:  # read with another prompt: not this judge's
                    self.known[(r["query"], r["stored"])] = r
        self.runs: list[dict[str, float]] = []  # every judgement this run asked for

    def expected_uj(self) -> int:
        if self.runs:
            return max(1, round(sum(r["uj"] for r in self.runs) / len(self.runs)))
        return self.model.expected_uj()

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
        from eoc.cost import JouleCost

        r = self.known.get((query, stored))
        if r is None:
            t0 = time.perf_counter()
            p, cost = self.model.probability(query, stored)
            r = {
                "prompt": PROMPT_ID,
                "query": query,
                "stored": stored,
                "p": p,
                "ms": (time.perf_counter() - t0) * 1000,
                "uj": cost.uj,
            }
            self.known[(query, stored)] = r
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(r) + "\n")
        self.runs.append(r)
        cost = JouleCost.estimated(int(r["uj"]), "judge (as recorded)")
        mix = self.model.mix
        if mix is None:
            return Verdict(r["p"] >= self.serve_at, r["p"], self.name, cost)
        q = mix.probability(r["p"], query, stored, reason=reason, cosine=cosine)
        return Verdict(q >= mix.serve_at, q, self.name, cost)


def sweep(rows: list[dict[str, Any]], judge: ScoredJudge, vectors: dict[str, Any]) -> None:
    """What the judge alone serves at each threshold (every judgeable pair judged)."""
    from eoc_native.semantic import ExactIndex

    kv = KVStage(embedder=GivenVectors(vectors), index=ExactIndex(384), threshold=0.7)
    kv.judging = Judging(judge, None, mode="on")
    for r in rows:
        kv.put(r["stored"], r["stored_answer"])
    judged: list[tuple[float, bool]] = []  # (p, right to serve)
    plain = {"served": 0, "wrong": 0}
    for r in rows:
        judge.runs.clear()
        kv.judging.forget()
        got = kv.lookup(Query(r["asked"]))
        if got is not None and not judge.runs:
            ok = r["same"] and got.payload == r["stored_answer"]
            plain["served" if ok else "wrong"] += 1
        for run in judge.runs:
            answer = next((x["stored_answer"] for x in rows if x["stored"] == run["stored"]), None)
            judged.append((run["p"], bool(r["same"] and answer == r["stored_answer"])))
    should = sum(1 for r in rows if r["same"])
    print(
        f"guard alone: served {plain['served']}, wrong {plain['wrong']}; judged pairs {len(judged)}"
    )
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        ok = sum(1 for p, right in judged if p >= t and right)
        bad = sum(1 for p, right in judged if p >= t and not right)
        served = plain["served"] + ok
        hits = served + plain["wrong"] + bad
        print(
            f"  serve_at {t:.1f}: served {served}/{should} ({100 * served / should:5.1f} %), "
            f"wrong {plain['wrong'] + bad}/{hits} ({100 * (plain['wrong'] + bad) / max(1, hits):4.1f} %)"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="everyday", choices=("everyday", "human"))
    ap.add_argument("--part", action="append", choices=PARTS, help="default: tune and heldout")
    ap.add_argument("--scores", type=Path, help="keep (and re-read) the judge's P(yes) per pair")
    ap.add_argument("--sweep", action="store_true", help="the judge alone at each threshold")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print N misses and wrong hits")
    ap.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/judge-<set>.json, which the docs cite",
    )
    args = ap.parse_args(argv)
    if args.record and args.sweep:
        ap.error("--record records the configurations' figures: leave out --sweep")
    from eoc_native.judge import JUDGE_FLOOR
    from eoc_native.judge.model import SERVE_AT
    from eoc_native.judge.student import shipped_student
    from eoc_native.semantic import ExactIndex

    parts = args.part or ["tune", "heldout"]
    data = {p: load(args.set, p) for p in parts}
    texts = sorted({t for rows in data.values() for r in rows for t in (r["stored"], r["asked"])})
    vectors = minilm_vectors(texts)
    judge = ScoredJudge(args.scores, SERVE_AT)
    if args.sweep:
        for part, rows in data.items():
            print(f"[{part}]")
            sweep(rows, judge, vectors)
        return 0
    student = shipped_student()
    configs: list[tuple[str, float, Any, Callable[[], Judging | None]]] = [
        ("native default, judge off (MiniLM + guard)", 0.7, EntityGuard(), lambda: None),
    ]
    keys = {
        "native default, judge off (MiniLM + guard)": "judge_off",
        "student alone": "student",
        "judge alone (EOC_JUDGE=on, no student)": "judge",
        "judge + student (EOC_JUDGE=on): native default": "judge_student",
        "plain cosine, GPTCache default (>= 0.6)": "gptcache",
    }
    if student is not None:
        configs.append(
            (
                "student alone",
                0.7,
                EntityGuard(),
                lambda: Judging(None, student, mode="on", floor=JUDGE_FLOOR),
            )
        )
    configs += [
        (
            "judge alone (EOC_JUDGE=on, no student)",
            0.7,
            EntityGuard(),
            lambda: Judging(judge, None, mode="on", floor=JUDGE_FLOOR),
        ),
    ]
    if student is not None:
        configs.append(
            (
                "judge + student (EOC_JUDGE=on): native default",
                0.7,
                EntityGuard(),
                lambda: Judging(judge, student, mode="on", floor=JUDGE_FLOOR),
            )
        )
    configs.append(
        ("plain cosine, GPTCache default (>= 0.6)", GPTCACHE_COSINE, NoGuard(), lambda: None)
    )
    report = []
    for label, threshold, guard, judging in configs:
        for part, rows in data.items():
            judge.runs.clear()

            def make_kv(
                threshold: float = threshold, guard: Any = guard, judging: Any = judging
            ) -> KVStage:
                kv = KVStage(
                    embedder=GivenVectors(vectors),
                    index=ExactIndex(384),
                    threshold=threshold,
                    guard=guard,
                )
                kv.judging = judging()
                return kv

            m = measure(rows, make_kv)
            runs = list(judge.runs)
            m["judgements"] = len(runs)
            m["ms_per_judgement"] = sum(r["ms"] for r in runs) / len(runs) if runs else None
            m["j_per_judgement"] = sum(r["uj"] for r in runs) / len(runs) / 1e6 if runs else None
            report.append({"configuration": label, "key": keys[label], "part": part, **m})
            if not args.json:
                per = (
                    f"  judged {len(runs)}: {m['ms_per_judgement']:.0f} ms, "
                    f"{m['j_per_judgement']:.1f} J each (estimated)"
                    if runs
                    else ""
                )
                print(
                    f"{label:48s} {part:8s} served {m['served']:4d}/{m['should_hit']:<4d} "
                    f"({m['served_pct']:5.1f} %)  wrong {m['wrong']:3d}/{m['hits']:<4d} "
                    f"({m['wrong_pct_of_hits']:4.1f} % of hits){per}"
                )
                for kind, items in (("missed", m["misses"]), ("wrong", m["wrongs"])):
                    for cls, stored, asked in items[: args.show]:
                        print(f"    {kind:6s} [{cls}] {stored!r} <- {asked!r}")
    for r in report:
        r["misses"], r["wrongs"] = len(r["misses"]), len(r["wrongs"])
    if args.record:
        by_part: dict[str, dict[str, Any]] = {}
        for r in report:
            by_part.setdefault(r["part"], {})[r["key"]] = r
        record("judge", {"set": args.set, "parts": by_part}, file=f"judge-{args.set}", argv=argv)
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
