"""NVIDIA GPU energy through NVML (``nvidia-ml-py``, module ``pynvml``): telemetry only.

``nvmlDeviceGetTotalEnergyConsumption`` counts mJ since the driver loaded (Volta and newer).
It counts the GPU board alone: the cascade's CPU work (cache, kv and graph lookups, a model run
on the CPU, the host side of a GPU model) never shows in it, so it can never be the cascade's
meter (``telemetry_only``); it is read beside the whole-work counter and shown next to it. Its
kind is ``hardware`` only for the ``pynvml`` file nvidia-ml-py installed, with libnvidia-ml
loaded in this process (:mod:`eoc_native.counters.provenance`). A telemetry counter is constructed
only while it is live (it advanced over a probe) and counts no faster than the board's
enforced power limit allows; otherwise construction raises with the reason.

NVML errors are translated here, at the boundary: ``NVMLError_NoPermission`` becomes
``CounterUnavailable("... no permission ...")`` and so on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from eoc.cost import CounterKind
from eoc.errors import CounterFrozen, CounterReadFailed, CounterUnavailable, EocError
from eoc.meter.liveness import LivenessRule
from eoc_native import require
from eoc_native.counters.base import ProbedCounter
from eoc_native.counters.provenance import nvml_library_loaded, nvml_module

NVML_RULE = LivenessRule(tick_s=0.1, min_counted_s=0.8, max_probe_s=2.5)  # updates every 20-100 ms
RATE_SLACK = 1.5  # a counter may read up to 1.5x the power limit over a short window, no more

_TRANSLATE = {
    "NVMLError_NoPermission": "no permission to read the GPU's energy (run as a user in the video group, or root)",
    "NVMLError_LibraryNotFound": "no NVIDIA driver library (libnvidia-ml) on this host",
    "NVMLError_DriverNotLoaded": "the NVIDIA driver is not loaded",
    "NVMLError_NotSupported": "this GPU has no total-energy counter (Volta or newer needed)",
    "NVMLError_GpuIsLost": "the GPU fell off the bus",
    "NVMLError_InvalidArgument": "no such GPU index",
    "NVMLError_Uninitialized": "NVML is not initialised",
}


def translate(exc: BaseException, where: str) -> EocError:
    """An NVML exception as the eoc refusal that says what to do."""
    name = type(exc).__name__
    reason = _TRANSLATE.get(name)
    if reason is None:
        return CounterReadFailed(f"{where}: NVML error {name}: {exc}")
    return CounterUnavailable(f"{where}: {reason}")


class NvmlTelemetry(ProbedCounter):
    """One GPU's total energy, in µJ. Never a whole-work counter.

    Args:
        index: the GPU.
        pynvml: the module to use (tests pass :class:`eoc.testing.FakePynvml`).
        probe_now: probe at construction and refuse unless live and plausible (the default).
    """

    kind = CounterKind.HARDWARE
    resolution_uj = 1000.0  # mJ
    min_window_ns = 100_000_000
    liveness_rule = NVML_RULE
    telemetry_only = True

    def __init__(
        self,
        index: int = 0,
        *,
        pynvml: ModuleType | Any | None = None,
        probe_now: bool = True,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self.name = f"nvml:gpu{index}"
        self._nv = pynvml if pynvml is not None else require("pynvml", package="nvidia-ml-py")
        # only the installed pynvml over the real library reads a board, whatever a module calls
        # itself: a stand-in (FakePynvml, a module named pynvml elsewhere on the path) is a fake
        self.kind_reason = nvml_module(self._nv)
        self.kind = CounterKind.FAKE if self.kind_reason else CounterKind.HARDWARE
        try:
            self._nv.nvmlInit()
            self._handle = self._nv.nvmlDeviceGetHandleByIndex(index)
            self.power_limit_w = self._nv.nvmlDeviceGetEnforcedPowerLimit(self._handle) / 1000.0
            self.max_power_uw = self.power_limit_w * RATE_SLACK * 1e6
            self.device_name = str(self._nv.nvmlDeviceGetName(self._handle))
            self._nv.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except EocError:
            raise
        except Exception as exc:  # every NVMLError_* subclass, translated
            raise translate(exc, self.name) from None
        if self.kind is CounterKind.HARDWARE:
            loaded = nvml_library_loaded(self._nv)  # the genuine module over another library
            if loaded:
                self.kind, self.kind_reason = CounterKind.UNVERIFIED, loaded
        if self.kind_reason:
            self.kind_reason = f"{self.name}: {self.kind_reason}"
        if probe_now:
            t0 = self._clock()
            e0 = self.read_uj()
            status = self.status()
            if not status.is_live:
                raise CounterFrozen(f"{self.name}: not live: {status.reason}")
            secs = (self._clock() - t0) / 1e9
            watts = (self.read_uj() - e0) / 1e6 / secs if secs > 0 else float("inf")
            if watts > self.power_limit_w * RATE_SLACK:
                raise CounterReadFailed(
                    f"{self.name}: counted {watts:.0f} W over {secs:.2f} s, faster than the board's "
                    f"{self.power_limit_w:.0f} W limit allows: not a trustworthy energy counter"
                )

    def read_uj(self) -> int:
        try:
            return int(self._nv.nvmlDeviceGetTotalEnergyConsumption(self._handle)) * 1000
        except Exception as exc:
            raise translate(exc, self.name) from None


def nvml_telemetry(pynvml: ModuleType | Any | None = None) -> tuple[list[NvmlTelemetry], str]:
    """A telemetry counter per live GPU, or why there is none."""
    try:
        nv = pynvml if pynvml is not None else require("pynvml", package="nvidia-ml-py")
    except EocError as exc:
        return [], f"nvml: {exc.reason}"
    try:
        nv.nvmlInit()
        count = int(nv.nvmlDeviceGetCount())
    except Exception as exc:
        return [], translate(exc, "nvml").reason
    out: list[NvmlTelemetry] = []
    why: list[str] = []
    for i in range(count):
        try:
            out.append(NvmlTelemetry(i, pynvml=nv))
        except EocError as exc:
            why.append(exc.reason)
    return out, "; ".join(why) if why else ("" if out else "nvml: no GPU")


__all__ = ["NVML_RULE", "NvmlTelemetry", "nvml_telemetry", "translate"]
