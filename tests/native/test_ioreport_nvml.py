"""IOReport arithmetic on replayed samples; NVML telemetry through a fake pynvml."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.cost import CounterKind
from eoc.errors import ConfigError, CounterFrozen, CounterReadFailed, CounterUnavailable
from eoc.meter import detect_all
from eoc.meter.counter import CounterState
from eoc.testing import FakeClock, FakePynvml, IOReportReplay
from eoc_native.counters.ioreport import CoreFoundationSampler, IOReportCounter, rows_to_uj
from eoc_native.counters.nvml import NvmlTelemetry, nvml_telemetry

# -- IOReport -------------------------------------------------------------------------------


def test_units_convert_to_microjoules_and_other_channels_are_ignored() -> None:
    total, per = rows_to_uj(
        [
            ("CPU Energy", "mJ", 3),
            ("GPU Energy", "nJ", 5_000),
            ("ANE", "uJ", 7),
            ("GPU SRAM", "mJ", 99),
        ]
    )
    assert per == {"CPU Energy": 3000.0, "GPU Energy": 5.0, "ANE": 7.0} and total == 3012.0
    assert rows_to_uj([("DIE_1_CPU Energy", "mJ", 1)])[0] == 1000.0
    with pytest.raises(CounterReadFailed, match="unknown unit"):
        rows_to_uj([("CPU Energy", "kWh", 1)])


def _ioreport(deltas) -> IOReportCounter:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    return IOReportCounter(IOReportReplay(deltas), clock=clock, sleep=clock.sleep)


def test_an_advancing_ioreport_is_live_and_replayed_samples_are_labelled_fake() -> None:
    counter = _ioreport([[("CPU Energy", "mJ", 40), ("GPU Energy", "nJ", 10_000)]])
    assert counter.status().state is CounterState.LIVE
    assert counter.kind is CounterKind.FAKE  # replayed samples: never shown as Apple's
    assert IOReportCounter.kind is CounterKind.VENDOR_MODEL  # what Core Foundation's reads are
    before = counter.read_uj()
    assert counter.read_uj() - before == 40_010


def test_a_frozen_cpu_rail_is_declined_even_while_the_gpu_advances() -> None:
    counter = _ioreport([[("CPU Energy", "mJ", 0), ("GPU Energy", "nJ", 10_000)]])
    status = counter.status()
    assert (
        status.state is CounterState.FROZEN
        and "CPU rail" in status.reason
        and "GPU Energy" in status.reason
    )


def test_bursty_channels_are_probed_with_a_one_second_tick() -> None:
    # publishes 40 mJ once a second, nothing in between: live under the IOReport rule
    bursts = [[("CPU Energy", "mJ", 40)]]
    counter = _ioreport(bursts)
    assert counter.liveness_rule is not None and counter.liveness_rule.tick_s == 1.0
    assert counter.status().is_live


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the real IOReport loads")
def test_off_macos_ioreport_is_unavailable_with_the_reason() -> None:
    with pytest.raises(CounterUnavailable, match="only on macOS"):
        CoreFoundationSampler()
    assert IOReportCounter().status().state is CounterState.UNAVAILABLE


# -- NVML -------------------------------------------------------------------------------------


def _nvml(watts: float, *, limit_w: int = 300, **kw) -> NvmlTelemetry:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    fake = FakePynvml(
        [lambda: int(clock.now_ns * watts / 1e6)], power_limit_mw=limit_w * 1000, **kw
    )
    return NvmlTelemetry(0, pynvml=fake, clock=clock, sleep=clock.sleep)


def test_a_live_gpu_counter_is_telemetry_only_and_never_the_cascade_meter() -> None:
    gpu = _nvml(120.0)
    assert gpu.status().is_live and gpu.telemetry_only and gpu.name == "nvml:gpu0"
    with pytest.raises(ConfigError, match="telemetry only"):
        Cascade(meter=gpu)
    assert not detect_all([gpu]).live


def test_a_gpu_counter_that_does_not_advance_is_never_constructed() -> None:
    with pytest.raises(CounterFrozen):
        _nvml(0.0)


def test_a_gpu_counter_faster_than_the_board_can_draw_is_refused() -> None:
    with pytest.raises(
        (CounterReadFailed, CounterFrozen), match=r"faster than the board|above the"
    ):
        _nvml(2_000.0, limit_w=300)


def test_a_stand_in_pynvml_is_labelled_fake_and_declares_the_board_limit() -> None:
    gpu = _nvml(100.0, limit_w=300)
    assert gpu.kind is CounterKind.FAKE and gpu.max_power_uw == 300 * 1.5 * 1e6


@pytest.mark.parametrize(
    "error,words",
    [
        ("NVMLError_NoPermission", "no permission"),
        ("NVMLError_LibraryNotFound", "no NVIDIA driver"),
        ("NVMLError_NotSupported", "Volta or newer"),
        ("NVMLError_DriverNotLoaded", "not loaded"),
    ],
)
def test_nvml_errors_are_translated_at_the_boundary(error: str, words: str) -> None:
    with pytest.raises(CounterUnavailable, match=words):
        NvmlTelemetry(0, pynvml=FakePynvml(fail=error))
    gpus, why = nvml_telemetry(FakePynvml(fail=error))
    assert gpus == [] and words in why


def test_a_fake_pynvml_module_on_the_import_path_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakePynvml(fail="NVMLError_GpuIsLost"))
    gpus, why = nvml_telemetry()
    assert gpus == [] and "fell off the bus" in why


def test_nvml_on_this_host_is_live_or_says_why_not() -> None:
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    gpus, why = nvml_telemetry()
    if not gpus:
        assert why  # e.g. "no NVIDIA driver library" on this project's CPU VMs
    for g in gpus:
        assert g.status().is_live and g.telemetry_only


def test_a_module_named_pynvml_is_no_evidence_of_hardware(monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: a stand-in module named ``pynvml`` read as NVML hardware. Only the pynvml.py
    file its distribution installed counts, and only with libnvidia-ml loaded."""
    import types

    from eoc_native.counters.provenance import nvml_module

    clock = FakeClock()
    stand_in = types.ModuleType("pynvml")
    fake = FakePynvml([lambda: int(clock.now_ns * 100 / 1e6)])
    for name in dir(fake):
        if name.startswith("nvml") or name.startswith("NVMLError"):
            setattr(stand_in, name, getattr(fake, name))
    monkeypatch.setitem(sys.modules, "pynvml", stand_in)
    assert nvml_module(stand_in) != ""
    gpu = NvmlTelemetry(0, pynvml=stand_in, clock=clock, sleep=clock.sleep)
    assert gpu.kind is CounterKind.FAKE and "stand-in" in gpu.kind_reason


