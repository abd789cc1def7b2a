"""Fakes for testing code that uses eoc, shipped so users' own tests can use them.

* :class:`FakeClock` — a nanosecond clock and a sleep that only move when told.
* :class:`FakeCounter` — a counter with scripted readings: live, frozen, failing or wrapping.
* :class:`ScriptedBackend` — a neural backend that answers from a table and reports a chosen cost.

Nothing here is used by eoc itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from eoc.cost import CounterKind, JouleCost
from eoc.errors import CounterReadFailed
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import LivenessRule
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
        status: what :meth:`status` reports (LIVE by default: a fake *claims* what it is told).
        fail_after: reads that succeed before every further read raises.
        wrap_at: readings are reported modulo this (a RAPL-style wrap).
        name, kind, resolution_uj, min_window_ns: the counter protocol's attributes.
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
        kind: CounterKind = CounterKind.HARDWARE,
        resolution_uj: float = 1.0,
        min_window_ns: int = 0,
        liveness_rule: LivenessRule | None = None,
    ) -> None:
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
        self.kind = kind
        self.resolution_uj = resolution_uj
        self.min_window_ns = min_window_ns
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


class ScriptedBackend:
    """A neural backend answering from ``answers`` (or echoing) with a fixed reported cost."""

    def __init__(
        self,
        answers: Mapping[str, str] | None = None,
        *,
        cost: JouleCost | None = None,
        on_generate: Callable[[str], None] | None = None,
        name: str = "scripted",
    ) -> None:
        self.answers = dict(answers or {})
        self.cost = cost
        self.on_generate = on_generate
        self.name = name
        self.calls = 0

    def generate(self, prompt: str) -> Reply:
        self.calls += 1
        if self.on_generate is not None:
            self.on_generate(prompt)
        return Reply(self.answers.get(prompt, f"scripted: {prompt}"), self.cost)


__all__ = ["FakeClock", "FakeCounter", "ScriptedBackend"]
