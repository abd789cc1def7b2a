"""The Linux perf ``power`` PMU through ``perf_event_open`` (ctypes).

Its kind is ``hardware`` only when the event is the power PMU's own, checked against sysfs (the
type, config, scale and unit), and opened by the real syscall; anything else is ``fake``.

sysfs describes the PMU (``/sys/bus/event_source/devices/power``): its ``type``, the
``cpumask`` of one CPU per socket, and per event (``energy-pkg``, ``energy-psys``, ...) its
``config`` string, ``.scale`` (Joules per count, 2^-32) and ``.unit``. The kernel accumulates
in 64 bits, so the reader sees no wrap. One event is opened per CPU of the cpumask (one per
socket) and the sockets are summed. Opening needs ``perf_event_paranoid`` < 1 or CAP_PERFMON.

The sysfs parsing and the arithmetic are separate from the syscalls: :class:`PerfPowerCounter`
takes an ``events`` object with ``open(type, config, cpu) -> fd`` and ``read(fd) -> int``, so
tests drive it with :class:`eoc.testing.FakePerfEvents`.

Fact: on this project's Linux VMs ``power/energy-psys`` opens as root and reads 0 forever — a
real frozen counter, which the probe reports as FROZEN.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from eoc.cost import CounterKind
from eoc.errors import CounterReadFailed, CounterUnavailable
from eoc_native.counters.base import ProbedCounter
from eoc_native.counters.provenance import POWER_PMU, parse_config, power_pmu_event

PERMISSION_FIX = (
    "opening perf power events needs root, CAP_PERFMON, or "
    "`sudo sysctl kernel.perf_event_paranoid=0`"
)
_SYSCALL = {"x86_64": 298, "amd64": 298, "aarch64": 241, "arm64": 241, "i386": 336, "i686": 336}
# whole-work events in order of preference; energy-cores/-gpu lie inside pkg, energy-ram is apart
WHOLE_WORK_EVENTS = ("energy-psys", "energy-pkg")


@dataclass(frozen=True)
class PerfEvent:
    """One power PMU event as sysfs describes it."""

    name: str  # e.g. "energy-pkg"
    pmu_type: int
    config: int
    scale_j: float  # Joules per count
    unit: str
    cpus: tuple[int, ...]


def parse_cpumask(text: str) -> tuple[int, ...]:
    """``"0"``, ``"0,64"`` or ``"0-1,4"`` -> CPU numbers."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            cpus.extend(range(int(a), int(b) + 1))
        else:
            cpus.append(int(part))
    return tuple(cpus)


def discover_events(root: Path = POWER_PMU) -> tuple[list[PerfEvent], str]:
    """The power PMU's energy events, or ``([], why there are none)``."""
    if not root.is_dir():
        return [], f"perf: no power PMU on this host ({root} does not exist)"
    try:
        pmu_type = int((root / "type").read_text().strip())
        cpus = parse_cpumask((root / "cpumask").read_text())
    except (OSError, ValueError) as exc:
        return [], f"perf: cannot read the power PMU's type or cpumask: {exc}"
    events: list[PerfEvent] = []
    for path in sorted((root / "events").glob("energy-*")):
        if "." in path.name:
            continue
        try:
            config = parse_config(path.read_text())
            scale = float((path.parent / f"{path.name}.scale").read_text().strip())
            unit = (path.parent / f"{path.name}.unit").read_text().strip()
        except (OSError, ValueError):
            continue
        events.append(PerfEvent(path.name, pmu_type, config, scale, unit, cpus))
    return events, "" if events else "perf: the power PMU lists no energy events"


class PerfEvents(Protocol):
    """Opens and reads perf events (the real one uses the syscall)."""

    def open(self, pmu_type: int, config: int, cpu: int) -> int: ...

    def read(self, fd: int) -> int: ...

    def close(self, fd: int) -> None: ...


class _Attr(ctypes.Structure):
    # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes); the kernel zero-extends the rest.
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
    ]


