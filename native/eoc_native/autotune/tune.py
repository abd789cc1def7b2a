"""The live energy autotuner: which backend does a matmul shape for the fewest joules?

Per backend: a metered busy window (the matmul run again and again for ``seconds``) against an
idle baseline, through the core's marginal-energy functions:
``marginal = ΔE_busy − P_idle·Δt`` (refused under 0.5 % of the busy reading, where it is
noise), then nJ per matmul. The joules-minimal backend wins, with
its µJ/op and ns/op — or there is no winner, with the reason, as soon as any candidate that ran
was not measured (docs/design.md §3.3: one unmeasured candidate voids the comparison). A backend
that cannot run here or fails the correctness check is listed with its reason and never wins.

A counter's own ``status()`` is a claim, not evidence: :func:`tune_shape_live` runs eoc's
liveness probe on the counter itself (or uses a probe eoc ran on it and that is handed in), and
labels the figures with the counter's *effective* kind
(:func:`~eoc.meter.trust.effective_kind`: ``fake`` for test counters, ``unverified`` for a class
not installed under the ``eoc.counters`` entry points).

Only results that :func:`tune_shape_live` returned in this process count as measured here
(:func:`measured_here`); a :class:`TuneResult` built by hand is a claim too.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from eoc.cost import CounterKind
from eoc.errors import ConfigError, EocError
from eoc.meter.counter import Counter
from eoc.meter.liveness import ProbeResult, probe
from eoc.meter.marginal import energy_ratio, idle_draw_uw, marginal_uj, per_op_nj
from eoc.meter.span import span_uj
from eoc.meter.trust import effective_kind
from eoc_native.backends.base import MatmulBackend, Shape, check

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
    liveness: str = ""  # which probe judged the counter live (or not), and what it saw

    def best(self) -> Measurement | None:
        return next((m for m in self.measurements if m.backend == self.winner), None)


# Results tune_shape_live returned, by id; weak values, so an id reused after a result dies
# cannot match (TuneResult compares by value, so a WeakSet would accept an equal forgery).
_GENUINE: weakref.WeakValueDictionary[int, TuneResult] = weakref.WeakValueDictionary()


def measured_here(result: TuneResult) -> bool:
    """True only for a result :func:`tune_shape_live` returned in this process."""
    return _GENUINE.get(id(result)) is result


def _genuine(result: TuneResult) -> TuneResult:
    _GENUINE[id(result)] = result
    return result


def _liveness(
    counter: Counter,
    given: ProbeResult | None,
    clock: Callable[[], int],
    sleep: Callable[[float], None],
) -> ProbeResult:
    """eoc's probe of ``counter``: ``given`` when eoc's own probe made it, else a fresh one."""
    if given is not None:
        if given.counter != counter.name:
            raise ConfigError(
                f"the liveness probe handed in is of {given.counter!r}, not of {counter.name!r}"
            )
        if given.from_eoc:
            return given
    return probe(counter, clock=clock, sleep=sleep)


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
    liveness: ProbeResult | None = None,
) -> TuneResult:
    """Meter every backend on ``shape`` and return the joules-minimal one, or why there is none.

    Args:
        liveness: eoc's probe of ``counter`` made moments ago (e.g. by detection), to spare
            probing again; used only if eoc's :func:`~eoc.meter.liveness.probe` made it, else
            the counter is probed here. ``result.liveness`` says which.

    Raises:
        ConfigError: ``liveness`` is the probe of another counter.
    """
    seen = _liveness(counter, liveness, clock, sleep)
    return _genuine(_tune(shape, backends, counter, seconds, clock, sleep, progress, seen))


def _tune(
    shape: Shape,
    backends: Sequence[MatmulBackend],
    counter: Counter,
    seconds: float,
    clock: Callable[[], int],
    sleep: Callable[[float], None],
    progress: Progress | None,
    seen: ProbeResult,
) -> TuneResult:
    say = progress or (lambda what, frac: None)
    name, kind = counter.name, effective_kind(counter)[0]
    live = seen.describe()
    if not seen.status.is_live:
        dead = f"{name} is not live: {live}"
        return TuneResult(shape, None, (), {}, dead, name, kind, liveness=live)
    ready: list[tuple[MatmulBackend, object]] = []
    skipped: dict[str, str] = {}
    for b in backends:
        why = check(b)
        if why is None:
            try:
                prepared = b.prepare(shape)
                # warm up: first-run allocation and compilation stay out of the window
                b.run(prepared)
                ready.append((b, prepared))
            except Exception as exc:  # cannot run this shape (memory, size): it never wins
                skipped[b.name] = f"{b.name}: cannot run {shape.key}: {exc}"
        else:
            skipped[b.name] = why
    if not ready:
        return TuneResult(
            shape, None, (), skipped, "no backend can run here", name, kind, liveness=live
        )
    steps = len(ready) + 1
    say(f"{shape.key}: idle baseline", 0.0)
    try:
        t0 = clock()
        e0 = counter.read_uj()
        sleep(seconds)
        e1 = counter.read_uj()
        idle = idle_draw_uw(e0, e1, (clock() - t0) / 1e9)
    except EocError as exc:
        why = f"no idle baseline: {exc.reason}"
        return TuneResult(shape, None, (), skipped, why, name, kind, liveness=live)
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
            liveness=live,
        )  # fmt: skip
    ranked = sorted(found, key=lambda m: m.nj_per_op or 0)
    margin = energy_ratio(ranked[1].nj_per_op, ranked[0].nj_per_op) if len(ranked) > 1 else None
    return TuneResult(shape, ranked[0].backend, tuple(found), skipped, "", name, kind, margin, live)


__all__ = ["Measurement", "Progress", "TuneResult", "measured_here", "tune_shape_live"]
