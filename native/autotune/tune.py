"""The live energy autotuner: which backend does a matmul shape for the fewest joules?

Per backend: a metered busy window (the matmul run again and again for ``seconds``) against an
idle baseline, through the core's marginal-energy functions:
``marginal = ΔE_busy − P_idle·Δt`` (refused under 0.5 % of the busy reading, where it is
noise), then nJ per matmul. The joules-minimal backend wins, with
its µJ/op and ns/op — or there is no winner, with the reason, as soon as any candidate that ran
was not measured (DESIGN.md §3.3: one unmeasured candidate voids the comparison). A backend
that cannot run here or fails the correctness check is listed with its reason and never wins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from eoc.cost import CounterKind
from eoc.errors import EocError
from eoc.meter.counter import Counter
from eoc.meter.marginal import energy_ratio, idle_draw_uw, marginal_uj, per_op_nj
from eoc.meter.span import span_uj
from native.backends.base import MatmulBackend, Shape, check

Progress = Callable[[str, float], None]  # (what is happening, fraction done 0..1)

NOISE_FRACTION = 0.005
"""A backend's marginal energy under 0.5 % of its busy window's reading is refused: that close
to the idle baseline, timing of the reads and drift of the idle draw decide the figure."""


@dataclass(frozen=True)
class Measurement:
    """One backend's metered window, or why it has none."""

    backend: str
    ops: int = 0
    busy_ns: int = 0
    busy_uj: int = 0
    idle_uw: float = 0.0
    marginal_uj: float = 0.0
    nj_per_op: int | None = None
    reason: str = ""

    @property
    def measured(self) -> bool:
        return self.nj_per_op is not None

    @property
    def uj_per_op(self) -> float | None:
        return None if self.nj_per_op is None else self.nj_per_op / 1000

    @property
    def ns_per_op(self) -> float | None:
        return self.busy_ns / self.ops if self.ops else None


@dataclass(frozen=True)
class TuneResult:
    """The winner for one shape (``None`` with ``reason`` when there is none)."""

    shape: Shape
    winner: str | None
    measurements: tuple[Measurement, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)  # backends that could not run, and why
    reason: str = ""
    counter: str = ""
    counter_kind: CounterKind | None = None
    margin: float | None = None  # runner-up µJ/op over the winner's

    def best(self) -> Measurement | None:
        return next((m for m in self.measurements if m.backend == self.winner), None)


def _window(
    backend: MatmulBackend,
    prepared: object,
    counter: Counter,
    seconds: float,
    idle_uw: float,
    clock: Callable[[], int],
) -> Measurement:
    name = backend.name
    ops = 0
    try:
        t0 = clock()
        e0 = counter.read_uj()
        deadline = t0 + int(seconds * 1e9)
        while True:
            backend.run(prepared)
            ops += 1
            if clock() >= deadline:
                break
        e1 = counter.read_uj()
        t1 = clock()
        busy = span_uj(counter, e0, t0, e1, t1)
        marginal = marginal_uj(busy, (t1 - t0) / 1e9, idle_uw, min_fraction=NOISE_FRACTION)
        nj = per_op_nj(marginal, ops)
    except EocError as exc:
        return Measurement(name, ops, reason=exc.reason)
    return Measurement(name, ops, t1 - t0, busy, idle_uw, marginal, nj)


def tune_shape_live(
    shape: Shape,
    backends: Sequence[MatmulBackend],
    counter: Counter,
    seconds: float = 1.0,
    *,
    clock: Callable[[], int] = time.perf_counter_ns,
    sleep: Callable[[float], None] = time.sleep,
    progress: Progress | None = None,
) -> TuneResult:
    """Meter every backend on ``shape`` and return the joules-minimal one, or why there is none."""
    say = progress or (lambda what, frac: None)
    name, kind = counter.name, counter.kind
    status = counter.status()
    if not status.is_live:
        return TuneResult(shape, None, reason=f"{name} is not live: {status}", counter=name)
    ready: list[tuple[MatmulBackend, object]] = []
    skipped: dict[str, str] = {}
    for b in backends:
        why = check(b)
        if why is None:
            try:
                prepared = b.prepare(shape)
                b.run(
                    prepared
                )  # warm up: first-run allocation and compilation stay out of the window
                ready.append((b, prepared))
            except Exception as exc:  # cannot run this shape (memory, size): it never wins
                skipped[b.name] = f"{b.name}: cannot run {shape.key}: {exc}"
        else:
            skipped[b.name] = why
    if not ready:
        return TuneResult(shape, None, (), skipped, "no backend can run here", name, kind)
    steps = len(ready) + 1
    say(f"{shape.key}: idle baseline", 0.0)
    try:
        t0 = clock()
        e0 = counter.read_uj()
        sleep(seconds)
        e1 = counter.read_uj()
        idle = idle_draw_uw(e0, e1, (clock() - t0) / 1e9)
    except EocError as exc:
        return TuneResult(shape, None, (), skipped, f"no idle baseline: {exc.reason}", name, kind)
    found: list[Measurement] = []
    for i, (b, prepared) in enumerate(ready, 1):
        say(f"{shape.key}: {b.name}", i / steps)
        found.append(_window(b, prepared, counter, seconds, idle, clock))
    say(f"{shape.key}: done", 1.0)
    unmeasured = [m for m in found if not m.measured]
    if unmeasured:
        why = "; ".join(f"{m.backend}: {m.reason}" for m in unmeasured)
        return TuneResult(
            shape, None, tuple(found), skipped,
            f"not every candidate was measured, so no comparison: {why}", name, kind,
        )  # fmt: skip
    ranked = sorted(found, key=lambda m: m.nj_per_op or 0)
    margin = energy_ratio(ranked[1].nj_per_op, ranked[0].nj_per_op) if len(ranked) > 1 else None
    return TuneResult(shape, ranked[0].backend, tuple(found), skipped, "", name, kind, margin)


__all__ = ["Measurement", "Progress", "TuneResult", "tune_shape_live"]
