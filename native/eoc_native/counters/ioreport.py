"""Apple Silicon energy through IOReport's "Energy Model" channels (in process, no sudo).

Two layers, kept apart so the arithmetic runs on Linux with replayed samples:

* :class:`IOReportCounter` — the arithmetic: each read takes a sample, asks the sampler for
  the delta since the previous one as ``(channel, unit, value)`` rows, converts mJ/µJ/nJ to µJ,
  and accumulates the whole-work channels (CPU, GPU, ANE, DRAM). Only channels the sampler
  reports as simple-format are counted. The counter is of kind ``vendor-model``: Apple computes
  the values from a model, but they are live.
* :class:`CoreFoundationSampler` — the ctypes binding to ``libIOReport.dylib`` and Core
  Foundation (macOS only).

A frozen CPU rail (identical samples, delta 0, while other rails advance — seen on several
Macs under macOS 27) makes the counter FROZEN: it would miss every CPU joule. Some mJ channels
publish only about once a second, so the probe's tick is a second.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from eoc.cost import CounterKind
from eoc.errors import CounterReadFailed, CounterUnavailable
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import LivenessRule
from eoc_native.counters.base import ProbedCounter

UNIT_TO_UJ = {"mJ": 1000.0, "uJ": 1.0, "µJ": 1.0, "nJ": 0.001}
# IOReport publishes some mJ channels about once a second: tick a second, count 6 s.
BURSTY_RULE = LivenessRule(tick_s=1.0, min_counted_s=6.0, max_probe_s=9.0)

Row = tuple[str, str, int]  # (channel name, unit label, value in that unit)


def is_cpu_channel(name: str) -> bool:
    """``CPU Energy`` or, on Ultra chips, ``DIE_N_CPU Energy``."""
    return name == "CPU Energy" or (name.startswith("DIE_") and name.endswith("_CPU Energy"))


def is_whole_work_channel(name: str) -> bool:
    return (
        is_cpu_channel(name)
        or name.startswith("GPU Energy")
        or name.startswith("ANE")
        or name.startswith("DRAM")
    )


def rows_to_uj(rows: Iterable[Row]) -> tuple[float, dict[str, float]]:
    """Total µJ over whole-work channels and the µJ per channel; unknown units are refused."""
    per: dict[str, float] = {}
    for name, unit, value in rows:
        if not is_whole_work_channel(name):
            continue
        scale = UNIT_TO_UJ.get(unit)
        if scale is None:
            raise CounterReadFailed(f"ioreport: channel {name!r} has unknown unit {unit!r}")
        per[name] = per.get(name, 0.0) + value * scale
    return sum(per.values()), per


class Sampler(Protocol):
    """Takes IOReport samples and turns two of them into simple-format delta rows."""

    def sample(self) -> object: ...

    def delta(self, before: object, after: object) -> Sequence[Row]: ...


class IOReportCounter(ProbedCounter):
    """Whole-work energy from IOReport's Energy Model channels, cumulative µJ."""

    name = "ioreport"
    kind = CounterKind.VENDOR_MODEL
    resolution_uj = 1000.0  # about 1 mJ
    min_window_ns = 10_000_000  # windows under ~10 ms are noise (Apple's model, ~1 mJ steps)
    liveness_rule = BURSTY_RULE
    max_power_uw = 2_000_000_000.0  # the host ceiling: IOReport publishes no limit

    def __init__(
        self,
        sampler: Sampler | None = None,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self._error: str | None = None
        # only Core Foundation's samples are Apple's; a replayed sampler is a fake
        self.kind = CounterKind.VENDOR_MODEL if sampler is None else CounterKind.FAKE
        if sampler is None:
            try:
                sampler = CoreFoundationSampler()
            except CounterUnavailable as exc:
                self._error = exc.reason
        self._sampler = sampler
        self._prev: object | None = None
        self._total_uj = 0.0
        self._per_channel: dict[str, float] = {}
        self._lock = threading.Lock()

    def unavailable_reason(self) -> str | None:
        return self._error

    def read_uj(self) -> int:
        if self._sampler is None:
            raise CounterUnavailable(self._error or "ioreport: no sampler")
        with self._lock:
            now = self._sampler.sample()
            if self._prev is not None:
                total, per = rows_to_uj(self._sampler.delta(self._prev, now))
                self._total_uj += total
                for k, v in per.items():
                    self._per_channel[k] = self._per_channel.get(k, 0.0) + v
            self._prev = now
            return int(self._total_uj)

    def status(self) -> CounterStatus:
        status = super().status()
        if status.is_live:
            cpu = {k: v for k, v in self._per_channel.items() if is_cpu_channel(k)}
            if not cpu or not any(cpu.values()):
                others = sorted(
                    k for k, v in self._per_channel.items() if v and not is_cpu_channel(k)
                )
                self._status = CounterStatus.frozen(
                    "ioreport: the CPU rail did not advance during the probe"
                    + (f" while {', '.join(others)} did" if others else "")
                    + ": it would miss every CPU joule, so it is declined"
                )
                return self._status
        return status


# -- the macOS binding ------------------------------------------------------------------------

_kCFStringEncodingUTF8 = 0x08000100


class CoreFoundationSampler:
    """IOReport through ctypes: subscribe to "Energy Model", sample, delta, read simple channels."""

    def __init__(self) -> None:
        if sys.platform != "darwin":
            raise CounterUnavailable("ioreport: IOReport exists only on macOS")
        try:
            self.cf: Any = ctypes.CDLL(ctypes.util.find_library("CoreFoundation") or "")
            self.io: Any = ctypes.CDLL("/usr/lib/libIOReport.dylib")
        except OSError as exc:
            raise CounterUnavailable(f"ioreport: cannot load libIOReport: {exc}") from None
        cf, io = self.cf, self.io
        vp = ctypes.c_void_p
        cf.CFStringCreateWithCString.restype = vp
        cf.CFStringCreateWithCString.argtypes = [vp, ctypes.c_char_p, ctypes.c_uint32]
        cf.CFStringGetCString.argtypes = [vp, ctypes.c_char_p, ctypes.c_long, ctypes.c_uint32]
        cf.CFStringGetCString.restype = ctypes.c_bool
        cf.CFDictionaryGetValue.restype = vp
        cf.CFDictionaryGetValue.argtypes = [vp, vp]
        cf.CFArrayGetCount.restype = ctypes.c_long
        cf.CFArrayGetCount.argtypes = [vp]
        cf.CFArrayGetValueAtIndex.restype = vp
        cf.CFArrayGetValueAtIndex.argtypes = [vp, ctypes.c_long]
        cf.CFRelease.argtypes = [vp]
        cf.CFDictionaryCreateMutableCopy.restype = vp
        cf.CFDictionaryCreateMutableCopy.argtypes = [vp, ctypes.c_long, vp]
        io.IOReportCopyChannelsInGroup.restype = vp
        io.IOReportCopyChannelsInGroup.argtypes = [
            vp,
            vp,
            ctypes.c_uint64,
            ctypes.c_uint64,
            ctypes.c_uint64,
        ]
        io.IOReportCreateSubscription.restype = vp
        io.IOReportCreateSubscription.argtypes = [vp, vp, ctypes.POINTER(vp), ctypes.c_uint64, vp]
        io.IOReportCreateSamples.restype = vp
        io.IOReportCreateSamples.argtypes = [vp, vp, vp]
        io.IOReportCreateSamplesDelta.restype = vp
        io.IOReportCreateSamplesDelta.argtypes = [vp, vp, vp]
        io.IOReportChannelGetChannelName.restype = vp
        io.IOReportChannelGetChannelName.argtypes = [vp]
        io.IOReportChannelGetUnitLabel.restype = vp
        io.IOReportChannelGetUnitLabel.argtypes = [vp]
        io.IOReportChannelGetFormat.restype = ctypes.c_int
        io.IOReportChannelGetFormat.argtypes = [vp]
        io.IOReportSimpleGetIntegerValue.restype = ctypes.c_int64
        io.IOReportSimpleGetIntegerValue.argtypes = [vp, ctypes.c_int32]
        group = self._cfstr("Energy Model")
        channels = io.IOReportCopyChannelsInGroup(group, None, 0, 0, 0)
        if not channels:
            raise CounterUnavailable("ioreport: no 'Energy Model' channel group on this Mac")
        self._channels: Any = cf.CFDictionaryCreateMutableCopy(None, 0, channels)
        subbed = vp()
        self._sub: Any = io.IOReportCreateSubscription(
            None, self._channels, ctypes.byref(subbed), 0, None
        )
        if not self._sub:
            raise CounterUnavailable("ioreport: could not subscribe to the Energy Model channels")
        self._subbed: Any = subbed
        self._key: Any = self._cfstr("IOReportChannels")

    def _cfstr(self, text: str) -> Any:
        return self.cf.CFStringCreateWithCString(None, text.encode(), _kCFStringEncodingUTF8)

    def _str(self, ref: Any) -> str:
        if not ref:
            return ""
        buf = ctypes.create_string_buffer(256)
        ok = self.cf.CFStringGetCString(ref, buf, 256, _kCFStringEncodingUTF8)
        return buf.value.decode("utf-8", "replace") if ok else ""

    def sample(self) -> object:
        s = self.io.IOReportCreateSamples(self._sub, self._subbed, None)
        if not s:
            raise CounterReadFailed("ioreport: IOReportCreateSamples returned nothing")
        return s

    def delta(self, before: object, after: object) -> list[Row]:
        d = self.io.IOReportCreateSamplesDelta(before, after, None)
        if not d:
            raise CounterReadFailed("ioreport: IOReportCreateSamplesDelta returned nothing")
        try:
            items = self.cf.CFDictionaryGetValue(d, self._key)
            rows: list[Row] = []
            for i in range(self.cf.CFArrayGetCount(items) if items else 0):
                item = self.cf.CFArrayGetValueAtIndex(items, i)
                if self.io.IOReportChannelGetFormat(item) != 1:  # only simple channels
                    continue
                rows.append(
                    (
                        self._str(self.io.IOReportChannelGetChannelName(item)),
                        self._str(self.io.IOReportChannelGetUnitLabel(item)),
                        int(self.io.IOReportSimpleGetIntegerValue(item, 0)),
                    )
                )
            return rows
        finally:
            self.cf.CFRelease(d)
            self.cf.CFRelease(before)


__all__ = [
    "BURSTY_RULE",
    "UNIT_TO_UJ",
    "CoreFoundationSampler",
    "IOReportCounter",
    "Sampler",
    "is_cpu_channel",
    "is_whole_work_channel",
    "rows_to_uj",
]
