"""Joule costs and their provenance.

A cost is an integer number of micro-joules (µJ) plus where it came from:

* ``MEASURED`` — every µJ was read from a live counter over the work it is
  booked to. It names the counter and the counter's kind.
* ``ESTIMATED`` — anything else: a documented per-stage constant, a backend's
  own estimate, a calibrated per-hit figure applied to later hits.

A MEASURED cost of 0 cannot be built: a counter that saw no energy did not see
the work, and that is a refusal, not a zero. In the browser (Pyodide) no MEASURED
cost can be built at all.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from eoc._compat import IN_PYODIDE
from eoc.errors import ConfigError


class Provenance(enum.StrEnum):
    """How a figure was obtained."""

    MEASURED = "measured"
    ESTIMATED = "estimated"


class CounterKind(enum.StrEnum):
    """What a live counter reports from.

    The kind shown with a figure is never just what a counter object says of itself: see
    :func:`eoc.meter.trust.effective_kind`.
    """

    HARDWARE = "hardware"  # RAPL, perf power PMU, NVML energy
    VENDOR_MODEL = "vendor-model"  # Apple IOReport: live, but computed by Apple's model
    FAKE = "fake"  # a test or demonstration counter (eoc.testing): its joules are simulated
    UNVERIFIED = "unverified"  # live, but not a counter installed under eoc.counters
    NONE = "none"  # no counter at all (the stub)


METERING_KINDS = frozenset(
    {CounterKind.HARDWARE, CounterKind.VENDOR_MODEL, CounterKind.FAKE, CounterKind.UNVERIFIED}
)
"""Kinds a MEASURED figure may name: every kind of live counter; never ``none``."""


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class JouleCost:
    """An energy figure in whole micro-joules with its provenance.

    Args:
        uj: micro-joules, an ``int`` of at least 1.
        provenance: MEASURED or ESTIMATED.
        basis: one short line saying where the figure came from.
        counter: the counter it was read from (required when MEASURED).
        counter_kind: that counter's kind (required when MEASURED).
    """

    uj: int
    provenance: Provenance
    basis: str
    counter: str | None
    counter_kind: CounterKind | None

    def __init__(
        self,
        uj: int,
        provenance: Provenance,
        basis: str,
        *,
        counter: str | None = None,
        counter_kind: CounterKind | None = None,
    ) -> None:
        if isinstance(uj, bool) or not isinstance(uj, int):
            raise ConfigError(f"a cost is whole micro-joules (int), not {type(uj).__name__}")
        if uj < 1:
            raise ConfigError(
                f"a cost must be at least 1 µJ, got {uj}: a figure of 0 is a refusal, not a cost"
            )
        if not isinstance(provenance, Provenance):
            raise ConfigError("provenance must be Provenance.MEASURED or Provenance.ESTIMATED")
        if provenance is Provenance.MEASURED and IN_PYODIDE:
            raise ConfigError(
                "the browser has no energy counter, so no figure in it can be MEASURED: "
                "report this cost as ESTIMATED"
            )
        if provenance is Provenance.MEASURED and (
            not counter or not isinstance(counter, str) or counter_kind not in METERING_KINDS
        ):
            raise ConfigError(
                "a MEASURED cost must name the live counter it was read from and its kind"
            )
        _set = object.__setattr__  # frozen: set once, here
        _set(self, "uj", uj)
        _set(self, "provenance", provenance)
        _set(self, "basis", basis)
        _set(self, "counter", counter)
        _set(self, "counter_kind", counter_kind)

    @classmethod
    def estimated(cls, uj: int, basis: str) -> JouleCost:
        """An ESTIMATED figure with no counter behind it."""
        return cls(uj, Provenance.ESTIMATED, basis)

    @property
    def measured(self) -> bool:
        return self.provenance is Provenance.MEASURED

    def with_basis(self, basis: str) -> JouleCost:
        """The same figure with another basis line."""
        return JouleCost(
            self.uj, self.provenance, basis, counter=self.counter, counter_kind=self.counter_kind
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "uj": self.uj,
            "provenance": self.provenance.value,
            "basis": self.basis,
            "counter": self.counter,
            "counter_kind": None if self.counter_kind is None else self.counter_kind.value,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JouleCost) and (
            self.uj,
            self.provenance,
            self.basis,
            self.counter,
            self.counter_kind,
        ) == (other.uj, other.provenance, other.basis, other.counter, other.counter_kind)

    def __hash__(self) -> int:
        return hash((self.uj, self.provenance, self.basis))

    def __repr__(self) -> str:
        return f"JouleCost({self.uj} µJ, {self.provenance.value}, {self.basis!r})"

    def __str__(self) -> str:
        if self.provenance is Provenance.MEASURED and self.counter_kind is not None:
            return f"{self.uj:,} µJ ({self.provenance.value}, {self.counter_kind.value} counter)"
        return f"{self.uj:,} µJ ({self.provenance.value})"


def worst_of(provenances: Iterable[Provenance]) -> Provenance:
    """The worst provenance among several readings: any ESTIMATED makes the whole ESTIMATED.

    An empty collection is ESTIMATED: no reading at all is not a measurement.
    """
    seen = False
    for p in provenances:
        seen = True
        if p is not Provenance.MEASURED:
            return Provenance.ESTIMATED
    return Provenance.MEASURED if seen else Provenance.ESTIMATED


__all__ = ["METERING_KINDS", "CounterKind", "JouleCost", "Provenance", "worst_of"]
