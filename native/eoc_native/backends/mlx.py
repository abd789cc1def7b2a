"""MLX: Metal on Apple Silicon; its CPU device on Linux (``pip install "mlx[cpu]"``).

MLX is lazy, so each run evaluates its result (``mx.eval``) inside the timed window.
Weights stay bfloat16 on the device; x is float32, and MLX promotes the product to float32.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from eoc.errors import EocError
from eoc_native import require
from eoc_native.backends.base import Shape, from_bf16_bits, operands


@dataclass
class _Prepared:
    x: Any
    w: Any
    y: Any = None


class MlxBackend:
    """``mx.matmul`` on the GPU where MLX has one (macOS), else on its CPU device."""

    def __init__(self, device: str | None = None) -> None:
        self.device = device or ("gpu" if sys.platform == "darwin" else "cpu")
        self.name = f"mlx/{self.device}"

    def _mx(self) -> Any:
        mx = require("mlx.core", package="mlx", why="the MLX backend")
        mx.set_default_device(mx.gpu if self.device == "gpu" else mx.cpu)
        return mx

    def unavailable(self) -> str | None:
        try:
            self._mx()
        except EocError as exc:
            return exc.reason
        except Exception as exc:  # MLX without the device asked for
            return f"{self.name}: {exc}"
        return None

    def prepare(self, shape: Shape, seed: int = 0) -> _Prepared:
        mx = self._mx()
        x, w_bits = operands(shape, seed)
        p = _Prepared(mx.array(x), mx.array(from_bf16_bits(w_bits)).astype(mx.bfloat16))
        mx.eval(p.x, p.w)
        return p

    def run(self, prepared: _Prepared) -> None:
        mx = self._mx()
        prepared.y = mx.matmul(prepared.x, prepared.w)
        mx.eval(prepared.y)

    def result(self, prepared: _Prepared) -> Any:
        np = require("numpy")
        mx = self._mx()
        return np.array(prepared.y.astype(mx.float32))

    # model weights: a float32 copy on the device
    def takes(self, weight: Any) -> bool:
        return True

    def load_weight(self, weight: Any) -> Any:
        mx = self._mx()
        w = mx.array(weight.dense())
        mx.eval(w)
        return w

    def apply(self, x: Any, prepared: Any) -> Any:
        np = require("numpy")
        mx = self._mx()
        y = mx.matmul(mx.array(np.asarray(x, dtype=np.float32)), prepared)
        mx.eval(y)
        return np.array(y)

    def compute(self, x: Any, w_bits: Any) -> Any:
        mx = self._mx()
        p = _Prepared(mx.array(x), mx.array(from_bf16_bits(w_bits)).astype(mx.bfloat16))
        self.run(p)
        return self.result(p)


__all__ = ["MlxBackend"]
