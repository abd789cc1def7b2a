"""``eoc hit-cost``: what a hit on each cheap tier takes and is charged on this host."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, TextIO

from eoc.assemble import describe_embedder
from eoc.cascade import Cascade
from eoc.cli.common import Add, emit
from eoc.query import Query, Stage
from eoc.stages.kv import KVStage

_SAMPLES = {Stage.KV: "what is 2+2", Stage.GRAPH: "what is the capital of Japan"}


def _time_per_hit_ns(fn: Callable[[], object], n: int = 2000) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn()
    return (time.perf_counter_ns() - t0) / n


def cmd_hit_cost(args: argparse.Namespace, out: TextIO) -> int:
    cascade = Cascade()
    tiers: dict[str, Any] = {}
    lines = [f"meter : {cascade.meter.name} [{cascade.meter_status}]"]
    kv_stage = next((s for s in cascade.stages if isinstance(s, KVStage)), None)
    if kv_stage is not None:
        lines.append(f"kv embedder : {describe_embedder(kv_stage)}")
    kv_q = Query(_SAMPLES[Stage.KV])
    graph_q = Query(_SAMPLES[Stage.GRAPH])
    first = {Stage.KV: cascade.resolve(kv_q), Stage.GRAPH: cascade.resolve(graph_q)}
    first[Stage.CACHE] = cascade.resolve(kv_q)  # the kv answer was memoized: now a cache hit
    for stage in cascade.stages:
        tier = stage.stage
        if tier is Stage.NEURAL:
            continue
        q = graph_q if tier is Stage.GRAPH else kv_q
        r = first[tier]
        ns = _time_per_hit_ns(lambda s=stage, q=q: s.lookup(q))  # type: ignore[misc]
        cal = cascade.calibration(tier)
        tiers[tier.value] = {
            "sample": q.prompt,
            "answered_at": r.stage.value,
            "lookup_ns": round(ns),
            "per_hit_nj": cal.per_hit_nj,
            "calibration": {
                "batch": cal.batch,
                "span_uj": cal.span_uj,
                "span_ns": cal.span_ns,
                "empty_span_uj": cal.empty_span_uj,
                "counter": cal.counter,
            },
            "reason": cal.reason,
            "charged": r.cost.to_dict(),
        }
        takes = (
            f"{cal.per_hit_nj / 1000:.3f} µJ/hit ({cal.batch} lookups, {cal.span_uj} µJ span, "
            f"{cal.empty_span_uj} µJ empty span)"
            if cal.per_hit_nj is not None
            else f"no figure: {cal.reason}"
        )
        lines += [
            f"{tier.value} :",
            f"  lookup  : {ns / 1000:.2f} µs (wall time, {q.prompt!r})",
            f"  takes   : {takes}",
            f"  charged : {r.cost.uj:,} µJ {r.cost.provenance.value}: {r.cost.basis}",
        ]
    emit(out, args.json, {"meter": cascade.meter.name, "live": cascade.live, "tiers": tiers}, lines)
    return 0


def register(sub: object, add: Add) -> None:
    """``eoc hit-cost`` (alias ``calibrate``)."""
    add(
        "hit-cost",
        "what a hit on each tier takes and is charged on this host (alias: calibrate)",
        cmd_hit_cost,
        aliases=("calibrate",),
    )


__all__ = ["cmd_hit_cost", "register"]
