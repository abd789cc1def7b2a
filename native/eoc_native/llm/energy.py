"""What a model's run is estimated to have cost, from the matmuls the dispatcher counted.

Two ways, and the basis of the figure says which:

* **from the tuning profile** — when ``EOC_ENERGY_AUTOTUNE=1`` and the profile has a figure for
  the exact shape on the backend that ran it: its µJ per op × the calls. The profile's figures
  were measured on a live counter (or imported); used here they are still an estimate of this
  run, which no counter read.
* **from a per-backend constant** — every other call: its multiply-adds ×
  :data:`NJ_PER_MAC` of the backend that ran it.

The constants are orientation figures, not measurements, and are stated as such in every basis:

* CPU (``numpy``, ``cpu-quant``): 1.0 nJ per multiply-add. Two cores of a server CPU draw
  about 15 W while they run a model; at ~1.4e10 multiply-adds a second (about 100 decode steps a
  second of SmolLM2-135M, 1.35e8 multiply-adds each, llama.cpp's pace here) that is ~1.1 nJ per
  multiply-add, memory traffic included, no idle share.
* ``cpu-int8`` (MiniLM's 8-bit C encoder, :mod:`eoc_native.quant.encoder`): 0.1 nJ. The same
  two cores at ~15 W sustain ~1.5e11 multiply-adds a second there (a 12-token question, 1.3e8
  multiply-adds, in 0.7-0.9 ms: ``bench/embedfloor.py``), ~0.1 nJ each.
* ``mlx`` on Apple Silicon's GPU: 0.1 nJ; on its CPU device: 1.0 nJ (the CPU figure).
* ``cuda``: 0.05 nJ (a data-centre GPU at ~300 W sustaining ~6e12 MAC/s in float32 GEMM).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from eoc_native.autotune.profile import TuningProfile
from eoc_native.backends.base import Shape

NJ_PER_MAC: dict[str, float] = {
    "numpy": 1.0,
    "cpu-quant": 1.0,
    "cpu-int8": 0.1,
    "mlx/cpu": 1.0,
    "mlx/gpu": 0.1,
}
CUDA_NJ_PER_MAC = 0.05
DEFAULT_NJ_PER_MAC = 1.0


def nj_per_mac(backend: str) -> float:
    """The documented constant for ``backend`` (a name as the dispatcher records it)."""
    if backend in NJ_PER_MAC:
        return NJ_PER_MAC[backend]
    family = backend.split("/")[0]
    if family == "cuda":
        return CUDA_NJ_PER_MAC
    return NJ_PER_MAC.get(family, DEFAULT_NJ_PER_MAC)


def estimate(
    calls: Mapping[tuple[str, str], int], profile: TuningProfile | None = None
) -> tuple[int, str]:
    """µJ (at least 1) and the basis for ``calls`` ((backend, shape key) -> count).

    ``profile`` is consulted only when given (the caller passes it when autotuning is on).
    """
    from_profile = 0.0
    from_constants = 0.0
    macs = 0
    per_backend: Counter[str] = Counter()
    for (backend, key), n in calls.items():
        shape = Shape.parse(key)
        mac = shape.m * shape.k * shape.n * n
        macs += mac
        per_backend[backend] += mac
        entry = profile.entry(shape, backend) if profile is not None else None
        if entry is not None:
            from_profile += entry.uj_per_op * n
        else:
            from_constants += mac * nj_per_mac(backend) / 1000
    uj = max(1, round(from_profile + from_constants))
    ran = ", ".join(f"{b} {m:.3g}" for b, m in per_backend.most_common())
    parts = []
    if from_profile:
        parts.append(f"{from_profile:.0f} µJ from the tuning profile's µJ per op × calls")
    if from_constants or not parts:
        parts.append(
            f"{from_constants:.0f} µJ from documented per-backend constants (nJ per "
            "multiply-add, native/eoc_native/llm/energy.py)"
        )
    basis = f"estimated from the matmuls run ({macs:.3g} multiply-adds: {ran}): " + "; ".join(parts)
    return uj, basis


__all__ = ["CUDA_NJ_PER_MAC", "NJ_PER_MAC", "estimate", "nj_per_mac"]
