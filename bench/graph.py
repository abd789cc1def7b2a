"""Graph stage benchmarks: hits on the pack and on a million triples, core and Oxigraph; what a
computed answer costs; how much of the shipped suites is answered before the model.

    python bench/graph.py             # full run: 1,000,000 extra triples (Oxigraph loads them
                                      # in about 80 s on 2 cores)
    python bench/graph.py --quick     # 100,000 extra triples
    python bench/graph.py --json
    python bench/graph.py --record    # a full run, written to docs/figures/graph.json

Every timing is a median over repeated runs of a fixed question mix, measured side by side in
one run. The mix is the graph-answered questions of ``bench/suites/pack.json`` (users'
wordings written before the matcher was run on them), not the test table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eoc import Cascade, Query  # noqa: E402
from eoc.assemble import default_stages  # noqa: E402
from eoc.cli.benchrun import load_suite, run_suite  # noqa: E402
from eoc.compute import compute  # noqa: E402
from eoc.knowledge import triples, vocabulary  # noqa: E402
from eoc.stages.graph import GraphStage, TripleStore  # noqa: E402
from eoc.stages.neural import NeuralStage, NoModelBackend  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from record import record  # noqa: E402

SUITES = ("core.json", "pack.json", "open_questions.json")


def _median_us(graph: GraphStage, questions: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        for q in questions:
            query = Query(q)
            t0 = time.perf_counter_ns()
            graph.lookup(query)
            times.append((time.perf_counter_ns() - t0) / 1000)
    return statistics.median(times)


def _synthetic(n: int) -> list[tuple[str, str, str]]:
    return [(f"thing {i}", f"relation {i % 50}", f"value {i}") for i in range(n)]


def _write_nt(rows: list[tuple[str, str, str]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for s, p, o in rows:
            s_iri = "http://example.org/" + s.replace(" ", "_")
            p_iri = "http://example.org/" + p.replace(" ", "_")
            f.write(f'<{s_iri}> <{p_iri}> "{o}" .\n')


def _mix() -> tuple[list[str], list[str]]:
    """(graph questions, computed questions) from the pack suite."""
    graph = GraphStage(TripleStore(triples()), vocabulary=vocabulary(), computed=False)
    stored, computed = [], []
    for case in load_suite(ROOT / "bench" / "suites" / "pack.json"):
        if compute(case.prompt) is not None:
            computed.append(case.prompt)
        elif graph.lookup(Query(case.prompt)) is not None:
            stored.append(case.prompt)
    return stored, computed


def hits(extra: int, rounds: int) -> dict[str, Any]:
    stored, _ = _mix()
    voc = vocabulary()
    pack = triples()
    out: dict[str, Any] = {
        "questions": len(stored),
        "triples": {"pack": len(pack), "pack_and_extra": len(pack) + extra},
    }
    big = _synthetic(extra)
    core_small = GraphStage(TripleStore(pack), vocabulary=voc, computed=False)
    t0 = time.perf_counter()
    core_big = GraphStage(TripleStore([*pack, *big]), vocabulary=voc, computed=False)
    out["core_build_s"] = round(time.perf_counter() - t0, 1)
    out["core"] = {
        "pack": round(_median_us(core_small, stored, rounds), 1),
        "pack_and_extra": round(_median_us(core_big, stored, rounds), 1),
    }
    del core_big
    try:
        from eoc_native.graph.oxigraph import OxigraphStore
    except ImportError as exc:
        out["oxigraph"] = f"not measured: {exc}"
        return out
    with tempfile.TemporaryDirectory() as tmp:
        small = OxigraphStore(Path(tmp) / "small")
        small.add_all(pack)
        nt = Path(tmp) / "extra.nt"
        _write_nt(big, nt)
        large = OxigraphStore(Path(tmp) / "large")
        large.add_all(pack)
        t0 = time.perf_counter()
        large.load(nt)
        out["oxigraph_load_s"] = round(time.perf_counter() - t0, 1)
        out["oxigraph"] = {
            "pack": round(
                _median_us(GraphStage(small, vocabulary=voc, computed=False), stored, rounds), 1
            ),
            "pack_and_extra": round(
                _median_us(GraphStage(large, vocabulary=voc, computed=False), stored, rounds), 1
            ),
        }
        small.close()
        large.close()
    return out


def computed_cost(rounds: int) -> dict[str, Any]:
    _, questions = _mix()
    graph = GraphStage(TripleStore(), computed=True)
    uj = [graph.lookup(Query(q)).cost.uj for q in questions]  # type: ignore[union-attr]
    return {
        "questions": len(questions),
        "median_us": round(_median_us(graph, questions, rounds), 1),
        "median_uj_estimated": statistics.median(uj),
    }


def suites() -> dict[str, Any]:
    """Per shipped suite: share answered before the model and accuracy, no model connected."""
    out = {}
    for name in SUITES:
        stages = default_stages(NoModelBackend("no model"))
        assert isinstance(stages[-1], NeuralStage)
        report = run_suite(load_suite(ROOT / "bench" / "suites" / name), Cascade(stages))
        s = report.summary()
        before_neural = 1 - s["stage_share"].get("neural", 0.0)
        wrong = sum(1 for r in report.results if r.correct is False and r.stage != "neural")
        out[name] = {
            "cases": s["cases"],
            "before_neural": round(before_neural, 3),
            "answered_right": f"{sum(1 for r in report.results if r.correct)}/{s['judged']}",
            "answered_wrong_before_neural": wrong,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/graph.json, which the docs cite (not with --quick)",
    )
    args = parser.parse_args()
    if args.record and args.quick:
        parser.error("--record records a whole run: leave out --quick")
    extra, rounds = (100_000, 20) if args.quick else (1_000_000, 30)
    doc = {
        "graph_hit_median_us": hits(extra, rounds),
        "computed_answer": computed_cost(rounds),
        "suites": suites(),
    }
    if args.record:
        record("graph", doc)
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    h = doc["graph_hit_median_us"]
    print(f"graph hit, median µs over {h['questions']} questions of bench/suites/pack.json:")
    for store in ("core", "oxigraph"):
        row = h[store]
        if isinstance(row, str):
            print(f"  {store:9} {row}")
            continue
        cells = "  ".join(f"{h['triples'][k]:,} triples: {us:,.0f} µs" for k, us in row.items())
        print(f"  {store:9} {cells}")
    print(
        f"  (core build with the extra triples {h['core_build_s']} s; "
        f"Oxigraph load {h.get('oxigraph_load_s', '-')} s)"
    )
    c = doc["computed_answer"]
    print(
        f"computed answer: median {c['median_us']:,.0f} µs over {c['questions']} questions, "
        f"charged {c['median_uj_estimated']} µJ estimated"
    )
    print("shipped suites, no model connected:")
    for name, s in doc["suites"].items():
        print(
            f"  {name:20} {s['cases']:3} cases, {s['before_neural']:.1%} answered before the "
            f"model, right {s['answered_right']}, wrong before the model "
            f"{s['answered_wrong_before_neural']}"
        )


if __name__ == "__main__":
    main()