def test_the_installed_pynvml_counts_as_hardware_only_untouched_and_with_the_library_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    from eoc_native.counters import nvml as nvml_mod
    from eoc_native.counters.provenance import nvml_module

    assert nvml_module(real) == ""  # the file nvidia-ml-py installed, as it installed it
    clock = FakeClock()
    fake = FakePynvml([lambda: int(clock.now_ns * 100 / 1e6)])
    for name in (
        "nvmlInit",
        "nvmlDeviceGetHandleByIndex",
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetName",
        "nvmlDeviceGetTotalEnergyConsumption",
    ):
        monkeypatch.setattr(real, name, getattr(fake, name))  # no GPU here: the board stood in for
    # the real module with its functions replaced reads whatever the replacements say
    gpu = NvmlTelemetry(0, pynvml=real, clock=clock, sleep=clock.sleep)
    assert gpu.kind is CounterKind.FAKE and "stand-in" in gpu.kind_reason
    monkeypatch.setattr(nvml_mod, "nvml_module", lambda module: "")  # as if untouched
    gpu = NvmlTelemetry(0, pynvml=real, clock=clock, sleep=clock.sleep)
    assert gpu.kind is CounterKind.UNVERIFIED and "libnvidia-ml is not loaded" in gpu.kind_reason
    monkeypatch.setattr(nvml_mod, "nvml_library_loaded", lambda module=None: "")
    gpu = NvmlTelemetry(0, pynvml=real, clock=clock, sleep=clock.sleep)
    assert gpu.kind is CounterKind.HARDWARE and gpu.kind_reason == ""


def test_a_module_borrowing_the_real_files_name_or_code_is_a_stand_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attack on the name check: a module whose ``__file__`` is the installed pynvml.py, put
    where ``import pynvml`` finds it, even with functions compiled under that file's name."""
    import types

    real = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    from eoc_native.counters.provenance import nvml_module

    clock = FakeClock()
    fake = FakePynvml([lambda: int(clock.now_ns * 100 / 1e6)])
    borrowed = types.ModuleType("pynvml")
    borrowed.__file__ = real.__file__
    for name in dir(fake):
        if name.startswith("nvml") or name.startswith("NVMLError"):
            setattr(borrowed, name, getattr(fake, name))
    monkeypatch.setitem(sys.modules, "pynvml", borrowed)
    assert "stand-in" in nvml_module(borrowed)
    gpu = NvmlTelemetry(0, pynvml=borrowed, clock=clock, sleep=clock.sleep)
    assert gpu.kind is CounterKind.FAKE
    forged = types.ModuleType("pynvml")
    forged.__file__ = real.__file__
    # the same names, at the same lines, compiled under the real file's name: other code
    first = {n: getattr(real, n).__code__.co_firstlineno for n in ("nvmlInit",)}
    source = "\n" * (first["nvmlInit"] - 1) + "def nvmlInit(*args):\n    return 0\n"
    exec(compile(source, real.__file__, "exec"), vars(forged))  # the real file's name, other code
    for name in dir(real):
        if name.startswith("nvml") and not hasattr(forged, name):
            setattr(forged, name, getattr(real, name))
    monkeypatch.setitem(sys.modules, "pynvml", forged)
    assert "pynvml.nvmlInit" in nvml_module(forged)


def test_a_library_merely_named_libnvidia_ml_is_not_nvidias(tmp_path: Path) -> None:
    """The attack on the library check: another library copied to ``libnvidia-ml.so.1`` and
    loaded. In a child process, so this one never maps it."""
    import ctypes.util
    import subprocess

    libm = ctypes.util.find_library("m")
    if libm is None:
        pytest.skip("no libm to copy")
    found = next(
        (
            p
            for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib")
            if (p := Path(d) / libm).exists()
        ),
        None,
    )
    if found is None:
        pytest.skip("libm's file not found")
    fake_lib = tmp_path / "libnvidia-ml.so.1"
    fake_lib.write_bytes(found.read_bytes())
    code = (
        "import ctypes, sys\n"
        "from eoc_native.counters.provenance import nvml_library_loaded\n"
        "print(repr(nvml_library_loaded()))\n"
        f"ctypes.CDLL({str(fake_lib)!r})\n"
        "print(repr(nvml_library_loaded()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert "not loaded" in before
    assert "exports no nvmlInit_v2" in after and "not NVIDIA's" in after


def test_gpu_telemetry_says_it_cannot_see_the_cascades_cpu_work() -> None:
    with pytest.raises(ConfigError, match="CPU work"):
        Cascade(meter=_nvml(120.0))
