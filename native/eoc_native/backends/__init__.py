"""Compute backends for a bf16-weight matmul: numpy (CPU BLAS / Apple AMX), MLX, CUDA. (A *model
backend*, :class:`eoc.stages.neural.Backend`, is another thing: it makes the neural stage's
answers.)"""

from __future__ import annotations

from eoc_native.backends.base import MatmulBackend, Shape, check
from eoc_native.backends.cpu import NumpyBackend
from eoc_native.backends.cuda import CudaBackend
from eoc_native.backends.mlx import MlxBackend
from eoc_native.backends.quant import QuantCpuBackend


def all_backends() -> list[MatmulBackend]:
    """Every backend eoc knows, whether or not it can run here (each says why not)."""
    return [NumpyBackend(), QuantCpuBackend(), MlxBackend(), CudaBackend()]


def usable_backends() -> tuple[list[MatmulBackend], dict[str, str]]:
    """The backends that run here and pass the correctness check, and why each other one does not."""
    ok: list[MatmulBackend] = []
    why: dict[str, str] = {}
    for b in all_backends():
        reason = check(b)
        if reason is None:
            ok.append(b)
        else:
            why[b.name] = reason
    return ok, why


__all__ = [
    "CudaBackend",
    "MatmulBackend",
    "MlxBackend",
    "NumpyBackend",
    "QuantCpuBackend",
    "Shape",
    "all_backends",
    "check",
    "usable_backends",
]
