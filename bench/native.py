"""Native benchmarks: the cost of one counter read per reader, and GFLOP/s per backend.

    python bench/native.py [--json] [--record]   # --record: docs/figures/native.json

Counter reads are timed on what this machine has: the RAPL reader on a powercap tree of
regular files (the same pread path as /sys), the perf reader's syscall path on a software
event (the same read as the power PMU's, which this project's VMs lack or expose frozen), the
IOReport arithmetic on replayed samples, and, where a GPU exists, NVML. GFLOP/s are medians of timed runs of the decode
(m=1) and prefill (m=256) shapes of n=k=4096 for every backend that runs here.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eoc.testing import IOReportReplay, PowercapZone, make_powercap_tree
from eoc_native.backends import Shape, all_backends, check
from eoc_native.counters.ioreport import IOReportCounter
from eoc_native.counters.perf import SyscallPerfEvents
from eoc_native.counters.rapl import RaplCounter, discover_zones, plan_zones

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import record

IOREPORT_REFERENCE_US = 80.0  # the Rust reference's cost of one IOReport read


def per_call_us(fn: Callable[[], object], n: int = 20_000, repeats: int = 7) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter_ns() - t0) / n / 1000)
    return statistics.median(runs)


def counter_reads() -> dict[str, object]:
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        zones = [
            PowercapZone("intel-rapl:0", "package-0", 123_456_789),
            PowercapZone("intel-rapl:1", "package-1", 987_654_321),
        ]
        root = make_powercap_tree(tmp, zones)
        one = RaplCounter(discover_zones(root)[:1], "rapl:package")
        two = RaplCounter(plan_zones(discover_zones(root)).whole, "rapl:package")
        out["rapl_1_zone_us"] = per_call_us(one.read_uj)
        out["rapl_2_sockets_us"] = per_call_us(two.read_uj)
    try:
        events = SyscallPerfEvents()
        fd = events.open(1, 1, 0)  # PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, cpu 0
        out["perf_read_syscall_us"] = per_call_us(lambda: events.read(fd))
        events.close(fd)
    except OSError as exc:
        out["perf_read_syscall_us"] = f"not measured: {exc}"
    rows = [
        ("CPU Energy", "mJ", 40),
        ("GPU Energy", "nJ", 12_000),
        ("ANE", "mJ", 0),
        ("DRAM", "mJ", 3),
    ]
    replay = IOReportCounter(IOReportReplay([rows]))
    out["ioreport_arithmetic_us"] = per_call_us(replay.read_uj)
    out["ioreport_native_read_us"] = "not measured: IOReport exists only on macOS"
    try:
        from eoc_native.counters.nvml import nvml_telemetry

        gpus, why = nvml_telemetry()
        out["nvml_read_us"] = (
            per_call_us(gpus[0].read_uj, n=2_000) if gpus else f"not measured: {why}"
        )
    except Exception as exc:  # no pynvml at all
        out["nvml_read_us"] = f"not measured: {exc}"
    return out


def gflops(repeats: int = 5) -> dict[str, dict[str, object]]:
    shapes = {"decode": Shape(1, 4096, 4096), "prefill": Shape(256, 4096, 4096)}
    out: dict[str, dict[str, object]] = {}
    for backend in all_backends():
        why = check(backend)
        if why:
            out[backend.name] = {"skipped": why}
            continue
        row: dict[str, object] = {}
        for label, shape in shapes.items():
            prepared = backend.prepare(shape)
            backend.run(prepared)
            n = max(1, int(0.2e9 / max(shape.flops / 5.0, 1)))  # ~0.2 s at 5 GFLOP/s
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter_ns()
                for _ in range(n):
                    backend.run(prepared)
                times.append((time.perf_counter_ns() - t0) / n)
            row[label] = shape.flops / statistics.median(times)
        out[backend.name] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the result to docs/figures/native.json, which the docs cite",
    )
    args = parser.parse_args()
    result = {"machine": platform.machine(), "reads": counter_reads(), "gflops": gflops()}
    if args.record:
        record("native", result)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"eoc native benchmarks — {platform.machine()}, CPython {platform.python_version()}")
    print("one counter read (median):")
    for key, value in result["reads"].items():
        shown = f"{value:8.2f} µs" if isinstance(value, float) else value
        print(f"  {key:<26}: {shown}")
    ioreport = result["reads"]["ioreport_arithmetic_us"]
    if isinstance(ioreport, float):
        print(
            f"  (the Rust reference reads IOReport in ~{IOREPORT_REFERENCE_US:.0f} µs; the arithmetic here adds {ioreport:.1f} µs)"
        )
    print("bf16-weight matmul, n=k=4096 (median GFLOP/s):")
    for name, row in result["gflops"].items():
        if "skipped" in row:
            print(f"  {name:<24}: not run: {row['skipped']}")
        else:
            print(
                f"  {name:<24}: decode (m=1) {row['decode']:7.1f}   prefill (m=256) {row['prefill']:7.1f}"
            )


if __name__ == "__main__":
    main()
