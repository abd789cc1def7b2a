"""Distil the kv's judge of meaning into the student (eoc_native/judge/data/student.json).

    python scripts/train_student.py [--label] [--labels FILE] [--out FILE]

1. **The pairs the judge would see.** For each domain of ``bench/suites/student/train.jsonl``
   (written for this, in ten domains no evaluation set uses), a kv stage holds the domain's
   stored questions (MiniLM, the native default); each asked text is looked up, and every pair
   the kv hands to the judge (refused by the guard only for want of evidence, or short of the
   cosine, at or above the judge's floor) is recorded, its stored question's own or another's.
2. **Labels from the judge, never from the file's own labels** (``--label`` runs the model on the
   pairs not yet labelled and appends them to ``--labels``; a later run re-reads them).
3. **A logistic regression** on the student's features (:mod:`eoc_native.judge.student`), fitted
   to the judge's P(yes) (cross-entropy against the soft label, a little L2).
4. **The judge's mix** (``data/mix.json``, :class:`eoc_native.judge.student.Mix`): a logistic
   regression of the hand labels on the judge's log-odds and the student's features, over the
   student's pairs and the pairs the kv hands the judge on the everyday set's **tune** part
   (``bench/suites/everyday``; heldout and sealed are never read). Its ``serve_at`` is chosen on
   the tune pairs' cross-validated probabilities: the least at which at most 1 % of what it
   serves there is wrong.
5. **Where the student decides alone:** ``serve_at`` is the least probability above which the
   judge said yes to at least :data:`AGREE` of the training pairs (and to every one of the last
   :data:`MIN_SURE` of them), ``refuse_at`` the most below which it said no as often. Between
   them the judge decides. Serving alone must also hold on the tune pairs' hand labels: where the
   student would serve one of them wrongly, it never serves alone (``serve_at`` 1) and only
   refuses.

The hand-written ``same`` labels are printed beside (how often the judge agrees with them) and
used for nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from kvquality import GivenVectors, minilm_vectors  # noqa: E402

from eoc import Query  # noqa: E402
from eoc.stages import KVStage  # noqa: E402
from eoc.stages.judging import Judging, Verdict  # noqa: E402
from eoc_native.judge import JUDGE_FLOOR  # noqa: E402
from eoc_native.judge.model import SERVE_AT, ModelJudge  # noqa: E402
from eoc_native.judge.prompt import PROMPT_ID  # noqa: E402
from eoc_native.judge.student import (  # noqa: E402
    FEATURES,
    MIX_FEATURES,
    Mix,
    StudentJudge,
    features,
)
from eoc_native.semantic import ExactIndex  # noqa: E402

TRAIN = ROOT / "bench" / "suites" / "student" / "train.jsonl"
EVERYDAY = ROOT / "bench" / "suites" / "everyday"
LABELS = ROOT / "bench" / "suites" / "student" / "judge_labels.jsonl"
OUT = ROOT / "native" / "eoc_native" / "judge" / "data" / "student.json"
MIX_OUT = ROOT / "native" / "eoc_native" / "judge" / "data" / "mix.json"
MIX_WRONG = 0.01
AGREE = 0.98
MIN_SURE = 10
L2 = 1e-3


class Recorder:
    """A judge that records each pair handed to it and serves none (so every candidate is seen)."""

    name = "recorder"

    def __init__(self) -> None:
        self.pairs: list[dict[str, Any]] = []

    def expected_uj(self) -> int:
        return 1

    def judge(self, query: str, stored: str, *, reason: str, cosine: float) -> Verdict:
        self.pairs.append({"query": query, "stored": stored, "reason": reason, "cosine": cosine})
        return Verdict(False, 0.0, self.name)


def judged_pairs(
    rows: list[dict[str, Any]], vectors: dict[str, Any], *, by_domain: bool = True
) -> list[dict[str, Any]]:
    """The pairs a kv holding the rows' stored questions (one per domain, or one for all, as
    ``bench/judge.py`` measures) hands its judge when each asked text is looked up."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["domain"] if by_domain else ""].append(r)
    out: list[dict[str, Any]] = []
    for domain_rows in groups.values():
        recorder = Recorder()
        kv = KVStage(embedder=GivenVectors(vectors), index=ExactIndex(384), threshold=0.7)
        kv.judging = Judging(recorder, None, mode="on", floor=JUDGE_FLOOR)
        for r in domain_rows:
            kv.put(r["stored"], f"answer to {r['stored']}")
        same = {(r["asked"], r["stored"]): r["same"] for r in domain_rows}
        for r in domain_rows:  # a pair with another stored question is not the same question
            for other in {x["stored"] for x in domain_rows} - {r["stored"]}:
                same.setdefault((r["asked"], other), False)
        for r in domain_rows:
            kv.lookup(Query(r["asked"]))
        for p in recorder.pairs:
            p["hand_label"] = same.get((p["query"], p["stored"]))  # None: another stored question
            out.append(p)
    return out


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression to soft labels ``y`` by Newton's method (a few features)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) / len(y) + L2 * np.r_[w[:-1], 0]
        hess = (xb.T * (p * (1 - p))) @ xb / len(y) + L2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def sure_thresholds(p: np.ndarray, yes: np.ndarray) -> tuple[float, float]:
    order = np.argsort(-p)
    serve_at = 1.0
    agreed = 0
    for n, i in enumerate(order, 1):
        agreed += bool(yes[i])
        if n >= MIN_SURE and agreed / n >= AGREE and all(yes[order[max(0, n - MIN_SURE) : n]]):
            serve_at = float(p[i])
    order = np.argsort(p)
    refuse_at = 0.0
    agreed = 0
    for n, i in enumerate(order, 1):
        agreed += not yes[i]
        if n >= MIN_SURE and agreed / n >= AGREE and not any(yes[order[max(0, n - MIN_SURE) : n]]):
            refuse_at = float(p[i])
    return min(1.0, serve_at), max(0.0, min(refuse_at, serve_at - 1e-6))


