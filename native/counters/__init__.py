"""Native energy counters: RAPL, the perf power PMU, Apple IOReport, NVML telemetry.

:func:`whole_work_counters` is what ``eoc.meter.detect`` asks for: candidates for the
cascade's meter, in order of preference. :func:`survey` is what ``eoc meter`` shows: every
counter, whole-work or not, and a note for each one declined or absent.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from eoc.meter.counter import Counter


@dataclass
class Survey:
    """Every counter found on this host, by role, and notes on the ones declined or absent."""

    whole_work: list[Counter] = field(default_factory=list)
    other: list[Counter] = field(default_factory=list)  # DRAM: real, but not the whole work
    telemetry: list[Counter] = field(default_factory=list)  # NVML: GPU only, never the meter
    notes: list[str] = field(default_factory=list)


def survey(*, telemetry: bool = True) -> Survey:
    """Look for every counter this host offers (nothing is probed yet)."""
    from native.counters.perf import perf_counters
    from native.counters.rapl import rapl_counters

    out = Survey()
    rapl, notes = rapl_counters()
    out.notes += notes
    for c in rapl:
        (out.other if c.name == "rapl:dram" else out.whole_work).append(c)
    perf, why = perf_counters()
    out.whole_work += perf
    if why:
        out.notes.append(why)
    if sys.platform == "darwin":
        from native.counters.ioreport import IOReportCounter

        out.whole_work.append(IOReportCounter())
    else:
        out.notes.append("ioreport: Apple IOReport exists only on macOS")
    if telemetry:
        from native.counters.nvml import nvml_telemetry

        gpus, why = nvml_telemetry()
        out.telemetry += gpus
        if why:
            out.notes.append(why)
    return out


def whole_work_counters() -> list[Counter]:
    """Candidates for the cascade's meter, best first: RAPL, perf power, IOReport."""
    return survey(telemetry=False).whole_work


def why_none() -> str:
    """Why this host offers no whole-work counter (the notes of a survey)."""
    return "; ".join(survey(telemetry=False).notes)


__all__ = ["Survey", "survey", "whole_work_counters", "why_none"]
