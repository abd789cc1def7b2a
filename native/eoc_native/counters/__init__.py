"""Native energy counters: RAPL, the perf power PMU, Apple IOReport, NVML telemetry.

:func:`survey` is the ``eoc.counter_sources`` entry point the core finds (see
:mod:`eoc.plugins`): its ``whole_work`` counters are candidates for the cascade's meter, in order
of preference; ``eoc meter`` shows the rest too (DRAM, GPU telemetry) and a note for each counter
declined or absent.
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
    from eoc_native.counters.perf import perf_counters
    from eoc_native.counters.rapl import rapl_counters

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
        from eoc_native.counters.ioreport import IOReportCounter

        out.whole_work.append(IOReportCounter())
    else:
        out.notes.append("ioreport: Apple IOReport exists only on macOS")
    if telemetry:
        from eoc_native.counters.nvml import nvml_telemetry

        gpus, why = nvml_telemetry()
        out.telemetry += gpus
        if why:
            out.notes.append(why)
    return out


__all__ = ["Survey", "survey"]
