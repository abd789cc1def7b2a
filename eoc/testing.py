"""Fakes for testing code that uses eoc, shipped so users' own tests can use them.

* :class:`FakeClock` — a nanosecond clock and a sleep that only move when told.
* :class:`FakeCounter` — a counter with scripted readings: live, frozen, failing or wrapping.
  Its kind is always ``fake``, and that shows in every figure read from it.
* :func:`assume_live` — a probe result saying a counter is live, for a cascade over scripted
  readings that a real probe would use up (every figure then says so).
* :class:`ScriptedBackend` — a neural backend that answers from a table and reports a chosen cost.

For the native counters (all pure Python, usable without any hardware):

* :func:`make_powercap_tree` / :func:`set_energy` — a fake ``/sys/class/powercap`` in a folder.
* :class:`FakePerfEvents` — stands in for ``perf_event_open`` and ``read``.
* :class:`IOReportReplay` — replays IOReport delta rows ``(channel, unit, value)``.
* :class:`FakePynvml` — a stand-in for the ``pynvml`` module, errors included.

Nothing here is used by eoc itself.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eoc.cost import CounterKind, JouleCost
from eoc.errors import CounterReadFailed
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import LivenessRule, ProbeResult
from eoc.stages.neural import Reply


class FakeClock:
    """A monotonic nanosecond clock that advances ``step_ns`` per call and on ``sleep``.

    Use the instance as ``clock=`` and its :meth:`sleep` as ``sleep=``.
    """

    def __init__(self, start_ns: int = 0, step_ns: int = 0) -> None:
        self.now_ns = start_ns
        self.step_ns = step_ns

    def __call__(self) -> int:
        now = self.now_ns
        self.now_ns += self.step_ns
        return now

    def sleep(self, secs: float) -> None:
        self.advance(int(secs * 1e9))

    def advance(self, ns: int) -> None:
        self.now_ns += ns


class FakeCounter:
    """A counter whose readings are scripted.

    Exactly one source of readings:

    * ``readings_uj`` — returned in order; after the last, the last is repeated
      (the counter holds, as a frozen counter does);
    * ``step_uj`` — each read advances by this many µJ;
    * ``watts`` with ``clock`` — energy grows with the clock's time.

    Args:
        status: what :meth:`status` reports (LIVE by default: a fake *claims* what it is told,
            and the cascade, which probes for itself, does not believe it).
        fail_after: reads that succeed before every further read raises.
        wrap_at: readings are reported modulo this (a RAPL-style wrap).
        max_power_w: the most power it declares it can see (``None``: the host ceiling).
        name: the counter protocol's ``name``.
        resolution_uj: the counter protocol's ``resolution_uj``.
        min_window_ns: the counter protocol's ``min_window_ns``.
        kind: always ``CounterKind.FAKE``; any other value is refused, so a fake can never
            be shown as hardware.
    """

    def __init__(
        self,
        readings_uj: Iterable[int] | None = None,
        *,
        step_uj: int | None = None,
        watts: float | None = None,
        clock: Callable[[], int] | None = None,
        status: CounterStatus | None = None,
        fail_after: int | None = None,
        wrap_at: int | None = None,
        name: str = "fake",
        kind: CounterKind = CounterKind.FAKE,
        resolution_uj: float = 1.0,
        min_window_ns: int = 0,
        max_power_w: float | None = None,
        liveness_rule: LivenessRule | None = None,
    ) -> None:
        if kind is not CounterKind.FAKE:
            raise ValueError("a FakeCounter is always of kind fake: it must never show as hardware")
        sources = sum(x is not None for x in (readings_uj, step_uj, watts))
        if sources != 1:
            raise ValueError("give exactly one of readings_uj, step_uj or watts")
        if watts is not None and clock is None:
            raise ValueError("watts needs a clock")
        self._readings = list(readings_uj) if readings_uj is not None else None
        self._step = step_uj
        self._watts = watts
        self._clock = clock
        self._status = status if status is not None else CounterStatus.live("fake counter")
        self._fail_after = fail_after
        self._wrap_at = wrap_at
        self._value = 0
        self.reads = 0
        self.name = name
        self.kind = CounterKind.FAKE
        self.resolution_uj = resolution_uj
        self.min_window_ns = min_window_ns
        self.max_power_uw = None if max_power_w is None else max_power_w * 1e6
        self.liveness_rule = liveness_rule

    @classmethod
    def frozen(cls, value_uj: int = 0, **kwargs: object) -> FakeCounter:
        """A counter that reads the same value forever (like perf ``energy-psys`` on our VMs)."""
        return cls([value_uj], **kwargs)  # type: ignore[arg-type]

    @classmethod
    def failing(cls, **kwargs: object) -> FakeCounter:
        """A counter whose every read raises."""
        return cls(step_uj=1, fail_after=0, **kwargs)  # type: ignore[arg-type]

    def read_uj(self) -> int:
        if self._fail_after is not None and self.reads >= self._fail_after:
            self.reads += 1
            raise CounterReadFailed(f"{self.name}: scripted read failure")
        i = self.reads
        self.reads += 1
        if self._readings is not None:
            value = self._readings[min(i, len(self._readings) - 1)]
        elif self._step is not None:
            self._value += self._step
            value = self._value
        else:
            assert self._clock is not None and self._watts is not None
            value = int(self._clock() * self._watts / 1000)  # W * ns = nJ; / 1000 = µJ
        if self._wrap_at is not None:
            value %= self._wrap_at
        return value

    def status(self) -> CounterStatus:
        return self._status

    def __repr__(self) -> str:
        return f"FakeCounter(name={self.name!r}, status={self._status})"


def assume_live(counter: object, who: str = "test") -> ProbeResult:
    """A LIVE probe result for ``counter`` that eoc did not make (``Cascade(liveness=...)``).

    For a cascade over scripted readings, which a real probe would use up. Every figure the
    cascade then reports says its liveness came from a probe handed in by ``who``.
    """
    return ProbeResult(
        CounterStatus.live(f"assumed live by the {who}"),
        0,
        0,
        0,
        0,
        str(getattr(counter, "name", "")),
        who,
    )


class ScriptedBackend:
    """A neural backend answering from ``answers`` (or echoing) with a fixed reported cost."""

    def __init__(
        self,
        answers: Mapping[str, str] | None = None,
        *,
        cost: JouleCost | None = None,
        on_generate: Callable[[str], None] | None = None,
        name: str = "scripted",
        runs_model: bool = True,
        memoize: bool = True,
    ) -> None:
        self.answers = dict(answers or {})
        self.runs_model = runs_model  # it stands in for a model, so its answers are remembered
        self.memoize = memoize
        self.cost = cost
        self.on_generate = on_generate
        self.name = name
        self.calls = 0
        self.chats: list[Any] = []

    def generate(self, prompt: str) -> Reply:
        self.calls += 1
        if self.on_generate is not None:
            self.on_generate(prompt)
        return Reply(self.answers.get(prompt, f"scripted: {prompt}"), self.cost, self.memoize)

    def chat(self, request: Any, on_piece: Callable[[str], None] | None = None) -> Reply:
        """Answers a conversation's last message the same way, streamed in two pieces; the
        requests are kept in ``chats``."""
        self.chats.append(request)
        reply = self.generate(request.question)
        if on_piece is not None:
            half = len(reply.text) // 2
            on_piece(reply.text[:half])
            on_piece(reply.text[half:])
        return reply._replace(memoize=self.memoize and request.repeatable)


@dataclass(frozen=True)
class PowercapZone:
    """One zone of a fake powercap tree, e.g. ``PowercapZone("intel-rapl:0", "package-0", 1000)``."""

    dirname: str
    name: str
    energy_uj: int = 0
    max_energy_range_uj: int = 262_143_328_850
    max_power_uw: int | None = None


def make_powercap_tree(root: str | Path, zones: Iterable[PowercapZone]) -> Path:
    """Write a fake ``/sys/class/powercap`` under ``root`` (files ``name``, ``energy_uj``, ...)."""
    base = Path(root)
    for z in zones:
        d = base / z.dirname
        d.mkdir(parents=True, exist_ok=True)
        (d / "name").write_text(z.name + "\n")
        (d / "energy_uj").write_text(f"{z.energy_uj}\n")
        (d / "max_energy_range_uj").write_text(f"{z.max_energy_range_uj}\n")
        if z.max_power_uw is not None:
            (d / "constraint_0_max_power_uw").write_text(f"{z.max_power_uw}\n")
    return base


def set_energy(root: str | Path, dirname: str, energy_uj: int) -> None:
    """Set a fake zone's ``energy_uj`` (in place, so a file kept open sees the new value)."""
    with open(Path(root) / dirname / "energy_uj", "r+") as f:
        f.seek(0)
        f.truncate()
        f.write(f"{energy_uj}\n")


