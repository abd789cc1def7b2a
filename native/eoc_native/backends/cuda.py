"""CUDA through PyTorch or CuPy, whichever is importable (PyTorch first).

Both synchronize the device before a run returns, so a counter read after ``run`` sees the
finished work. Weights and activations are bfloat16 on the device (CuPy has no bfloat16 dtype,
so under CuPy they are float16, and the name says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eoc_native import require
from eoc_native.backends.base import Shape, from_bf16_bits, operands


@dataclass
class _Prepared:
    x: Any
    w: Any
    y: Any = None


def _torch() -> Any | None:
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _cupy() -> Any | None:
    try:
        import cupy  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:
        return None


class CudaBackend:
    """``x @ W`` on an NVIDIA GPU."""

    def __init__(self) -> None:
        self.name = "cuda"
        self._lib: str | None = None

    def unavailable(self) -> str | None:
        if _torch() is not None:
            self._lib, self.name = "torch", "cuda/torch-bf16"
            return None
        if _cupy() is not None:
            self._lib, self.name = "cupy", "cuda/cupy-fp16"
            return None
        return "cuda: neither PyTorch with CUDA nor CuPy with a GPU is importable on this host"

    def _on_device(self, x: Any, w: Any) -> _Prepared:
        """float32 numpy operands moved to the GPU (bf16 under torch, fp16 under CuPy), synchronized."""
        if self._lib == "torch":
            torch = _torch()
            assert torch is not None
            p = _Prepared(
                torch.from_numpy(x).to("cuda", torch.bfloat16),
                torch.from_numpy(w).to("cuda", torch.bfloat16),
            )
            torch.cuda.synchronize()
            return p
        cupy = _cupy()
        assert cupy is not None
        p = _Prepared(cupy.asarray(x, dtype=cupy.float16), cupy.asarray(w, dtype=cupy.float16))
        cupy.cuda.Device().synchronize()
        return p

    def prepare(self, shape: Shape, seed: int = 0) -> _Prepared:
        x, w_bits = operands(shape, seed)
        return self._on_device(x, from_bf16_bits(w_bits))

    def run(self, prepared: _Prepared) -> None:
        if self._lib == "torch":
            torch = _torch()
            assert torch is not None
            prepared.y = prepared.x @ prepared.w
            torch.cuda.synchronize()
        else:
            cupy = _cupy()
            assert cupy is not None
            prepared.y = prepared.x @ prepared.w
            cupy.cuda.Device().synchronize()

    def compute(self, x: Any, w_bits: Any) -> Any:
        why = self.unavailable() if self._lib is None else None
        if why:
            raise RuntimeError(why)
        p = self._on_device(x, from_bf16_bits(w_bits))
        self.run(p)
        return self.result(p)

    # model weights: a float32 copy on the GPU (no TF32: the same arithmetic as the CPU)
    def takes(self, weight: Any) -> bool:
        return True

    def load_weight(self, weight: Any) -> Any:
        if self._lib is None and self.unavailable():
            raise RuntimeError(self.unavailable())
        if self._lib == "torch":
            torch = _torch()
            assert torch is not None
            torch.backends.cuda.matmul.allow_tf32 = False
            return torch.from_numpy(weight.dense()).to("cuda")
        cupy = _cupy()
        assert cupy is not None
        return cupy.asarray(weight.dense())

    def apply(self, x: Any, prepared: Any) -> Any:
        np = require("numpy")
        x = np.ascontiguousarray(x, dtype=np.float32)
        if self._lib == "torch":
            torch = _torch()
            assert torch is not None
            return (torch.from_numpy(x).to("cuda") @ prepared).cpu().numpy()
        cupy = _cupy()
        assert cupy is not None
        return np.asarray((cupy.asarray(x) @ prepared).get(), dtype=np.float32)

    def result(self, prepared: _Prepared) -> Any:
        np = require("numpy")
        if self._lib == "torch":
            return prepared.y.float().cpu().numpy()
        return np.asarray(prepared.y.get(), dtype=np.float32)


__all__ = ["CudaBackend"]
