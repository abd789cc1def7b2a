"""What every native counter shares: a liveness probe run once, lazily, before it may be live."""

from __future__ import annotations

import time
from collections.abc import Callable

from eoc.cost import CounterKind
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import LivenessRule, ProbeResult, probe


class ProbedCounter:
    """Base of the native counters: ``status()`` probes once (and again after ``reprobe()``).

    Subclasses set ``name``, ``kind``, ``resolution_uj``, ``min_window_ns``, implement
    ``read_uj()``, and may override :meth:`unavailable_reason` to say why they cannot be read
    at all (no such file, no permission) without probing.
    """

    name: str = "native"
    kind: CounterKind = CounterKind.HARDWARE
    resolution_uj: float = 1.0
    min_window_ns: int = 1_000_000
    liveness_rule: LivenessRule | None = None
    telemetry_only: bool = False  # True for counters that must never meter the cascade (NVML)

    def __init__(
        self,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._probe: ProbeResult | None = None
        self._status: CounterStatus | None = None

    def read_uj(self) -> int:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def unavailable_reason(self) -> str | None:
        """Why this counter cannot be read at all, or ``None`` if it can be probed."""
        return None

    def status(self) -> CounterStatus:
        if self._status is None:
            why = self.unavailable_reason()
            if why:
                self._status = CounterStatus.unavailable(why)
            else:
                self._probe = probe(self, self.liveness_rule, clock=self._clock, sleep=self._sleep)
                self._status = self._probe.status
        return self._status

    @property
    def probe_result(self) -> ProbeResult | None:
        """What the last probe saw (``None`` before the first ``status()``)."""
        return self._probe

    def reprobe(self) -> CounterStatus:
        """Forget the cached status and probe again."""
        self._status = None
        return self.status()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self._status or 'not probed'})"


__all__ = ["ProbedCounter"]
