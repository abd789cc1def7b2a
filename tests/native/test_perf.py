"""The perf power PMU: sysfs parsing, per-socket sums, permissions, and the real syscall."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from eoc.meter.counter import CounterState
from eoc.testing import FakeClock, FakePerfEvents
from eoc_native.counters.perf import (
    POWER_PMU,
    PerfPowerCounter,
    SyscallPerfEvents,
    discover_events,
    parse_config,
    parse_cpumask,
    perf_counters,
)

SCALE = "2.3283064365386962890625e-10"  # 2^-32 J


def fake_pmu(
    root: Path, cpumask: str = "0,64", events: tuple[str, ...] = ("pkg", "psys", "ram")
) -> Path:
    (root / "events").mkdir(parents=True)
    (root / "type").write_text("23\n")
    (root / "cpumask").write_text(cpumask + "\n")
    for i, name in enumerate(events, 1):
        (root / "events" / f"energy-{name}").write_text(f"event=0x{i:02x}\n")
        (root / "events" / f"energy-{name}.scale").write_text(SCALE + "\n")
        (root / "events" / f"energy-{name}.unit").write_text("Joules\n")
    return root


def test_cpumask_and_config_parse() -> None:
    assert parse_cpumask("0,64\n") == (0, 64)
    assert parse_cpumask("0-2,8") == (0, 1, 2, 8)
    assert parse_config("event=0x02") == 2
    with pytest.raises(ValueError):
        parse_config("umask=1")


def test_events_are_read_from_sysfs(tmp_path) -> None:
    events, why = discover_events(fake_pmu(tmp_path))
    assert why == ""
    pkg = next(e for e in events if e.name == "energy-pkg")
    assert (pkg.pmu_type, pkg.config, pkg.cpus, pkg.unit) == (23, 1, (0, 64), "Joules")
    assert pkg.scale_j == pytest.approx(2**-32)


def test_one_event_per_socket_summed_and_scaled_to_microjoules(tmp_path) -> None:
    events, _ = discover_events(fake_pmu(tmp_path))
    pkg = next(e for e in events if e.name == "energy-pkg")
    fake = FakePerfEvents({0: [2**32], 64: [2**33]})  # 1 J and 2 J
    counter = PerfPowerCounter(pkg, fake)
    assert [cpu for _, _, cpu in fake.opened] == [0, 64]
    assert counter.read_uj() == 3_000_000
    counter.close()
    assert len(fake.closed) == 2


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM])
def test_no_permission_is_unavailable_with_the_fix(tmp_path, code: int) -> None:
    events, _ = discover_events(fake_pmu(tmp_path))
    counter = PerfPowerCounter(events[0], FakePerfEvents(open_errno=code))
    status = counter.status()
    assert status.state is CounterState.UNAVAILABLE and "perf_event_paranoid" in status.reason


def test_a_psys_event_that_reads_zero_forever_is_frozen(tmp_path) -> None:
    events, _ = discover_events(fake_pmu(tmp_path, cpumask="0"))
    psys = next(e for e in events if e.name == "energy-psys")
    clock = FakeClock()
    counter = PerfPowerCounter(psys, FakePerfEvents({0: [0]}), clock=clock, sleep=clock.sleep)
    status = counter.status()
    assert status.state is CounterState.FROZEN and "advanced in 0" in status.reason


def test_psys_is_preferred_then_pkg_and_never_ram(tmp_path) -> None:
    counters, why = perf_counters(fake_pmu(tmp_path), FakePerfEvents({0: [1], 64: [1]}))
    assert [c.name for c in counters] == ["perf/energy-psys", "perf/energy-pkg"] and why == ""


def test_no_power_pmu_says_so(tmp_path) -> None:
    counters, why = perf_counters(tmp_path / "absent")
    assert counters == [] and "no power PMU" in why


def test_the_real_syscall_opens_and_reads_a_software_event() -> None:
    """The ctypes path itself, on a counter every Linux has: the software task clock (type 1, config 1)."""
    try:
        events = SyscallPerfEvents()
        fd = events.open(1, 1, 0)
    except OSError as exc:
        pytest.skip(f"perf_event_open is not allowed here: {exc}")
    try:
        a = events.read(fd)
        sum(range(200_000))
        b = events.read(fd)
        assert b > a >= 0
    finally:
        events.close(fd)


@pytest.mark.skipif(
    not POWER_PMU.is_dir(), reason=f"this host has no perf power PMU ({POWER_PMU} is absent)"
)
def test_the_real_power_pmu_psys_counter_on_this_host_is_reported_as_it_is() -> None:
    """On this project's VMs energy-psys opens and reads 0 forever: it must come out FROZEN, never live."""
    counters, why = perf_counters()
    psys = next((c for c in counters if c.name == "perf/energy-psys"), None)
    if psys is None:
        pytest.skip(f"no energy-psys event here: {why}")
    status = psys.status()
    if os.environ.get("EOC_EXPECT_FROZEN_PSYS", "1") == "1" and psys.read_uj() == 0:
        assert status.state is CounterState.FROZEN
    assert status.state is not CounterState.LIVE or psys.read_uj() > 0


def test_perf_events_from_an_injected_source_are_labelled_fake(tmp_path) -> None:
    from eoc.cost import CounterKind
    from eoc.testing import FakePerfEvents
    from eoc_native.counters.perf import PerfEvent, PerfPowerCounter

    event = PerfEvent("energy-pkg", 9, 2, 2.0**-32, "Joules", (0,))
    counter = PerfPowerCounter(event, FakePerfEvents({0: [0, 1 << 32]}))
    assert counter.kind is CounterKind.FAKE and PerfPowerCounter.kind is CounterKind.HARDWARE
    assert counter.min_window_ns == 10_000_000


def test_a_software_clock_event_called_joules_is_no_hardware_counter() -> None:
    """The attack: PerfPowerCounter on the software clock (type 1) with unit Joules read
    "measured, hardware counter". The event is checked against the power PMU's sysfs entry."""
    from eoc.cost import CounterKind
    from eoc_native.counters.perf import PerfEvent

    clock = PerfEvent("energy-pkg", 1, 0, 2.0**-32, "Joules", (0,))
    counter = PerfPowerCounter(clock)
    assert counter.kind is CounterKind.FAKE
    assert "power PMU" in counter.kind_reason


def test_an_event_is_the_power_pmus_only_as_sysfs_describes_it(tmp_path) -> None:
    from eoc_native.counters.provenance import power_pmu_event

    root = fake_pmu(tmp_path / "power")
    scale = float(SCALE)
    assert power_pmu_event(23, 1, "energy-pkg", scale, "Joules", root=root) == ""
    assert "type 1 is not" in power_pmu_event(1, 1, "energy-pkg", scale, "Joules", root=root)
    assert "config" in power_pmu_event(23, 9, "energy-pkg", scale, "Joules", root=root)
    assert "scale" in power_pmu_event(23, 1, "energy-pkg", 1.0, "Joules", root=root)
    assert "no event" in power_pmu_event(23, 1, "energy-gpu", scale, "Joules", root=root)
    assert "absent" in power_pmu_event(23, 1, "energy-pkg", scale, "Joules", root=tmp_path / "x")
