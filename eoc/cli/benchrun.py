"""``eoc bench run SUITE.json``: run a suite of cases through the cascade and report what it cost.

A suite is a JSON list of cases (or ``{"cases": [...]}``), each ``{"id", "prompt", "expected"}``;
``expected`` may be ``null``. Cases run one by one, in order, through one cascade, so repeats
become cache hits as they would in use. A case is correct when ``expected`` occurs in the
answer, ignoring case.

Reported: total joules, joules per correct answer, accuracy over the cases that have an
expected answer, latency p50/p95/p99 (nearest rank), the share of cases answered at each stage,
the provenance of the figures (how many measured, how many estimated, and the worst of them),
and what the answers given without the model avoided (:mod:`eoc.ledger`), by provenance.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eoc.cascade import Cascade
from eoc.cost import Provenance, worst_of
from eoc.errors import BadJson, EocError, InputError
from eoc.files.bounded import loads_strict, read_bounded
from eoc.ledger import AVOIDED_PROVENANCES
from eoc.query import Stage

MAX_CASES = 100_000
MAX_SUITE_BYTES = 64 << 20


class BadSuite(InputError):
    """The suite file is not a list of {id, prompt, expected} cases."""


@dataclass(frozen=True)
class Case:
    id: str
    prompt: str
    expected: str | None


@dataclass(frozen=True)
class CaseResult:
    case: Case
    stage: str | None
    payload: str | None
    cost_uj: int
    provenance: str | None
    latency_ns: int
    correct: bool | None  # None: no expected answer
    error: str = ""
    tokens_out: int | None = None  # a model's generated tokens, when it counted them
    avoided_uj: int | None = None  # the model's work an answer without it avoided (eoc.ledger)
    avoided_provenance: str | None = None


def load_suite(path: str | Path) -> list[Case]:
    """Read and check a suite; errors name the case."""
    p = Path(path)
    data = read_bounded(p, MAX_SUITE_BYTES, what="bench suite", error=BadSuite, stdin_ok=False)
    try:
        doc = loads_strict(data, what=str(p))
    except BadJson as exc:
        raise BadSuite(exc.reason) from None
    return parse_suite(doc, str(p))


def parse_suite(doc: Any, source: str = "<suite>") -> list[Case]:
    if isinstance(doc, dict) and "cases" in doc:
        doc = doc["cases"]
    if not isinstance(doc, list) or not doc:
        raise BadSuite(
            f"{source}: a suite is a non-empty JSON list of {{id, prompt, expected}} cases"
        )
    if len(doc) > MAX_CASES:
        raise BadSuite(f"{source}: {len(doc)} cases; the most a suite may hold is {MAX_CASES}")
    cases: list[Case] = []
    seen: set[str] = set()
    for i, item in enumerate(doc):
        where = f"{source}: case {i}"
        if not isinstance(item, dict):
            raise BadSuite(f"{where} is not an object with id, prompt and expected")
        cid, prompt, expected = item.get("id"), item.get("prompt"), item.get("expected", None)
        if isinstance(cid, bool) or not isinstance(cid, (str, int)):
            raise BadSuite(f"{where}: id must be a string or a number")
        if not isinstance(prompt, str):
            raise BadSuite(f"{where} ({cid}): prompt must be text")
        if expected is not None and (not isinstance(expected, str) or not expected.strip()):
            raise BadSuite(f"{where} ({cid}): expected must be non-empty text or null")
        if str(cid) in seen:
            raise BadSuite(f"{where}: id {cid!r} is used twice: give every case its own id")
        seen.add(str(cid))
        cases.append(Case(str(cid), prompt, expected))
    return cases


def nearest_rank(values: Sequence[float], pct: float) -> float | None:
    """The ``pct`` percentile by the nearest-rank method (``None`` for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass
class SuiteReport:
    results: list[CaseResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        done = [r for r in self.results if r.stage is not None]
        total_uj = sum(r.cost_uj for r in done)
        judged = [r for r in self.results if r.correct is not None]
        correct = sum(1 for r in judged if r.correct)
        lat_us = [r.latency_ns / 1000 for r in done]
        provs = [Provenance(r.provenance) for r in done if r.provenance]
        stages = {s.value: sum(1 for r in done if r.stage == s.value) for s in Stage}
        n = len(self.results)
        counted = [r for r in done if r.tokens_out is not None]
        tokens = sum(r.tokens_out or 0 for r in counted)
        model_uj = sum(r.cost_uj for r in counted)
        model = {
            "answers": len(counted),
            "tokens_out": tokens,
            "j": model_uj / 1e6 if counted else None,
            "uj_per_token": round(model_uj / tokens) if tokens else None,
            "worst": worst_of([Provenance(r.provenance) for r in counted if r.provenance]).value
            if counted
            else None,
        }
        cheap = [r for r in done if r.stage != Stage.NEURAL.value]
        figured = [r for r in cheap if r.avoided_uj is not None]
        avoided = {
            "answers": len(figured),
            "without_figure": len(cheap) - len(figured),
            # no answer with a figure is no figure: None, never a total of 0 J
            "j": sum(r.avoided_uj or 0 for r in figured) / 1e6 if figured else None,
            "by_provenance": {
                p: {
                    "answers": len(mine),
                    "j": sum(r.avoided_uj or 0 for r in mine) / 1e6,
                }
                for p in AVOIDED_PROVENANCES
                if (mine := [r for r in figured if r.avoided_provenance == p])
            },
        }
        return {
            "cases": n,
            "answered": len(done),
            "errors": n - len(done),
            # no answered case means no figure at all: None, never a total of 0 J
            "total_j": total_uj / 1e6 if done else None,
            "j_per_correct": (total_uj / 1e6 / correct) if correct and done else None,
            "accuracy": (correct / len(judged)) if judged else None,
            "judged": len(judged),
            "latency_us": {f"p{p}": nearest_rank(lat_us, p) for p in (50, 95, 99)},
            "stage_share": {k: v / n for k, v in stages.items()},
            "model": model,
            "avoided": avoided,
            "provenance": {
                "measured": sum(1 for p in provs if p is Provenance.MEASURED),
                "estimated": sum(1 for p in provs if p is Provenance.ESTIMATED),
                "worst": worst_of(provs).value if provs else None,
            },
        }

    def table(self) -> list[str]:
        s = self.summary()
        acc = "n/a" if s["accuracy"] is None else f"{s['accuracy']:.1%} of {s['judged']}"
        jpc = (
            "n/a (nothing correct)" if s["j_per_correct"] is None else f"{s['j_per_correct']:.6f} J"
        )
        lat = {k: _duration(v) for k, v in s["latency_us"].items()}
        prov = s["provenance"]
        energy = (
            "no figure: every case was refused"
            if s["total_j"] is None
            else f"{s['total_j']:.6f} J ({prov['worst']}: "
            f"{prov['measured']} measured, {prov['estimated']} estimated)"
        )
        lines = [
            f"cases        : {s['cases']} ({s['answered']} answered, {s['errors']} refused)",
            f"total energy : {energy}",
            f"per correct  : {jpc}",
            f"accuracy     : {acc}",
            f"latency      : p50 {lat['p50']}  p95 {lat['p95']}  p99 {lat['p99']}",
            "stages       : " + "  ".join(f"{k} {v:.0%}" for k, v in s["stage_share"].items()),
        ]
        lines.append(f"avoided      : {_avoided_line(s['avoided'])}")
        m = s["model"]
        if m["answers"]:
            per = "n/a" if m["uj_per_token"] is None else f"{m['uj_per_token']:,} µJ per token"
            lines.append(
                f"model        : {m['answers']} answers, {m['tokens_out']} tokens generated, "
                f"{m['j']:.3f} J, {per} ({m['worst']})"
            )
        return lines


def _avoided_line(a: dict[str, Any]) -> str:
    """What the answers given without the model avoided, by provenance (see the summary)."""
    cheap = a["answers"] + a["without_figure"]
    if not cheap:
        return "nothing: every answer came from the model"
    if a["j"] is None:
        return (
            f"no figure: no language model is configured to compare with ({cheap} answers "
            "given without one)"
        )
    parts = ", ".join(
        f"{v['j']:.6f} J {p} over {v['answers']}" for p, v in a["by_provenance"].items()
    )
    line = f"{a['j']:.6f} J of model work by {a['answers']} answers given without it ({parts})"
    if a["without_figure"]:
        line += f"; {a['without_figure']} without a figure (no model configured then)"
    return line


def _duration(us: float | None) -> str:
    """A latency in the unit that reads best: µs, ms or s."""
    if us is None:
        return "n/a"
    if us < 1_000:
        return f"{us:.1f} µs"
    if us < 1_000_000:
        return f"{us / 1000:.1f} ms"
    return f"{us / 1e6:.2f} s"


def run_suite(cases: Sequence[Case], cascade: Cascade | None = None) -> SuiteReport:
    """Run every case through one cascade, in order; bad prompts are recorded, not fatal."""
    cascade = cascade if cascade is not None else Cascade()
    report = SuiteReport()
    for case in cases:
        t0 = time.perf_counter_ns()
        try:
            r = cascade.resolve(case.prompt)
        except EocError as exc:
            report.results.append(
                CaseResult(
                    case,
                    None,
                    None,
                    0,
                    None,
                    time.perf_counter_ns() - t0,
                    False if case.expected else None,
                    exc.reason,
                )
            )
            continue
        ns = time.perf_counter_ns() - t0
        correct = (
            None if case.expected is None else case.expected.casefold() in r.payload.casefold()
        )
        report.results.append(
            CaseResult(
                case,
                r.stage.value,
                r.payload,
                r.cost.uj,
                r.cost.provenance.value,
                ns,
                correct,
                tokens_out=None if r.tokens is None else r.tokens[1],
                avoided_uj=None if r.avoided is None else r.avoided.uj,
                avoided_provenance=None if r.avoided is None else r.avoided.provenance.value,
            )
        )
    return report


__all__ = [
    "BadSuite",
    "Case",
    "CaseResult",
    "SuiteReport",
    "load_suite",
    "nearest_rank",
    "parse_suite",
    "run_suite",
]
