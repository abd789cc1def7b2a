"""The counter protocol, counter status, and the stub counter.

A counter is anything with ``read_uj()``, ``status()``, ``name``, ``kind``,
``resolution_uj`` and ``min_window_ns``; it may declare ``max_power_uw``, the most it can
draw (:func:`max_power_uw` falls back to :data:`HOST_CEILING_UW`). Native counters (RAPL, the perf power
PMU, IOReport) live in the ``native`` extra; the core ships only the stub, which
is never live, and :class:`eoc.testing.FakeCounter` for tests.
"""

from __future__ import annotations

import enum
import math
from typing import Protocol, runtime_checkable

from eoc._compat import IN_PYODIDE
from eoc.cost import CounterKind
from eoc.errors import ConfigError, CounterUnavailable


class CounterState(enum.StrEnum):
    LIVE = "live"
    FROZEN = "frozen"
    UNAVAILABLE = "unavailable"


class CounterStatus:
    """LIVE, FROZEN or UNAVAILABLE, with the reason for anything but LIVE."""

    __slots__ = ("reason", "state")

    def __init__(self, state: CounterState, reason: str = "") -> None:
        self.state = state
        self.reason = reason

    @classmethod
    def live(cls, reason: str = "") -> CounterStatus:
        return cls(CounterState.LIVE, reason)

    @classmethod
    def frozen(cls, reason: str) -> CounterStatus:
        return cls(CounterState.FROZEN, reason)

    @classmethod
    def unavailable(cls, reason: str) -> CounterStatus:
        return cls(CounterState.UNAVAILABLE, reason)

    @property
    def is_live(self) -> bool:
        return self.state is CounterState.LIVE

    def __str__(self) -> str:
        if self.state is CounterState.UNAVAILABLE:
            return f"UNAVAILABLE({self.reason})"
        return f"{self.state.name}" + (f" ({self.reason})" if self.reason else "")

    def __repr__(self) -> str:
        return f"CounterStatus({self.state.name}, {self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CounterStatus)
            and other.state is self.state
            and other.reason == self.reason
        )

    def __hash__(self) -> int:
        return hash((self.state, self.reason))


@runtime_checkable
class Counter(Protocol):
    """An energy counter. ``read_uj`` returns cumulative micro-joules."""

    name: str
    kind: CounterKind
    resolution_uj: float
    min_window_ns: int

    def read_uj(self) -> int:
        """Cumulative energy in µJ; raises a :class:`~eoc.errors.Refusal` when it cannot."""
        ...

    def status(self) -> CounterStatus:
        """LIVE only if a liveness probe saw it advance."""
        ...


def checked_meter(meter: object) -> None:
    """Check that ``meter`` can meter a cascade: it reads (``read_uj``, ``status``) and is not
    telemetry only (a counter of one device, NVML's, never sees the cascade's CPU work).

    Raises:
        ConfigError: what ``meter`` lacks, and what to pass instead.
    """
    for name in ("read_uj", "status"):
        if not callable(getattr(meter, name, None)):
            raise ConfigError(f"meter must be a counter with {name}(); got {type(meter).__name__}")
    if getattr(meter, "telemetry_only", False):
        raise ConfigError(
            f"{getattr(meter, 'name', type(meter).__name__)} is telemetry only: it counts one "
            "device (a GPU board), so the cascade's CPU work (cache, kv and graph lookups, a "
            "model on the CPU, the host side of a GPU model) never shows in it. It cannot meter "
            "the cascade: pass a whole-work counter (RAPL, the perf power PMU, IOReport), or none"
        )


HOST_CEILING_UW = 2_000_000_000
"""2 kW: the most power a whole-work counter that declares no maximum is believed to see.

Far above any CPU package or platform (psys) zone; a reading implying more is refused as
implausible (a counter that jumped, a unit error, a forged source), never charged."""


def max_power_uw(counter: object) -> float:
    """The most power ``counter`` can plausibly see, in µW: its declared ``max_power_uw`` when
    that is a positive finite number, else :data:`HOST_CEILING_UW`."""
    declared = getattr(counter, "max_power_uw", None)
    if (
        isinstance(declared, (int, float))
        and not isinstance(declared, bool)
        and math.isfinite(declared)
        and declared > 0
    ):
        return float(declared)
    return float(HOST_CEILING_UW)


_BROWSER_REASON = (
    "the browser exposes no energy counter to web pages (no RAPL, no IOReport, no NVML): "
    "every figure here is estimated"
)
_NATIVE_REASON = (
    "no energy counter installed: the core ships none; "
    'the native extra (pip install ".[native]" in eoc\'s checkout) adds RAPL, perf power, '
    "IOReport and NVML readers"
)


class StubCounter:
    """The counter of a host with no energy counter. Never live; every read refuses."""

    name = "stub"
    kind = CounterKind.NONE
    resolution_uj = 0.0
    min_window_ns = 0

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or (_BROWSER_REASON if IN_PYODIDE else _NATIVE_REASON)

    def read_uj(self) -> int:
        raise CounterUnavailable(self.reason)

    def status(self) -> CounterStatus:
        return CounterStatus.unavailable(self.reason)

    def __repr__(self) -> str:
        return f"StubCounter({self.reason!r})"


__all__ = [
    "HOST_CEILING_UW",
    "Counter",
    "CounterState",
    "CounterStatus",
    "StubCounter",
    "max_power_uw",
]
