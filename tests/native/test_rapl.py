"""RAPL through a fake powercap tree: discovery, nesting, wraps, permissions, liveness."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eoc.cost import CounterKind
from eoc.errors import CounterUnavailable, WrapAmbiguous
from eoc.meter.counter import CounterState
from eoc.testing import FakeClock, PowercapZone, make_powercap_tree, set_energy
from eoc_native.counters.rapl import (
    PERMISSION_FIX,
    POWERCAP,
    RaplCounter,
    RaplZone,
    discover_zones,
    plan_zones,
    rapl_counters,
)

TWO_SOCKETS = [
    PowercapZone("intel-rapl:0", "package-0", 1_000),
    PowercapZone("intel-rapl:0:0", "core", 400),
    PowercapZone("intel-rapl:0:1", "uncore", 100),
    PowercapZone("intel-rapl:0:2", "dram", 50),
    PowercapZone("intel-rapl:1", "package-1", 2_000),
    PowercapZone("intel-rapl-mmio:0", "package-0", 999_999),  # the mmio twin
]


def test_zones_are_found_and_mmio_twins_dropped(tmp_path) -> None:
    zones = discover_zones(make_powercap_tree(tmp_path, TWO_SOCKETS))
    assert [(z.path.name, z.name) for z in zones] == [
        ("intel-rapl:0", "package-0"),
        ("intel-rapl:0:0", "core"),
        ("intel-rapl:0:1", "uncore"),
        ("intel-rapl:0:2", "dram"),
        ("intel-rapl:1", "package-1"),
    ]


def test_packages_are_summed_core_and_uncore_never_and_dram_apart(tmp_path) -> None:
    plan = plan_zones(discover_zones(make_powercap_tree(tmp_path, TWO_SOCKETS)))
    assert [z.name for z in plan.whole] == ["package-0", "package-1"]
    assert [z.name for z in plan.dram] == ["dram"]
    assert {z.name for z, _ in plan.declined} == {"core", "uncore"}


def test_psys_is_used_instead_of_the_packages_never_both(tmp_path) -> None:
    zones = [*TWO_SOCKETS, PowercapZone("intel-rapl:2", "psys", 5_000)]
    plan = plan_zones(discover_zones(make_powercap_tree(tmp_path, zones)))
    assert [z.name for z in plan.whole] == ["psys"]
    assert {z.name for z, why in plan.declined if "psys" in why} == {"package-0", "package-1"}


def test_reads_sum_the_sockets_from_files_kept_open(tmp_path) -> None:
    root = make_powercap_tree(tmp_path, TWO_SOCKETS)
    counter = RaplCounter(plan_zones(discover_zones(root)).whole, "rapl:package")
    assert counter.read_uj() == 0  # the first read is the baseline
    set_energy(root, "intel-rapl:0", 1_500)
    set_energy(root, "intel-rapl:1", 2_250)
    assert counter.read_uj() == 750
    counter.close()


def test_single_wraps_are_corrected_read_after_read(tmp_path) -> None:
    # a 1 mJ range rated at 1 mW (counted up to 1 W): a second wrap needs a millisecond
    zone = PowercapZone(
        "intel-rapl:0", "package-0", 900, max_energy_range_uj=1_000, max_power_uw=1_000
    )
    root = make_powercap_tree(tmp_path, [zone])
    clock = FakeClock()
    counter = RaplCounter(discover_zones(root), "rapl:package", clock=clock)
    counter.read_uj()
    total = 0
    for raw, step in [(100, 200), (300, 200), (250, 950), (50, 800)]:  # three wraps, each corrected
        clock.advance(1_000)
        set_energy(root, "intel-rapl:0", raw)
        total += step
        assert counter.read_uj() == total


def test_a_window_that_could_hide_a_second_wrap_is_refused(tmp_path) -> None:
    # 1 J range, rated 10 W (so up to 20 W counted): two wraps fit in 0.05 s
    zone = PowercapZone(
        "intel-rapl:0", "package-0", 0, max_energy_range_uj=1_000_000, max_power_uw=10_000_000
    )
    root = make_powercap_tree(tmp_path, [zone])
    clock = FakeClock()
    counter = RaplCounter(discover_zones(root), "rapl:package", clock=clock)
    counter.read_uj()
    clock.advance(10_000_000)  # 10 ms: fine
    set_energy(root, "intel-rapl:0", 100_000)
    assert counter.read_uj() == 100_000
    clock.advance(100_000_000)  # 100 ms: a second wrap could hide
    set_energy(root, "intel-rapl:0", 50_000)
    with pytest.raises(WrapAmbiguous, match="second wrap"):
        counter.read_uj()


def test_permission_denied_is_unavailable_with_the_fix(tmp_path) -> None:
    root = make_powercap_tree(tmp_path, TWO_SOCKETS)

    def denied(path: str, flags: int) -> int:
        raise PermissionError(13, "Permission denied", path)

    counter = RaplCounter(discover_zones(root)[:1], "rapl:package", opener=denied)
    status = counter.status()
    assert status.state is CounterState.UNAVAILABLE
    assert (
        "permission denied" in status.reason
        and "udev" in status.reason
        and "chmod" in status.reason
    )
    assert PERMISSION_FIX in status.reason
    with pytest.raises(CounterUnavailable):
        counter.read_uj()


def test_a_counter_that_advances_is_live_and_one_that_holds_is_frozen(tmp_path) -> None:
    root = make_powercap_tree(tmp_path, [PowercapZone("intel-rapl:0", "package-0", 0)])
    clock = FakeClock()
    energy = [0]

    def busy_sleep(secs: float) -> None:
        clock.sleep(secs)
        energy[0] += 250_000  # 10 W over a 25 ms tick
        set_energy(root, "intel-rapl:0", energy[0])

    live = RaplCounter(discover_zones(root), "rapl:package", clock=clock, sleep=busy_sleep)
    assert live.status().state is CounterState.LIVE
    frozen = RaplCounter(discover_zones(root), "rapl:package", clock=clock, sleep=clock.sleep)
    assert frozen.status().state is CounterState.FROZEN


def test_rapl_counters_offers_the_whole_work_and_dram_and_notes_the_rest(tmp_path) -> None:
    counters, notes = rapl_counters(make_powercap_tree(tmp_path, TWO_SOCKETS))
    assert [c.name for c in counters] == ["rapl:package", "rapl:dram"]
    assert any("core" in n for n in notes) and any("uncore" in n for n in notes)
    none, why = rapl_counters(tmp_path / "absent")
    assert none == [] and "no powercap zones" in why[0]


def test_a_garbled_energy_file_is_a_read_failure(tmp_path) -> None:
    from eoc.errors import CounterReadFailed

    root = make_powercap_tree(tmp_path, [PowercapZone("intel-rapl:0", "package-0", 0)])
    counter = RaplCounter(discover_zones(root), "rapl:package")
    (root / "intel-rapl:0" / "energy_uj").write_text("garbage\n")
    with pytest.raises(CounterReadFailed):
        counter.read_uj()


def test_a_powercap_tree_outside_sys_is_labelled_fake_and_declares_its_ceiling(tmp_path) -> None:
    """A hardware label must come from the real /sys/class/powercap, never from files we wrote."""
    zones = [
        PowercapZone("intel-rapl:0", "package-0", 1_000, max_power_uw=65_000_000),
        PowercapZone("intel-rapl:1", "package-1", 1_000, max_power_uw=65_000_000),
    ]
    plan = plan_zones(discover_zones(make_powercap_tree(tmp_path, zones)))
    counter = RaplCounter(plan.whole, "rapl:package")
    assert counter.kind is CounterKind.FAKE
    assert counter.max_power_uw == 2 * 130e6  # twice each zone's rated maximum, summed
    assert counter.min_window_ns == 10_000_000  # ten ~1 ms updates


def test_a_path_under_sys_is_no_evidence_of_hardware(tmp_path) -> None:
    """The attack: zones named under /sys/class/powercap and an opener that opens an ordinary
    file read "measured, hardware counter". The kind now comes from the open file itself."""
    ordinary = tmp_path / "powercap" / "intel-rapl:0" / "energy_uj"  # named like one, anywhere
    ordinary.parent.mkdir(parents=True)
    ordinary.write_text("123\n")
    zone = RaplZone(POWERCAP / "intel-rapl:0", "package-0", 1 << 32)
    forged = RaplCounter(
        [zone], "rapl:package", opener=lambda path, flags: os.open(ordinary, flags)
    )
    assert forged.kind is CounterKind.FAKE and "outside sysfs" in forged.kind_reason
    stdin = RaplCounter([zone], "rapl:package", opener=lambda path, flags: os.dup(0))
    assert stdin.kind is not CounterKind.HARDWARE
    # a real sysfs file that is not a powercap energy file: on sysfs, and still refused
    cpus = Path("/sys/devices/system/cpu/online")
    if cpus.exists():
        other = RaplCounter([zone], "rapl:package", opener=lambda path, flags: os.open(cpus, flags))
        assert (
            other.kind is CounterKind.FAKE and "is not a powercap energy file" in other.kind_reason
        )


def test_the_kind_follows_what_eoc_checked_on_the_open_files(tmp_path, monkeypatch) -> None:
    """Hardware only when eoc opened the files and each checked out; a caller's opener that reached
    verified files is at most unverified (this host has no powercap tree, so the check of the
    file itself is stood in for here; the refusals above run on the real one)."""
    from eoc.meter.trust import effective_kind, registered_counter_classes
    from eoc_native.counters import rapl

    plan = plan_zones(discover_zones(make_powercap_tree(tmp_path, TWO_SOCKETS)))
    assert RaplCounter(plan.whole, "rapl:package").kind is CounterKind.FAKE
    monkeypatch.setattr(rapl, "powercap_energy_file", lambda fd: "")
    mine = RaplCounter(plan.whole, "rapl:package")
    assert mine.kind is CounterKind.HARDWARE
    assert "eoc_native.counters.rapl:RaplCounter" in registered_counter_classes()
    assert effective_kind(mine) == (CounterKind.HARDWARE, "")
    theirs = RaplCounter(
        plan.whole, "rapl:package", opener=lambda path, flags: os.open(path, flags)
    )
    assert theirs.kind is CounterKind.UNVERIFIED
    assert effective_kind(theirs) == (CounterKind.UNVERIFIED, theirs.kind_reason)
    assert "caller-supplied opener" in theirs.kind_reason


def test_the_sysfs_check_reads_the_real_mount() -> None:
    from eoc_native.counters.provenance import powercap_energy_file, sysfs_device

    cpus = Path("/sys/devices/system/cpu/online")
    if sysfs_device() is None or not cpus.exists():
        pytest.skip("no sysfs at /sys here")
    fd = os.open(cpus, os.O_RDONLY)
    try:
        assert "is not a powercap energy file" in powercap_energy_file(fd)  # on sysfs, located
    finally:
        os.close(fd)
