"""The liveness probe: a counter is live only if it is seen to advance.

The probe reads the counter every tick (25 ms by default). An *interval* is the
time between two consecutive samples; only an interval no longer than three
ticks counts (a longer one means the host held the probe, and it counts as
nothing). The counter is LIVE when, over the counted intervals, it advanced in
at least five, in at least four of every five, and the counted intervals add up
to at least 300 ms. Otherwise it is FROZEN, including when the host held the
probe so that too few intervals counted. A read that fails makes it UNAVAILABLE,
and so does an interval implying more power than the counter can see
(:func:`~eoc.meter.counter.max_power_uw`): a counter that jumps is not metering.

Tick and thresholds are per counter (:class:`LivenessRule`): a counter that
publishes in bursts needs a longer tick.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from eoc.errors import ConfigError, CounterReadFailed, EocError
from eoc.meter.counter import Counter, CounterStatus, max_power_uw

Clock = Callable[[], int]
"""A monotonic clock in nanoseconds (``time.perf_counter_ns``)."""
Sleep = Callable[[float], None]
"""A sleep taking seconds (``time.sleep``)."""


@dataclass(frozen=True)
class LivenessRule:
    """Tick and thresholds of the probe for one counter."""

    tick_s: float = 0.025
    max_interval_ticks: int = 3
    min_advancing: int = 5
    advancing_num: int = 4  # advances in at least advancing_num of every advancing_den
    advancing_den: int = 5
    min_counted_s: float = 0.300
    max_probe_s: float = 1.5

    def __post_init__(self) -> None:
        if not (self.tick_s > 0 and self.max_interval_ticks >= 1 and self.min_advancing >= 1):
            raise ConfigError("a liveness rule needs a positive tick and thresholds of at least 1")
        if not (0 < self.advancing_num <= self.advancing_den):
            raise ConfigError("advancing_num must be between 1 and advancing_den")
        if self.max_probe_s < self.min_counted_s:
            raise ConfigError("max_probe_s must be at least min_counted_s")


DEFAULT_RULE = LivenessRule()


@dataclass(frozen=True, eq=False)
class ProbeResult:
    """What the probe saw, and the verdict.

    ``counter`` names the counter probed and ``by`` who ran the probe: ``"eoc"`` when eoc's
    own :func:`probe` produced it, anything else (``"caller"``) when it was handed in.
    """

    status: CounterStatus
    intervals: int  # all intervals sampled
    counted: int  # intervals no longer than max_interval_ticks ticks
    advancing: int  # counted intervals over which the counter advanced
    counted_ns: int  # total length of the counted intervals
    counter: str = ""
    by: str = "caller"

    @property
    def from_eoc(self) -> bool:
        """True only for a result that eoc's own :func:`probe` returned (not one built by hand)."""
        return self in _GENUINE

    def describe(self) -> str:
        who = (
            "probed by eoc" if self.from_eoc else f"a probe handed in by the {self.by or 'caller'}"
        )
        return f"{who}: {self.status}"


_GENUINE: weakref.WeakSet[ProbeResult] = weakref.WeakSet()  # identity: ProbeResult has eq=False


