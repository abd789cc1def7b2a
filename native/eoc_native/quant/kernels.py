"""Compiled (numba) kernels for matrices kept as 4-bit and 8-bit blocks.

Imported only by :func:`eoc_native.quant.load_kernels` (for the ``cpu-quant`` backend,
:mod:`eoc_native.backends.quant`, and the model's one-token steps, :mod:`eoc_native.llm.llama`);
numba compiles each kernel on its first call and caches the machine code next to this file.

Layouts are :class:`eoc_native.quant.blocks.QuantBlocks`: ``qs[tile, b, j, i]`` is byte ``j`` of
block ``b`` of column ``i`` of a tile, so a task (one tile) streams one contiguous run of
memory, the inner loops run down contiguous columns and the compiler vectorizes them; the activations stay float32 (no activation quantization), so the
result is the float32 product with the dequantized matrix, up to summation order.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_jit = numba.njit(parallel=True, fastmath=True, cache=True, nogil=True)
_serial = numba.njit(fastmath=True, cache=True, nogil=True)


@_jit
def q4_matvec(qs: Any, d: Any, m: Any, x: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out = x @ W`` for one float32 row ``x`` and a tiled 4-bit block matrix ``W``."""
    nt, nb, _, t = qs.shape
    xs = np.zeros(nb, np.float32)
    for b in range(nb):
        for j in range(32):
            xs[b] += x[b * 32 + j]
    for tile in numba.prange(nt):
        acc = np.zeros(t, np.float32)
        tmp = np.empty(t, np.float32)
        for b in range(nb):
            tmp[:] = 0
            for j in range(16):
                lo = x[b * 32 + j]
                hi = x[b * 32 + 16 + j]
                row = qs[tile, b, j]
                for i in range(t):
                    v = row[i]
                    tmp[i] += np.float32(v & 15) * lo + np.float32(v >> 4) * hi
            sb = xs[b]
            db = d[tile, b]
            mb = m[tile, b]
            for i in range(t):
                acc[i] += db[i] * tmp[i] + mb[i] * sb
        out[tile * t : (tile + 1) * t] = acc


@_jit
def q8_matvec(qs: Any, d: Any, x: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out = x @ W`` for one float32 row ``x`` and a tiled 8-bit block matrix ``W``."""
    nt, nb, _, t = qs.shape
    for tile in numba.prange(nt):
        acc = np.zeros(t, np.float32)
        tmp = np.empty(t, np.float32)
        for b in range(nb):
            tmp[:] = 0
            for j in range(32):
                xj = x[b * 32 + j]
                row = qs[tile, b, j]
                for i in range(t):
                    tmp[i] += np.float32(row[i]) * xj
            db = d[tile, b]
            for i in range(t):
                acc[i] += db[i] * tmp[i]
        out[tile * t : (tile + 1) * t] = acc


@_serial
def q4_dequant(qs: Any, d: Any, m: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out`` (n_in, padded n_out) float32 = the tiled 4-bit block matrix, dequantized."""
    nt, nb, _, t = qs.shape
    for tile in range(nt):
        c = tile * t
        for b in range(nb):
            db = d[tile, b]
            mb = m[tile, b]
            for j in range(16):
                row = qs[tile, b, j]
                lo = out[b * 32 + j]
                hi = out[b * 32 + 16 + j]
                for i in range(t):
                    v = row[i]
                    lo[c + i] = db[i] * np.float32(v & 15) + mb[i]
                    hi[c + i] = db[i] * np.float32(v >> 4) + mb[i]


@_serial
def q8_dequant(qs: Any, d: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out`` (n_in, padded n_out) float32 = the tiled 8-bit block matrix, dequantized."""
    nt, nb, _, t = qs.shape
    for tile in range(nt):
        c = tile * t
        for b in range(nb):
            db = d[tile, b]
            for j in range(32):
                row = qs[tile, b, j]
                o = out[b * 32 + j]
                for i in range(t):
                    o[c + i] = db[i] * np.float32(row[i])


@_serial
def decode_attention(  # pragma: no cover - compiled
    qkv: Any,
    cache_k: Any,
    cache_v: Any,
    pos: int,
    cos: Any,
    sin: Any,
    n_heads: int,
    scale: float,
    out: Any,
) -> None:
    """One new token's attention in one layer, with rotary positions and the KV cache.

    ``qkv`` is the token's q, k and v side by side; ``cache_k``/``cache_v`` (n_ctx, kv_heads,
    head_dim) this layer's cache, written at ``pos``; ``cos``/``sin`` the rotary table row of
    ``pos`` (adjacent pairs, as :func:`eoc_native.llm.llama.apply_rope`). ``out`` (n_heads *
    head_dim) gets the heads' outputs: each query head ``h`` reads key/value head ``h // group``.
    """
    _, n_kv, hd = cache_k.shape
    group = n_heads // n_kv
    half = cos.shape[0]
    q = np.empty((n_heads, hd), np.float32)
    for h in range(n_heads):
        base = h * hd
        for j in range(hd):
            q[h, j] = qkv[base + j]
        for j in range(half):
            x0 = q[h, 2 * j]
            x1 = q[h, 2 * j + 1]
            q[h, 2 * j] = x0 * cos[j] - x1 * sin[j]
            q[h, 2 * j + 1] = x0 * sin[j] + x1 * cos[j]
    k0 = n_heads * hd
    v0 = k0 + n_kv * hd
    for g in range(n_kv):
        for j in range(hd):
            cache_k[pos, g, j] = qkv[k0 + g * hd + j]
            cache_v[pos, g, j] = qkv[v0 + g * hd + j]
        for j in range(half):
            x0 = cache_k[pos, g, 2 * j]
            x1 = cache_k[pos, g, 2 * j + 1]
            cache_k[pos, g, 2 * j] = x0 * cos[j] - x1 * sin[j]
            cache_k[pos, g, 2 * j + 1] = x0 * sin[j] + x1 * cos[j]
    scores = np.empty(pos + 1, np.float32)
    for h in range(n_heads):
        g = h // group
        best = np.float32(-np.inf)
        for t in range(pos + 1):
            acc = np.float32(0)
            for j in range(hd):
                acc += q[h, j] * cache_k[t, g, j]
            acc *= scale
            scores[t] = acc
            if acc > best:
                best = acc
        total = np.float32(0)
        for t in range(pos + 1):
            e = np.exp(scores[t] - best)
            scores[t] = e
            total += e
        o = out[h * hd : (h + 1) * hd]
        o[:] = 0
        for t in range(pos + 1):
            w = scores[t] / total
            for j in range(hd):
                o[j] += w * cache_v[t, g, j]


@_serial
def rms_norm_row(x: Any, weight: Any, eps: float, out: Any) -> None:  # pragma: no cover
    """RMSNorm of one row (the sum of squares in float64), times ``weight``, into ``out``."""
    n = x.shape[0]
    ss = 0.0
    for i in range(n):
        ss += np.float64(x[i]) * np.float64(x[i])
    scale = np.float32(1.0 / np.sqrt(ss / n + eps))
    for i in range(n):
        out[i] = x[i] * scale * weight[i]


@_serial
def silu_mul(gate_up: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out = silu(gate) * up`` for one row holding gate and up side by side."""
    h = out.shape[0]
    for i in range(h):
        g = gate_up[i]
        out[i] = g / (np.float32(1) + np.exp(-g)) * gate_up[h + i]


__all__ = [
    "decode_attention",
    "q4_dequant",
    "q4_matvec",
    "q8_dequant",
    "q8_matvec",
    "rms_norm_row",
    "silu_mul",
]
