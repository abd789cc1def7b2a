"""``eoc meter``: the energy counters here, their status and kind, and the idle draw."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, TextIO

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc.assemble import default_backend, default_kv, describe_embedder, graph_source
from eoc.cli.common import Add, emit
from eoc.cli.userstore import user_store_path
from eoc.errors import ConfigError, EocError
from eoc.meter.counter import Counter, CounterStatus
from eoc.meter.detection import Detection, detect_all
from eoc.meter.liveness import probe
from eoc.meter.marginal import idle_draw_uw, refusal
from eoc.meter.trust import effective_kind


def survey_extras() -> tuple[list[tuple[Counter, str]], list[str]]:
    """Counters that are not whole-work candidates (DRAM, GPU telemetry) and the survey notes.

    Empty without the native extra (and always in the browser).
    """
    if IN_PYODIDE:
        return [], []
    extras: list[tuple[Any, str]] = []
    notes: list[str] = []
    for _name, survey in plugins.load_all(plugins.COUNTER_SOURCES):
        if isinstance(survey, ImportError):
            continue  # detection already said why
        found = survey()
        extras += [(c, "DRAM: reported apart, not the whole work") for c in found.other]
        extras += [
            (
                c,
                "GPU telemetry: counts the GPU board only, not the cascade's CPU work; shown "
                "beside the meter, never the meter",
            )
            for c in found.telemetry
        ]
        notes += found.notes
    return extras, notes


def _counter_doc(counter: Counter, status: CounterStatus, role: str) -> dict[str, Any]:
    kind, note = effective_kind(counter)
    return {
        "name": counter.name,
        "kind": kind.value,
        "kind_note": note,
        "role": role,
        "status": status.state.value,
        "reason": status.reason,
        "resolution_uj": counter.resolution_uj,
        "min_window_ns": counter.min_window_ns,
    }


def cmd_meter(args: argparse.Namespace, out: TextIO) -> int:
    if not 0.05 <= args.seconds <= 60:
        raise ConfigError("--seconds must be between 0.05 and 60")
    found: Detection = detect_all()
    extras, notes = survey_extras()
    counters = []
    lines = []
    rows = [(c, s, "whole work") for c, s in found.candidates]
    rows += [(c, probe(c).status, role) for c, role in extras]  # probed, not asked
    for counter, status, role in rows:
        counters.append(_counter_doc(counter, status, role))
        kind, note = effective_kind(counter)
        lines.append(f"{counter.name} [{kind.value}; {role}] : {status}")
        if note:
            lines.append(f"  note: {note}")
    for note in notes:
        lines.append(f"  note: {note}")
    why: list[str] = []
    kv = default_kv(why=why)
    embedder = describe_embedder(kv) + (f"; not the semantic one: {why[0]}" if why else "")
    lines.append(f"kv embedder : {embedder}")
    graph_why: list[str] = []
    source = graph_source(why=graph_why)
    where = getattr(source, "path", None)
    graph = (
        f"Oxigraph at {where} ({len(source):,} triples)"  # type: ignore[arg-type]
        if where is not None
        else f"the knowledge pack in memory ({len(source):,} triples); {graph_why[0]}"  # type: ignore[arg-type]
    )
    lines.append(f"graph store : {graph}")
    answers = describe_answer_store()
    lines.append(f"answer store : {answers}")
    model_doc = _describe_model()
    for key, value in model_doc.items():
        lines.append(f"{key} : {value}")
    doc: dict[str, Any] = {
        "counters": counters,
        "notes": notes,
        "chosen": found.counter.name,
        "live": found.live,
        "kv_embedder": embedder,
        "graph_store": graph,
        "answer_store": answers,
        "neural": model_doc,
    }
    if not found.candidates:
        lines.append(f"no energy counter on this host: {found.reason}")
    if found.live:
        counter = found.counter
        try:
            t0 = time.perf_counter_ns()
            e0 = counter.read_uj()
            time.sleep(args.seconds)
            e1 = counter.read_uj()
            secs = (time.perf_counter_ns() - t0) / 1e9
            idle = idle_draw_uw(e0, e1, secs)
        except EocError as exc:
            doc["idle_draw_uw"] = None
            doc["idle_reason"] = exc.reason
            lines.append(refusal(f"idle draw of {counter.name}", exc, counter=counter.name))
        else:
            doc["idle_draw_uw"] = idle
            shown = effective_kind(counter)[0].value
            lines.append(
                f"cascade meters with {counter.name} ({shown} counter): "
                f"idle draw {idle / 1e6:.3f} W over {secs:.2f} s"
            )
    else:
        doc["reason"] = found.reason
        lines.append("cascade : every figure is estimated (no live counter)")
    emit(out, args.json, doc, lines)
    return 0


def describe_answer_store() -> str:
    """Where ``eoc query`` remembers answers by default (:mod:`eoc.cli.userstore`), in one line;
    nothing is made to say it."""
    named = os.environ.get("EOC_STORE")
    if named:
        return f"{named} ($EOC_STORE; --no-store: memory)"
    path, why = user_store_path()
    if path is None:
        return f"memory only: no per-user store ({why})"
    made = "" if path.is_file() else ", not made yet"
    return f"{path} (per-user{made}; --store FILE or --no-store to change)"


def _describe_model() -> dict[str, str]:
    """The neural backend here: the model, where its matmuls run and how that is decided."""
    why: list[str] = []
    try:
        backend = default_backend(why=why)
    except EocError as exc:
        return {"neural": f"no model: {exc.reason}"}
    describe = getattr(backend, "describe", None)
    if describe is None:
        return {"neural": f"{backend.name}" + (f" ({why[0]})" if why else "")}
    return {f"neural {k}": str(v) for k, v in describe().items()}


def register(sub: object, add: Add) -> None:
    """``eoc meter``."""
    add(
        "meter", "list energy counters, their status and kind, and the idle draw", cmd_meter
    ).add_argument(
        "--seconds", type=float, default=1.0, help="idle window for the idle draw (default 1 s)"
    )


__all__ = ["cmd_meter", "register", "survey_extras"]