def judge(
    samples: list[tuple[int, int]],
    rule: LivenessRule = DEFAULT_RULE,
    *,
    max_power_uw: float | None = None,
) -> ProbeResult:
    """Judge a list of ``(t_ns, energy_uj)`` samples by the rule.

    With ``max_power_uw``, any interval (counted or not) whose energy implies more power
    than that makes the counter UNAVAILABLE: it jumped, so it is not metering.
    """
    max_ns = int(rule.max_interval_ticks * rule.tick_s * 1e9)
    counted = advancing = counted_ns = 0
    intervals = max(len(samples) - 1, 0)
    for (t0, e0), (t1, e1) in pairwise(samples):
        dt = t1 - t0
        if (
            max_power_uw is not None
            and e1 > e0
            and (dt <= 0 or (e1 - e0) * 1e9 > max_power_uw * dt)
        ):
            watts = float("inf") if dt <= 0 else (e1 - e0) / dt * 1e3
            reason = (
                f"implausible: it advanced {e1 - e0:,} µJ in {dt / 1e6:.3f} ms ({watts:,.0f} W), "
                f"above the {max_power_uw / 1e6:,.0f} W it can see"
            )
            return ProbeResult(CounterStatus.unavailable(reason), intervals, 0, 0, 0)
        if dt <= 0 or dt > max_ns:
            continue
        counted += 1
        counted_ns += dt
        if e1 > e0:
            advancing += 1
    need_ns = int(rule.min_counted_s * 1e9)
    more = -(-(need_ns - counted_ns) // int(rule.tick_s * 1e9)) if counted_ns < need_ns else 0
    if counted_ns < need_ns and not _can_be_live(rule, counted, advancing, more):
        status = CounterStatus.frozen(
            f"advanced in {advancing} of {counted} intervals, so it cannot advance in "
            f"{rule.advancing_num} of every {rule.advancing_den} over "
            f"{need_ns / 1e6:.0f} ms"
        )
    elif counted_ns < need_ns:
        reason = (
            f"only {counted_ns / 1e6:.0f} ms of {counted} usable intervals "
            f"(need {need_ns / 1e6:.0f} ms): the host held the probe; try again when it is quieter"
        )
        status = CounterStatus.frozen(reason)
    elif advancing < rule.min_advancing:
        status = CounterStatus.frozen(
            f"advanced in {advancing} of {counted} intervals (need at least {rule.min_advancing})"
        )
    elif advancing * rule.advancing_den < counted * rule.advancing_num:
        status = CounterStatus.frozen(
            f"advanced in {advancing} of {counted} intervals "
            f"(need {rule.advancing_num} of every {rule.advancing_den})"
        )
    else:
        status = CounterStatus.live(f"advanced in {advancing} of {counted} intervals")
    return ProbeResult(status, intervals, counted, advancing, counted_ns)


def probe(
    counter: Counter,
    rule: LivenessRule | None = None,
    *,
    clock: Clock = time.perf_counter_ns,
    sleep: Sleep = time.sleep,
) -> ProbeResult:
    """Sample ``counter`` every tick and judge whether it is live.

    Sampling stops once the counted intervals reach ``min_counted_s`` or after
    ``max_probe_s``. The rule defaults to the counter's ``liveness_rule``
    attribute when it has one, else :data:`DEFAULT_RULE`.
    """
    if rule is None:
        rule = getattr(counter, "liveness_rule", None) or DEFAULT_RULE
    max_ns = int(rule.max_interval_ticks * rule.tick_s * 1e9)
    need_ns = int(rule.min_counted_s * 1e9)
    deadline = clock() + int(rule.max_probe_s * 1e9)
    samples: list[tuple[int, int]] = []
    counted_ns = counted = advancing = 0
    shortest_ns = int(rule.tick_s * 1e9)
    try:
        samples.append((clock(), _read(counter)))
        while True:
            sleep(rule.tick_s)
            t = clock()
            samples.append((t, _read(counter)))
            dt = t - samples[-2][0]
            if 0 < dt <= max_ns:
                counted_ns += dt
                counted += 1
                advancing += samples[-1][1] > samples[-2][1]
                shortest_ns = max(1, min(shortest_ns, dt))
            if counted_ns >= need_ns or t >= deadline:
                break
            if not _can_be_live(
                rule, counted, advancing, -(-(need_ns - counted_ns) // shortest_ns)
            ):
                break  # the verdict is FROZEN whatever the rest would show: stop waiting
    except EocError as exc:
        out = ProbeResult(
            CounterStatus.unavailable(exc.reason), len(samples), 0, 0, 0, str(counter.name), "eoc"
        )
    else:
        seen = judge(samples, rule, max_power_uw=max_power_uw(counter))
        out = ProbeResult(
            seen.status,
            seen.intervals,
            seen.counted,
            seen.advancing,
            seen.counted_ns,
            str(getattr(counter, "name", "")),
            "eoc",
        )
    _GENUINE.add(out)
    return out


def _can_be_live(rule: LivenessRule, counted: int, advancing: int, more: int) -> bool:
    """Whether ``more`` further counted intervals, every one advancing, could still meet the
    rule after ``advancing`` of ``counted``. The probe stops at ``more`` intervals at most (each
    lasts a tick or longer, and it stops once it has counted ``min_counted_s``), so where this
    is false the probe's verdict is FROZEN already: a counter that reads 0 forever is known so
    after three intervals, not after the whole 300 ms."""
    best = advancing + more
    return best >= rule.min_advancing and best * rule.advancing_den >= (
        (counted + more) * rule.advancing_num
    )


def _read(counter: Counter) -> int:
    try:
        value = counter.read_uj()
    except EocError:
        raise
    except Exception as exc:  # a counter's own failure is translated here, at the boundary
        raise CounterReadFailed(f"{counter.name}: read failed: {exc}") from exc
    if isinstance(value, bool) or not isinstance(value, int):
        raise CounterReadFailed(f"{counter.name}: read returned {value!r}, not whole µJ")
    return value


__all__ = ["DEFAULT_RULE", "LivenessRule", "ProbeResult", "judge", "probe"]
