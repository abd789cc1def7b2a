"""numpy on the CPU: whatever BLAS numpy was built with (Accelerate on macOS wheels, which runs
on Apple's AMX units; scipy-openblas on Linux wheels).

The bf16 weights are widened to float32 once, in ``prepare``; each run is a float32 GEMM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eoc.errors import EocError
from eoc_native import require
from eoc_native.backends.base import Shape, from_bf16_bits, operands


def blas_name() -> str:
    """The BLAS numpy runs on, as numpy reports it."""
    np = require("numpy")
    try:
        info = np.show_config(mode="dicts")
        return str(info["Build Dependencies"]["blas"]["name"])
    except Exception:  # old numpy: no dict mode
        return "unknown"


@dataclass
class _Prepared:
    x: Any
    w: Any
    out: Any


class NumpyBackend:
    """``numpy.matmul`` into a preallocated output."""

    def __init__(self) -> None:
        self.name = "numpy"

    def unavailable(self) -> str | None:
        try:
            require("numpy")
        except EocError as exc:
            return exc.reason
        self.name = f"numpy/{blas_name()}"
        return None

    def prepare(self, shape: Shape, seed: int = 0) -> _Prepared:
        np = require("numpy")
        x, w_bits = operands(shape, seed)
        return _Prepared(
            x,
            np.ascontiguousarray(from_bf16_bits(w_bits)),
            np.empty((shape.m, shape.n), np.float32),
        )

    def run(self, prepared: _Prepared) -> None:
        np = require("numpy")
        np.matmul(prepared.x, prepared.w, out=prepared.out)

    def result(self, prepared: _Prepared) -> Any:
        return prepared.out

    def compute(self, x: Any, w_bits: Any) -> Any:
        np = require("numpy")
        return np.matmul(np.asarray(x, dtype=np.float32), from_bf16_bits(w_bits))

    # model weights: a dense float32 copy, multiplied by BLAS
    def takes(self, weight: Any) -> bool:
        return True

    def load_weight(self, weight: Any) -> Any:
        return weight.dense()

    def apply(self, x: Any, prepared: Any) -> Any:
        np = require("numpy")
        return np.matmul(np.asarray(x, dtype=np.float32), prepared)


__all__ = ["NumpyBackend", "blas_name"]
