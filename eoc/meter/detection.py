"""Choosing the counter the cascade meters with.

Under Pyodide it is always the stub. Natively it is the first live whole-work
counter that an installed counter source offers (the ``eoc.counter_sources`` entry points, see
:mod:`eoc.plugins`: the native extra's RAPL, perf and IOReport readers, or a third party's),
otherwise the stub, with the reason.
Every candidate is judged by eoc's own liveness probe, never by its ``status()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc.errors import EocError
from eoc.meter.counter import Counter, CounterStatus, StubCounter
from eoc.meter.liveness import ProbeResult, probe


@dataclass(frozen=True)
class Detection:
    """The chosen counter and what was seen of every candidate."""

    counter: Counter
    candidates: Sequence[tuple[Counter, CounterStatus]] = field(default_factory=tuple)
    reason: str = ""
    probes: Sequence[ProbeResult] = field(default_factory=tuple)

    @property
    def live(self) -> bool:
        return not isinstance(self.counter, StubCounter)

    def probe_of(self, counter: Counter) -> ProbeResult | None:
        """eoc's probe of ``counter`` made during detection (``None`` for the stub)."""
        return next((p for p in self.probes if p.counter == counter.name), None)


def native_candidates() -> tuple[list[Counter], str]:
    """Whole-work counters the installed counter sources offer, or ``([], why there are none)``."""
    if IN_PYODIDE:
        return [], "the browser has no energy counter"
    # eoc's own readers first (their order is RAPL, perf, IOReport), then others by name
    sources = sorted(plugins.load_all(plugins.COUNTER_SOURCES), key=lambda s: s[0] != "native")
    if not sources:
        return [], f"no energy counter source is installed: {plugins.NATIVE_HINT}"
    offered: list[Counter] = []
    notes: list[str] = []
    for name, source in sources:
        if isinstance(source, ImportError):
            notes.append(f"counter source {name} cannot load ({source}): {plugins.NATIVE_HINT}")
            continue
        try:
            found = source(telemetry=False)
        except EocError as exc:
            notes.append(exc.reason)
            continue
        offered += found.whole_work
        notes += found.notes
    if offered:
        return offered, ""
    return [], "; ".join(notes) or "no installed counter source found an energy counter here"


def detect_all(candidates: Iterable[Counter] | None = None) -> Detection:
    """Check every candidate's status and choose the first live one, else the stub."""
    if IN_PYODIDE:
        stub = StubCounter()
        return Detection(stub, (), stub.reason)
    why = ""
    if candidates is None:
        found, why = native_candidates()
    else:
        found = list(candidates)
    seen: list[tuple[Counter, CounterStatus]] = []
    probes: list[ProbeResult] = []
    chosen: Counter | None = None
    for counter in found:
        if getattr(counter, "telemetry_only", False):
            continue  # GPU telemetry is never the whole-work meter
        why = _unreadable(counter)
        if why:
            status = CounterStatus.unavailable(why)
        else:
            result = probe(counter)
            probes.append(result)
            status = result.status
        seen.append((counter, status))
        if chosen is None and status.is_live:
            chosen = counter
    if chosen is not None:
        return Detection(chosen, tuple(seen), "", tuple(probes))
    if seen:
        why = "no candidate counter is live: " + "; ".join(f"{c.name}: {s}" for c, s in seen)
    stub = StubCounter(why or None)
    return Detection(stub, tuple(seen), stub.reason)


def _unreadable(counter: Counter) -> str:
    """Why a counter cannot be read at all (no file, no permission), without probing it."""
    reason = getattr(counter, "unavailable_reason", None)
    if callable(reason):
        try:
            why = reason()
        except EocError as exc:
            return exc.reason
        return why if isinstance(why, str) else ""
    return ""


def detect(candidates: Iterable[Counter] | None = None) -> Counter:
    """The counter to meter with: the stub in the browser, else the best live one, else the stub."""
    return detect_all(candidates).counter


__all__ = ["Detection", "detect", "detect_all", "native_candidates"]
