"""Quantized weights on the CPU: compiled kernels over the file's 4-bit and 8-bit blocks.

A model read from a Q4_0 / Q4_1 / Q8_0 GGUF file keeps its blocks (about 0.6 bytes a weight
for 4-bit, against 4 for float32), and this backend multiplies by them without ever widening
the whole matrix:

* a few rows of ``x`` (decoding: one token at a time) run the compiled kernels (C, or numba's
  where no C compiler builds them: :func:`eoc_native.quant.load_kernels`) of
  :mod:`eoc_native.quant.kernels`, which read each byte once, straight from the blocks;
* more rows (a prompt's prefill) dequantize the matrix into a scratch buffer with a compiled
  kernel and hand the product to numpy's BLAS, where many rows amortize the widening.

For the autotuner (a bf16 matrix of a tuning shape) it quantizes the matrix to Q4_1 first, and
its correctness check compares with that quantized matrix (``reference_weights``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from eoc.errors import EocError, Refusal
from eoc_native import require
from eoc_native.backends.base import Shape, from_bf16_bits, operands
from eoc_native.memory import zeroed
from eoc_native.quant import load_kernels

FEW_ROWS = 4
"""Up to this many rows of ``x`` run the block kernels row by row; more dequantize + BLAS."""

TUNING_TYPE = "Q4_1"

KEPT_SCRATCH = 1 << 22
"""Floats (16 MiB) of the widened-matrix buffer a thread keeps between products; a larger matrix
gets a buffer of its own each time."""


@dataclass
class _Prepared:
    x: Any
    blocks: Any
    out: Any = None


class QuantCpuBackend:
    """``x @ W`` with ``W`` as 4-bit or 8-bit blocks, on the CPU."""

    def __init__(self) -> None:
        self.name = "cpu-quant"
        self._modules: tuple[Any, Any] | None = None
        self._scratch = threading.local()  # each thread's buffer for a widened matrix

    def _load_modules(self) -> tuple[Any, Any]:
        self._modules = (require("numpy"), load_kernels())  # once: apply runs ~120 times a token
        return self._modules

    def unavailable(self) -> str | None:
        try:
            require("numpy")
            load_kernels()
        except EocError as exc:
            return f"{self.name}: {exc.reason}"
        return None

    # -- model weights -----------------------------------------------------------------

    def takes(self, weight: Any) -> bool:
        return getattr(weight, "quant", None) is not None

    def load_weight(self, weight: Any) -> Any:
        if not self.takes(weight):
            raise Refusal(f"{self.name} runs quantized weights only; {weight!r} is dense")
        return weight.quant

    def apply(self, x: Any, prepared: Any) -> Any:
        np, k = self._modules or self._load_modules()
        x = np.ascontiguousarray(x, dtype=np.float32)
        rows = x.shape[0]
        n = prepared.n_out
        out = np.empty((rows, prepared.padded_out), np.float32)  # a last tile's padding too
        if rows <= FEW_ROWS:
            for i in range(rows):
                if prepared.bits == 4:
                    k.q4_matvec(prepared.qs, prepared.d, prepared.m, x[i], out[i])
                else:
                    k.q8_matvec(prepared.qs, prepared.d, x[i], out[i])
        else:
            np.matmul(x, self._dense(prepared), out=out)
        return out if n == prepared.padded_out else np.ascontiguousarray(out[:, :n])

    def _dense(self, blocks: Any) -> Any:
        np, k = self._modules or self._load_modules()
        size = blocks.n_in * blocks.padded_out
        if size > KEPT_SCRATCH:  # an output head widened for every position: not kept
            w = zeroed((blocks.n_in, blocks.padded_out), np.float32)  # plain pages (memory.py)
        else:  # one buffer a thread, grown to the largest layer: no fresh pages a product
            scratch = getattr(self._scratch, "buf", None)
            if scratch is None or scratch.size < size:
                scratch = self._scratch.buf = np.empty(size, np.float32)
            w = scratch[:size].reshape(blocks.n_in, blocks.padded_out)
        if blocks.bits == 4:
            k.q4_dequant(blocks.qs, blocks.d, blocks.m, w)
        else:
            k.q8_dequant(blocks.qs, blocks.d, w)
        return w

    # -- the autotuner's bf16 shapes --------------------------------------------------

    def _quantized(self, w_bits: Any) -> Any:
        np = require("numpy")
        from eoc_native.quant.blocks import blocks_from_raw
        from eoc_native.quant.formats import quantize

        w = from_bf16_bits(w_bits)  # (k, n)
        k_in, n_out = w.shape
        if k_in % 32:
            raise Refusal(f"{self.name}: the inner size {k_in} is not whole blocks of 32")
        raw = quantize(np.ascontiguousarray(w.T), TUNING_TYPE)
        return blocks_from_raw(raw, TUNING_TYPE, n_out, k_in)

    def reference_weights(self, w_bits: Any) -> Any:
        """The matrix this backend multiplies by for ``w_bits``: quantized, then widened."""
        return self._quantized(w_bits).dense()

    def prepare(self, shape: Shape, seed: int = 0) -> _Prepared:
        x, w_bits = operands(shape, seed)
        return _Prepared(x, self._quantized(w_bits))

    def run(self, prepared: _Prepared) -> None:
        prepared.out = self.apply(prepared.x, prepared.blocks)

    def result(self, prepared: _Prepared) -> Any:
        return prepared.out

    def compute(self, x: Any, w_bits: Any) -> Any:
        return self.apply(x, self._quantized(w_bits))


__all__ = ["FEW_ROWS", "QuantCpuBackend"]