class FakePerfEvents:
    """Stands in for perf_event_open/read: each CPU's counts come from ``counts[cpu]`` in turn
    (the last repeats), or ``open_errno`` makes every open fail (``errno.EACCES`` ...)."""

    def __init__(
        self, counts: Mapping[int, Sequence[int]] | None = None, *, open_errno: int | None = None
    ) -> None:
        self.counts = {cpu: list(v) for cpu, v in (counts or {}).items()}
        self.open_errno = open_errno
        self.opened: list[tuple[int, int, int]] = []  # (pmu type, config, cpu)
        self._reads: dict[int, int] = {}
        self.closed: list[int] = []

    def open(self, pmu_type: int, config: int, cpu: int) -> int:
        if self.open_errno is not None:
            raise OSError(self.open_errno, errno.errorcode.get(self.open_errno, "error"))
        self.opened.append((pmu_type, config, cpu))
        return cpu + 100

    def read(self, fd: int) -> int:
        cpu = fd - 100
        series = self.counts.get(cpu, [0])
        i = self._reads.get(fd, 0)
        self._reads[fd] = i + 1
        return series[min(i, len(series) - 1)]

    def close(self, fd: int) -> None:
        self.closed.append(fd)


class IOReportReplay:
    """Replays IOReport: the n-th ``delta`` returns ``deltas[n]`` (the last repeats)."""

    def __init__(self, deltas: Sequence[Sequence[tuple[str, str, int]]]) -> None:
        self.deltas = [list(d) for d in deltas]
        self._n = 0
        self._samples = 0

    def sample(self) -> object:
        self._samples += 1
        return self._samples

    def delta(self, before: object, after: object) -> list[tuple[str, str, int]]:
        rows = self.deltas[min(self._n, len(self.deltas) - 1)]
        self._n += 1
        return rows