class SyscallPerfEvents:
    """``perf_event_open(2)`` through libc's ``syscall``; counts read with ``os.read``."""

    def __init__(self) -> None:
        machine = platform.machine().lower()
        if machine not in _SYSCALL:
            raise CounterUnavailable(f"perf: no perf_event_open syscall number known for {machine}")
        self._nr = _SYSCALL[machine]
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.syscall.restype = ctypes.c_long

    def open(self, pmu_type: int, config: int, cpu: int) -> int:
        attr = _Attr()
        attr.type = pmu_type
        attr.size = ctypes.sizeof(_Attr)
        attr.config = config
        fd = self._libc.syscall(self._nr, ctypes.byref(attr), -1, cpu, -1, 0)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return int(fd)

    def read(self, fd: int) -> int:
        data = os.read(fd, 8)
        if len(data) != 8:
            raise OSError(errno.EIO, f"short read of {len(data)} bytes")
        return int(struct.unpack("=Q", data)[0])

    def close(self, fd: int) -> None:
        os.close(fd)


class PerfPowerCounter(ProbedCounter):
    """One power PMU event, opened on one CPU per socket and summed, in µJ."""

    kind = CounterKind.HARDWARE
    # The power PMU reads the same RAPL MSRs (updated about every 1 ms): the same 10 ms
    # minimum window as the powercap reader, for the same reason (see rapl.py).
    min_window_ns = 10_000_000
    max_power_uw = 2_000_000_000.0  # the host ceiling: the PMU publishes no limit of its own

    def __init__(
        self,
        event: PerfEvent,
        events: PerfEvents | None = None,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self.event = event
        self.name = f"perf/{event.name}"
        self.resolution_uj = event.scale_j * 1e6
        self._fds: list[int] = []
        self._error: str | None = None
        if event.unit.lower() not in ("joules", "joule", "j"):
            self._error = f"{self.name}: unit {event.unit!r} is not Joules"
            return
        # hardware only for the real syscalls on the power PMU's own event as sysfs describes it
        # (a software clock event given pmu_type=1 and unit "Joules" is not energy); any
        # injected source (FakePerfEvents) is a fake
        self.kind_reason = (
            f"{self.name}: events come from an injected source ({type(events).__name__})"
            if events is not None
            else power_pmu_event(
                event.pmu_type, event.config, event.name, event.scale_j, event.unit
            )
        )
        if self.kind_reason and not self.kind_reason.startswith(self.name):
            self.kind_reason = f"{self.name}: {self.kind_reason}"
        self.kind = CounterKind.FAKE if self.kind_reason else CounterKind.HARDWARE
        try:
            self._events = events if events is not None else SyscallPerfEvents()
            for cpu in event.cpus:
                self._fds.append(self._events.open(event.pmu_type, event.config, cpu))
        except CounterUnavailable as exc:
            self._error = exc.reason
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                self._error = f"{self.name}: permission denied: {PERMISSION_FIX}"
            else:
                self._error = (
                    f"{self.name}: perf_event_open failed: {os.strerror(exc.errno or errno.EIO)}"
                )
        if not event.cpus and self._error is None:
            self._error = f"{self.name}: the power PMU's cpumask is empty"

    def unavailable_reason(self) -> str | None:
        return self._error

    def read_uj(self) -> int:
        if self._error:
            raise CounterUnavailable(self._error)
        try:
            counts = sum(self._events.read(fd) for fd in self._fds)
        except OSError as exc:
            raise CounterReadFailed(f"{self.name}: read failed: {exc}") from None
        return int(counts * self.event.scale_j * 1e6)

    def close(self) -> None:
        for fd in self._fds:
            try:
                self._events.close(fd)
            except OSError:
                pass
        self._fds = []


def perf_counters(
    root: Path = POWER_PMU, events: PerfEvents | None = None
) -> tuple[list[PerfPowerCounter], str]:
    """A counter per whole-work power event (psys first, then pkg), or why there are none."""
    found, why = discover_events(root)
    by_name = {e.name: e for e in found}
    chosen = [PerfPowerCounter(by_name[n], events) for n in WHOLE_WORK_EVENTS if n in by_name]
    if found and not chosen:
        why = "perf: the power PMU has neither energy-psys nor energy-pkg"
    return chosen, why


__all__ = [
    "POWER_PMU",
    "PerfEvent",
    "PerfEvents",
    "PerfPowerCounter",
    "SyscallPerfEvents",
    "discover_events",
    "parse_config",
    "parse_cpumask",
    "perf_counters",
]
