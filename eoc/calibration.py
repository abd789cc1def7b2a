"""Hit calibration: what one cache, kv or graph hit costs on this host.

A counter read costs far more than a hit, so hits are never bracketed. Instead,
the first time a tier answers with a live counter, the same lookup is repeated
inside one span until the span reads fifty times what a span over no work reads
(or 40 ms have gone), and the per-lookup figure is kept in nanojoules. Later hits
are charged that figure in whole micro-joules, the remainder carried to the next
hit, so the µJ charged over any number of hits sum to the calibrated total
(``floor(hits * per_hit_nj / 1000)``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from eoc.cost import CounterKind
from eoc.errors import EocError
from eoc.meter.counter import Counter
from eoc.meter.marginal import per_op_nj
from eoc.meter.span import span_uj
from eoc.query import Stage

EMPTY_SPAN_SAMPLES = 5
DEFAULT_RATIO = 50
DEFAULT_BUDGET_NS = 40_000_000
MAX_BATCH = 1 << 16
MAX_LOOKUPS = 1 << 15
"""A calibration span ends after this many lookups even if neither the ratio nor the time
budget was reached (a clock that does not advance must not hold the cascade forever). 32,768
cache hits of about 1.5 µs fill the 40 ms budget, so a working clock ends the span first."""


@dataclass(frozen=True)
class HitCalibration:
    """The per-hit figure of one tier, or why there is none.

    Attributes:
        tier: the stage calibrated.
        per_hit_nj: nanojoules per lookup, or ``None`` with ``reason`` saying why.
        batch: lookups inside the span.
        span_uj: what the counter read over the whole span.
        span_ns: how long the span lasted.
        empty_span_uj: the most a span over no work read (the meter's own cost).
        counter, counter_kind: the counter read.
        reason: why there is no figure ("" when there is one).
    """

    tier: Stage
    per_hit_nj: int | None
    batch: int = 0
    span_uj: int = 0
    span_ns: int = 0
    empty_span_uj: int = 0
    counter: str = ""
    counter_kind: CounterKind | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.per_hit_nj is not None

    def describe(self) -> str:
        if self.per_hit_nj is None:
            return f"no hit calibration for {self.tier.value}: {self.reason}"
        return (
            f"{self.per_hit_nj / 1000:.3f} µJ/hit calibrated on {self.counter} "
            f"({self.counter_kind.value if self.counter_kind else '?'}): "
            f"{self.batch} lookups read {self.span_uj} µJ in {self.span_ns / 1e6:.1f} ms, "
            f"empty span {self.empty_span_uj} µJ"
        )


def calibrate_hits(
    tier: Stage,
    counter: Counter,
    lookup: Callable[[], object],
    *,
    counter_kind: CounterKind | None = None,
    clock: Callable[[], int],
    ratio: int = DEFAULT_RATIO,
    budget_ns: int = DEFAULT_BUDGET_NS,
) -> HitCalibration:
    """Repeat ``lookup`` inside one span of ``counter`` and return the per-hit figure.

    ``counter_kind`` is the kind to report (the cascade passes the effective kind, see
    :func:`eoc.meter.trust.effective_kind`); it defaults to that of ``counter``.
    """
    if counter_kind is None:
        from eoc.meter.trust import effective_kind

        counter_kind = effective_kind(counter)[0]
    name, kind = counter.name, counter_kind
    try:
        empty = 0
        for _ in range(EMPTY_SPAN_SAMPLES):
            a = counter.read_uj()
            b = counter.read_uj()
            empty = max(empty, b - a)
        floor = max(empty, math.ceil(counter.resolution_uj), 1)
        target = ratio * floor
        n = 0
        batch = 1
        t0 = clock()
        e0 = counter.read_uj()
        while True:
            for _ in range(batch):
                lookup()
            n += batch
            e1 = counter.read_uj()
            t1 = clock()
            if e1 - e0 >= target or t1 - t0 >= budget_ns or n >= MAX_LOOKUPS:
                break
            batch = min(batch * 2, MAX_BATCH)
        total = span_uj(counter, e0, t0, e1, t1)
        nj = per_op_nj(total, n)
    except EocError as exc:
        return HitCalibration(tier, None, counter=name, counter_kind=kind, reason=exc.reason)
    return HitCalibration(tier, nj, n, total, t1 - t0, empty, name, kind)


class HitCharger:
    """Charges hits in whole µJ from a nanojoule figure, carrying the remainder."""

    __slots__ = ("_carry_nj", "_lock", "calibration", "charged_uj", "hits")

    def __init__(self, calibration: HitCalibration) -> None:
        self.calibration = calibration
        self._carry_nj = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.charged_uj = 0

    def charge(self) -> int:
        """µJ to charge this hit (may be 0 while the remainder builds up)."""
        nj = self.calibration.per_hit_nj
        if nj is None:
            return 0
        with self._lock:
            carry = self._carry_nj + nj
            uj, self._carry_nj = divmod(carry, 1000)
            self.hits += 1
            self.charged_uj += uj
            return uj


__all__ = ["HitCalibration", "HitCharger", "calibrate_hits"]
