"""Models of machines for the native tests."""

from __future__ import annotations

import time

from eoc.cost import CounterKind
from native.counters.base import ProbedCounter


class CpuTimeCounter(ProbedCounter):
    """A stand-in whole-work counter whose energy follows real work: ``idle_w`` over wall time
    plus ``active_w`` over this process's CPU time. Matmuls raise it; sleeping barely does."""

    kind = CounterKind.HARDWARE
    resolution_uj = 1.0
    min_window_ns = 0

    def __init__(
        self, idle_w: float = 5.0, active_w: float = 20.0, name: str = "cpu-time-model"
    ) -> None:
        super().__init__()
        self.name = name
        self.idle_w, self.active_w = idle_w, active_w
        self._t0 = time.perf_counter_ns()
        self._c0 = time.process_time_ns()

    def read_uj(self) -> int:
        wall = time.perf_counter_ns() - self._t0
        cpu = time.process_time_ns() - self._c0
        return int((self.idle_w * wall + self.active_w * cpu) / 1000)


__all__ = ["CpuTimeCounter"]
