"""One short check of the GPU paths on a host with an NVIDIA GPU: the CUDA backend, NVML
telemetry, and the autotuner. Without a GPU each part says why it did not run.

    python scripts/gpu_check.py [--seconds 1.0]      # exit 0 when every part that can run passed

Needs the native extra plus PyTorch with CUDA (or CuPy) on the GPU host.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eoc.errors import EocError
from eoc.meter import detect_all
from native.autotune import tune_shape_live
from native.backends import CudaBackend, NumpyBackend, Shape, check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    report: dict[str, object] = {}
    ok = True

    cuda = CudaBackend()
    why = check(cuda)
    cuda_ok = why is None
    if why:
        report["cuda"] = f"skipped: {why}"
    else:
        shape = Shape(256, 4096, 4096)
        prepared = cuda.prepare(shape)
        cuda.run(prepared)
        t0 = time.perf_counter_ns()
        n = 50
        for _ in range(n):
            cuda.run(prepared)
        ns = (time.perf_counter_ns() - t0) / n
        report["cuda"] = {"backend": cuda.name, "check": "ok", "prefill_gflops": shape.flops / ns}

    try:
        from native.counters.nvml import nvml_telemetry

        gpus, why = nvml_telemetry()
    except EocError as exc:
        gpus, why = [], exc.reason
    if not gpus:
        report["nvml"] = f"skipped: {why}"
    else:
        gpu = gpus[0]
        e0, t0 = gpu.read_uj(), time.perf_counter()
        if cuda_ok:  # meter the GPU while it works
            p = cuda.prepare(Shape(256, 4096, 4096))
            deadline = time.perf_counter() + args.seconds
            while time.perf_counter() < deadline:
                cuda.run(p)
        else:
            time.sleep(args.seconds)
        watts = (gpu.read_uj() - e0) / 1e6 / (time.perf_counter() - t0)
        report["nvml"] = {
            "counter": gpu.name,
            "device": gpu.device_name,
            "status": str(gpu.status()),
            "power_limit_w": gpu.power_limit_w,
            "gpu_watts_over_window": watts,
            "role": "telemetry (GPU only; never the cascade's meter)",
        }
        ok = ok and gpu.status().is_live and 0 < watts <= gpu.power_limit_w * 1.5

    found = detect_all()
    backends = [
        b for b in (NumpyBackend(), cuda) if check(b) is None
    ]  # CUDA only where it ran right
    if not found.live:
        report["autotune"] = f"refused (as it must be): no live whole-work counter: {found.reason}"
    else:
        result = tune_shape_live(Shape(1, 4096, 4096), backends, found.counter, args.seconds)
        report["autotune"] = {
            "counter": found.counter.name,
            "winner": result.winner,
            "reason": result.reason,
            "uj_per_op": {m.backend: m.uj_per_op for m in result.measurements},
            "skipped": result.skipped,
        }
    print(json.dumps(report, indent=2, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