class FakePynvml:
    """A stand-in for the ``pynvml`` module.

    Args:
        energy_mj: per GPU, the readings of nvmlDeviceGetTotalEnergyConsumption in turn, or a
            callable returning the reading.
        power_limit_mw: the enforced power limit of every GPU.
        fail: name of an NVML error class (``"NVMLError_NoPermission"`` ...) that nvmlInit raises.
    """

    class NVMLError(Exception):
        pass

    def __init__(
        self,
        energy_mj: Sequence[Sequence[int] | Callable[[], int]] = ((0,),),
        *,
        power_limit_mw: int = 300_000,
        fail: str | None = None,
        fail_energy: str | None = None,
    ) -> None:
        self.energy = list(energy_mj)
        self.power_limit_mw = power_limit_mw
        self.fail = fail
        self.fail_energy = fail_energy
        self._reads: dict[int, int] = {}
        for name in (
            "NVMLError_NoPermission",
            "NVMLError_LibraryNotFound",
            "NVMLError_DriverNotLoaded",
            "NVMLError_NotSupported",
            "NVMLError_GpuIsLost",
            "NVMLError_Unknown",
        ):
            setattr(self, name, type(name, (FakePynvml.NVMLError,), {}))

    def _raise(self, name: str) -> None:
        raise getattr(self, name)(name)

    def nvmlInit(self) -> None:
        if self.fail:
            self._raise(self.fail)

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return len(self.energy)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.energy):
            self._raise("NVMLError_Unknown")
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return f"Fake GPU {handle}"

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return self.power_limit_mw

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        if self.fail_energy:
            self._raise(self.fail_energy)
        source = self.energy[handle]
        if callable(source):
            return int(source())
        i = self._reads.get(handle, 0)
        self._reads[handle] = i + 1
        return int(source[min(i, len(source) - 1)])


__all__ = [
    "FakeClock",
    "FakeCounter",
    "FakePerfEvents",
    "FakePynvml",
    "IOReportReplay",
    "PowercapZone",
    "ScriptedBackend",
    "assume_live",
    "make_powercap_tree",
    "set_energy",
]
