"""The liveness probe, exactly as docs/design.md states it, driven by fake time."""

from __future__ import annotations

import pytest

from eoc.meter import LivenessRule, judge, probe
from eoc.meter.counter import CounterState
from eoc.testing import FakeClock, FakeCounter

MS = 1_000_000
TICK = 25 * MS


def samples_from(deltas: list[int], dt_ns: int = TICK) -> list[tuple[int, int]]:
    out = [(0, 0)]
    for d in deltas:
        t, e = out[-1]
        out.append((t + dt_ns, e + d))
    return out


def test_advancing_counter_is_live() -> None:
    clock = FakeClock()
    result = probe(FakeCounter(step_uj=15), clock=clock, sleep=clock.sleep)
    assert result.status.state is CounterState.LIVE
    assert result.counted_ns >= 300 * MS
    assert clock.now_ns < 500 * MS  # it stops once it has seen enough


def test_counter_that_reads_zero_forever_is_frozen() -> None:
    clock = FakeClock()
    result = probe(FakeCounter.frozen(0), clock=clock, sleep=clock.sleep)
    assert result.status.state is CounterState.FROZEN
    assert "advanced in 0" in result.status.reason


def test_a_counter_that_reads_zero_forever_is_known_frozen_after_three_intervals() -> None:
    """No later interval could make it live (it would need 4 of every 5 over 12), so the probe
    stops there: a process on a VM whose perf energy-psys holds at 0 waits 75 ms, not 300."""
    clock = FakeClock()
    result = probe(FakeCounter.frozen(0), clock=clock, sleep=clock.sleep)
    assert not result.status.is_live
    assert clock.now_ns == 3 * TICK
    assert "advanced in 0 of 3 intervals" in result.status.reason


@pytest.mark.parametrize(
    "readings",
    [
        [0, 0, 0, *range(15, 15 * 12, 15)],  # holds for two intervals, then advances
        [0, 15, 15, 15, *range(30, 15 * 12, 15)],  # holds for two in the middle
    ],
    ids=["holds-first", "holds-in-the-middle"],
)
def test_a_counter_that_holds_for_two_intervals_is_probed_to_the_end_and_live(
    readings: list[int],
) -> None:
    clock = FakeClock()
    result = probe(FakeCounter(readings), clock=clock, sleep=clock.sleep)
    assert result.status.is_live, result.status.reason
    assert (result.counted, result.advancing) == (12, 10)


def test_failing_counter_is_unavailable_with_the_reason() -> None:
    clock = FakeClock()
    result = probe(FakeCounter.failing(), clock=clock, sleep=clock.sleep)
    assert result.status.state is CounterState.UNAVAILABLE
    assert "scripted read failure" in result.status.reason


def test_counter_raising_a_foreign_error_is_unavailable() -> None:
    class Broken(FakeCounter):
        def read_uj(self) -> int:
            raise OSError("EACCES")

    clock = FakeClock()
    result = probe(Broken(step_uj=1), clock=clock, sleep=clock.sleep)
    assert result.status.state is CounterState.UNAVAILABLE and "EACCES" in result.status.reason


def test_four_of_every_five_is_enough() -> None:
    assert judge(samples_from([1, 1, 1, 1, 0] * 3)).status.is_live


def test_three_of_every_five_is_not() -> None:
    result = judge(samples_from([1, 1, 1, 0, 0] * 3))
    assert result.status.state is CounterState.FROZEN and "4 of every 5" in result.status.reason


def test_at_least_five_advancing_intervals_are_needed() -> None:
    # 4 advancing intervals that are long enough in total are still not enough
    assert not judge(samples_from([1, 1, 1, 1], dt_ns=75 * MS)).status.is_live
    assert judge(samples_from([1, 1, 1, 1, 1], dt_ns=75 * MS)).status.is_live


def test_at_least_300_ms_of_counted_intervals_are_needed() -> None:
    assert not judge(samples_from([1] * 11)).status.is_live  # 275 ms
    assert judge(samples_from([1] * 12)).status.is_live  # 300 ms


def test_an_interval_of_exactly_three_ticks_counts_and_a_longer_one_does_not() -> None:
    assert judge(samples_from([1] * 5, dt_ns=75 * MS)).counted == 5
    assert judge(samples_from([1] * 5, dt_ns=75 * MS + 1)).counted == 0


def test_a_host_that_held_the_probe_makes_the_counter_frozen() -> None:
    clock = FakeClock()
    held = lambda secs: clock.advance(100 * MS)  # noqa: E731 - every sleep overshoots 4x
    result = probe(FakeCounter(step_uj=15), clock=clock, sleep=held)
    assert result.status.state is CounterState.FROZEN
    assert "held the probe" in result.status.reason
    assert result.counted == 0


def test_a_counter_going_backwards_does_not_count_as_advancing() -> None:
    assert judge(samples_from([1, -5] * 7)).advancing == 7
    assert not judge(samples_from([1, -5] * 7)).status.is_live


def test_rule_is_per_counter() -> None:
    """A bursty counter (publishes once a second) is live under a longer tick."""
    rule = LivenessRule(tick_s=1.0, min_counted_s=5.0, max_probe_s=12.0)
    clock = FakeClock()
    counter = FakeCounter(step_uj=1000, liveness_rule=rule)
    result = probe(counter, clock=clock, sleep=clock.sleep)
    assert result.status.is_live and result.counted_ns >= 5_000 * MS


def test_bad_rules_are_refused() -> None:
    from eoc.errors import ConfigError

    with pytest.raises(ConfigError):
        LivenessRule(tick_s=0)
    with pytest.raises(ConfigError):
        LivenessRule(advancing_num=6)


def test_a_counter_that_jumps_beyond_its_ceiling_is_not_live() -> None:
    from eoc.meter.liveness import probe
    from eoc.testing import FakeClock, FakeCounter

    clock = FakeClock(step_ns=1_000_000)
    jumpy = FakeCounter(step_uj=10**12)  # 10^6 J per 26 ms: far above the 2 kW host ceiling
    result = probe(jumpy, clock=clock, sleep=clock.sleep)
    assert not result.status.is_live and "implausible" in result.status.reason
    assert result.from_eoc and result.counter == jumpy.name
