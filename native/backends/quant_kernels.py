"""Compiled (numba) kernels for matrices kept as 4-bit and 8-bit blocks.

Imported only by :mod:`native.backends.quant`, when that backend is first used; numba compiles
them on the first call and caches the machine code next to this file.

Layouts are :class:`native.llm.weights.QuantBlocks`: ``qs[b, j, r]`` is byte ``j`` of block
``b`` of output column ``r``, so the inner loops run down contiguous output columns and the
compiler vectorizes them; the activations stay float32 (no activation quantization), so the
result is the float32 product with the dequantized matrix, up to summation order.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

TILE = 512
"""Output columns per task: a tile's partial sums (2 KiB) stay in the L1 cache."""

_jit = numba.njit(parallel=True, fastmath=True, cache=True, nogil=True)


@_jit
def q4_matvec(qs: Any, d: Any, m: Any, x: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out = x @ W`` for one float32 row ``x`` and a 4-bit block matrix ``W``."""
    nb, _, n = qs.shape
    xs = np.zeros(nb, np.float32)
    for b in range(nb):
        for j in range(32):
            xs[b] += x[b * 32 + j]
    for t in numba.prange((n + TILE - 1) // TILE):
        r0 = t * TILE
        r1 = min(n, r0 + TILE)
        acc = np.zeros(r1 - r0, np.float32)
        tmp = np.empty(r1 - r0, np.float32)
        for b in range(nb):
            tmp[:] = 0
            for j in range(16):
                lo = x[b * 32 + j]
                hi = x[b * 32 + 16 + j]
                row = qs[b, j]
                for r in range(r0, r1):
                    v = row[r]
                    tmp[r - r0] += np.float32(v & 15) * lo + np.float32(v >> 4) * hi
            sb = xs[b]
            for r in range(r0, r1):
                acc[r - r0] += d[b, r] * tmp[r - r0] + m[b, r] * sb
        out[r0:r1] = acc


@_jit
def q8_matvec(qs: Any, d: Any, x: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out = x @ W`` for one float32 row ``x`` and an 8-bit block matrix ``W``."""
    nb, _, n = qs.shape
    for t in numba.prange((n + TILE - 1) // TILE):
        r0 = t * TILE
        r1 = min(n, r0 + TILE)
        acc = np.zeros(r1 - r0, np.float32)
        tmp = np.empty(r1 - r0, np.float32)
        for b in range(nb):
            tmp[:] = 0
            for j in range(32):
                xj = x[b * 32 + j]
                row = qs[b, j]
                for r in range(r0, r1):
                    tmp[r - r0] += np.float32(row[r]) * xj
            for r in range(r0, r1):
                acc[r - r0] += d[b, r] * tmp[r - r0]
        out[r0:r1] = acc


@_jit
def q4_dequant(qs: Any, d: Any, m: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out`` (n_in, n_out) float32 = the 4-bit block matrix, dequantized."""
    nb, _, n = qs.shape
    for b in numba.prange(nb):
        db = d[b]
        mb = m[b]
        for j in range(16):
            row = qs[b, j]
            lo = out[b * 32 + j]
            hi = out[b * 32 + 16 + j]
            for r in range(n):
                v = row[r]
                lo[r] = db[r] * np.float32(v & 15) + mb[r]
                hi[r] = db[r] * np.float32(v >> 4) + mb[r]


@_jit
def q8_dequant(qs: Any, d: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out`` (n_in, n_out) float32 = the 8-bit block matrix, dequantized."""
    nb, _, n = qs.shape
    for b in numba.prange(nb):
        db = d[b]
        for j in range(32):
            row = qs[b, j]
            o = out[b * 32 + j]
            for r in range(n):
                o[r] = db[r] * np.float32(row[r])


__all__ = ["TILE", "q4_dequant", "q4_matvec", "q8_dequant", "q8_matvec"]