def _x(p: dict[str, Any], known: dict[tuple[str, str], float]) -> list[float]:
    prob = min(max(known[(p["query"], p["stored"])], 1e-6), 1 - 1e-6)
    return [
        float(np.log(prob / (1 - prob))),
        *features(p["query"], p["stored"], reason=p["reason"], cosine=p["cosine"]),
    ]


def fit_mix(
    pairs: list[dict[str, Any]],
    tune_pairs: list[dict[str, Any]],
    known: dict[tuple[str, str], float],
) -> None:
    """Fit the judge's mix to the hand labels; choose where it serves on tune's CV scores."""
    train = [p for p in pairs if p["hand_label"] is not None and (p["query"], p["stored"]) in known]
    xt = np.array([_x(p, known) for p in train])
    yt = np.array([1.0 if p["hand_label"] else 0.0 for p in train])
    xu = np.array([_x(p, known) for p in tune_pairs])
    yu = np.array([1.0 if p["hand_label"] else 0.0 for p in tune_pairs])
    folds = np.array_split(np.random.default_rng(0).permutation(len(yu)), 5)
    cv = np.zeros(len(yu))
    for f in folds:  # each tune fold scored by a mix fitted without it
        rest = np.setdiff1d(np.arange(len(yu)), f)
        w, b = fit(np.vstack([xt, xu[rest]]), np.r_[yt, yu[rest]])
        cv[f] = 1 / (1 + np.exp(-(xu[f] @ w + b)))
    serve_at = 0.99
    for t in sorted(set(np.round(cv, 4)), reverse=True):
        served = cv >= t
        if served.sum() and (yu[served] == 0).sum() / served.sum() > MIX_WRONG:
            break
        serve_at = float(t)
    w, b = fit(np.vstack([xt, xu]), np.r_[yt, yu])
    mix = Mix(tuple(float(v) for v in w), b, min(0.99, max(0.01, serve_at)))
    doc = mix.to_doc()
    served = cv >= mix.serve_at
    doc["fitted_on"] = {
        "student_pairs": len(train),
        "tune_pairs": len(tune_pairs),
        "tune_same": int(yu.sum()),
        "tune_served_cv": int(served.sum()),
        "tune_wrong_cv": int((yu[served] == 0).sum()),
        "prompt": PROMPT_ID,
    }
    MIX_OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print("mix:", json.dumps(doc["fitted_on"]), f"serve_at {mix.serve_at:.3f}")
    for name, v in zip(MIX_FEATURES, w, strict=True):
        print(f"  {name:22s} {v:+.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", action="store_true", help="run the judge on unlabelled pairs")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines() if line]
    tune = [
        r
        for path in sorted(EVERYDAY.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line and (r := json.loads(line))["part"] == "tune"
    ]
    texts = {t for r in (*rows, *tune) for t in (r["stored"], r["asked"])}
    vectors = minilm_vectors(sorted(texts))
    pairs = judged_pairs(rows, vectors)
    tune_pairs = judged_pairs(tune, vectors, by_domain=False)
    known: dict[tuple[str, str], float] = {}
    if args.labels.exists():
        for line in args.labels.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r.get("prompt") == PROMPT_ID:  # read with another prompt: not this judge's
                known[(r["query"], r["stored"])] = r["p"]
    todo = [p for p in (*pairs, *tune_pairs) if (p["query"], p["stored"]) not in known]
    print(
        f"{len(pairs)} + {len(tune_pairs)} (tune) pairs the judge would see; "
        f"{len(todo)} not labelled yet",
        file=sys.stderr,
    )
    if todo and args.label:
        judge = ModelJudge(mix=None)
        with args.labels.open("a", encoding="utf-8") as f:
            for i, p in enumerate(todo, 1):
                prob, _ = judge.probability(p["query"], p["stored"])
                known[(p["query"], p["stored"])] = prob
                row = {"prompt": PROMPT_ID, "query": p["query"], "stored": p["stored"], "p": prob}
                f.write(json.dumps(row) + "\n")
                f.flush()
                if i % 25 == 0:
                    print(f"  labelled {i}/{len(todo)}", file=sys.stderr)
    if any((p["query"], p["stored"]) not in known for p in tune_pairs):
        raise SystemExit("the tune pairs are not all labelled: run with --label first")
    fit_mix(pairs, tune_pairs, known)
    labelled = [p for p in pairs if (p["query"], p["stored"]) in known]
    if len(labelled) < 50:
        raise SystemExit("fewer than 50 labelled pairs: run with --label first")
    x = np.array(
        [
            features(p["query"], p["stored"], reason=p["reason"], cosine=p["cosine"])
            for p in labelled
        ]
    )
    y = np.array([known[(p["query"], p["stored"])] for p in labelled])
    w, b = fit(x, y)
    z = x @ w + b
    prob = 1 / (1 + np.exp(-z))
    yes = y >= SERVE_AT
    serve_at, refuse_at = sure_thresholds(prob, yes)
    # serving alone must hold on tune's hand labels too: one wrong there, and it never serves
    tune_p = 1 / (1 + np.exp(-(np.array([_x(p, known)[1:] for p in tune_pairs]) @ w + b)))
    tune_served = [
        p["hand_label"] for p, q in zip(tune_pairs, tune_p, strict=True) if q >= serve_at
    ]
    if not all(tune_served):
        print(
            f"the student alone would serve {len(tune_served)} tune pairs, "
            f"{tune_served.count(False)} wrongly: it only refuses",
            file=sys.stderr,
        )
        serve_at = 1.0
    student = StudentJudge(tuple(float(v) for v in w), b, serve_at, refuse_at)
    doc = student.to_doc()
    alone = (prob >= serve_at) | (prob <= refuse_at)
    agree = ((prob >= serve_at) & yes) | ((prob <= refuse_at) & ~yes)
    hand = [p for p in labelled if p["hand_label"] is not None]
    hand_agree = sum(
        (known[(p["query"], p["stored"])] >= SERVE_AT) == p["hand_label"] for p in hand
    )
    doc["trained_on"] = {
        "pairs": len(labelled),
        "judge_said_yes": int(yes.sum()),
        "student_decides_alone": int(alone.sum()),
        "student_agrees_with_judge_where_alone": int(agree.sum()),
        "judge_agrees_with_hand_labels": f"{hand_agree}/{len(hand)}",
        "data": "bench/suites/student/train.jsonl (judge-labelled: scripts/train_student.py)",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(doc["trained_on"], indent=1))
    print(f"serve_at {serve_at:.3f}, refuse_at {refuse_at:.3f}; weights by feature:")
    for name, v in zip(FEATURES, w, strict=True):
        print(f"  {name:22s} {v:+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
