"""Models of machines for the native tests: counters and backends that are models, not hardware.

Every counter here has the kind ``fake``: fakes are labelled (docs/design.md §3.8).
"""

from __future__ import annotations

import time

from eoc.cost import CounterKind
from eoc.testing import FakeClock
from eoc_native.backends import NumpyBackend
from eoc_native.counters.base import ProbedCounter


class CpuTimeCounter(ProbedCounter):
    """A stand-in whole-work counter whose energy follows real work: ``idle_w`` over wall time
    plus ``active_w`` over this process's CPU time. Matmuls raise it; sleeping barely does.

    A model, not hardware: its kind is ``fake``, and every figure it produces says so."""

    kind = CounterKind.FAKE
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


class MachineCounter(ProbedCounter):
    """The whole-work counter of a :class:`Machine`: idle watts over its time plus the work's µJ."""

    name, kind, resolution_uj, min_window_ns = "model-rapl", CounterKind.FAKE, 1.0, 0

    def __init__(self, machine: Machine) -> None:
        super().__init__(clock=machine.clock, sleep=machine.clock.sleep)
        self.machine = machine

    def read_uj(self) -> int:
        m = self.machine
        return int(m.idle_w * m.clock.now_ns / 1000) + m.work_uj


class Machine:
    """Fake time and a whole-work counter: idle watts over time plus the work's own joules."""

    def __init__(self, idle_w: float = 5.0) -> None:
        self.clock = FakeClock()
        self.idle_w = idle_w
        self.work_uj = 0
        self.counter = MachineCounter(self)


class ModelBackend(NumpyBackend):
    """Computes with numpy (so it passes the check) but costs what the model says."""

    def __init__(self, machine: Machine, name: str, uj_per_op: int, ns_per_op: int) -> None:
        super().__init__()
        self.machine, self.label, self.uj, self.ns = machine, name, uj_per_op, ns_per_op

    def unavailable(self) -> str | None:
        self.name = self.label
        return None

    def run(self, prepared) -> None:  # type: ignore[no-untyped-def]
        super().run(prepared)
        self.machine.clock.advance(self.ns)
        self.machine.work_uj += self.uj


__all__ = ["CpuTimeCounter", "Machine", "MachineCounter", "ModelBackend"]
