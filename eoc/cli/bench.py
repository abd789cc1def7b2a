"""``eoc bench run``: a suite of {id, prompt, expected} cases through the cascade."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from eoc.assemble import assemble, model_backend
from eoc.cascade import Cascade
from eoc.cli.common import Add, emit
from eoc.cli.options import add_model, add_store


def cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    from eoc.cli.benchrun import load_suite, run_suite

    cases = load_suite(args.suite)
    backend = model_backend(args.model, args.max_tokens)
    with Cascade(
        assemble(backend, store=args.store, ttl=getattr(args, "ttl", None)).stages
    ) as cascade:
        report = run_suite(cases, cascade)
    doc = {
        "suite": args.suite,
        "summary": report.summary(),
        "cases": [
            {
                "id": r.case.id,
                "stage": r.stage,
                "cost_uj": r.cost_uj,
                "provenance": r.provenance,
                "latency_us": r.latency_ns / 1000,
                "correct": r.correct,
                "expected": r.case.expected,
                "answer": r.payload,
                "tokens_out": r.tokens_out,
                "avoided_uj": r.avoided_uj,
                "avoided_provenance": r.avoided_provenance,
                "error": r.error,
            }
            for r in report.results
        ],
    }
    emit(out, args.json, doc, report.table())
    return 0


def register(sub: Any, add: Add) -> None:
    """``eoc bench run SUITE``."""
    bench = sub.add_parser("bench", help="benchmarks: `eoc bench run SUITE.json`")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCH")
    run_p = bench_sub.add_parser(
        "run", help="run a suite of {id, prompt, expected} cases through the cascade"
    )
    run_p.add_argument("suite", help="the suite file (JSON)")
    run_p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_model(run_p)
    add_store(run_p)
    run_p.set_defaults(fn=cmd_bench)


__all__ = ["cmd_bench", "register"]
