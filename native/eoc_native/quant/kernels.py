"""Compiled (numba) kernels for matrices kept as 4-bit and 8-bit blocks.

The kernels where no C compiler builds :mod:`eoc_native.quant.ckernels` (or with
``EOC_KERNELS=numba``): the same functions over the same arrays. Imported only by
:func:`eoc_native.quant.load_kernels` (for the ``cpu-quant`` backend,
:mod:`eoc_native.backends.quant`, and the model's one-token steps, :mod:`eoc_native.llm.llama`);
numba compiles each kernel on its first call and caches the machine code next to this file.

Layouts are :class:`eoc_native.quant.blocks.QuantBlocks`: ``qs[tile, b, j, i]`` is byte ``j`` of
block ``b`` of column ``i`` of a tile, so a task (one tile) streams one contiguous run of
memory, the inner loops run down contiguous columns and the compiler vectorizes them; the
activations stay float32 (no activation quantization), so the result is the float32 product with
the dequantized matrix, up to summation order. The block scales are the file's float16, passed as
their bits (``uint16``: numba has no float16 type) and widened by :func:`f16` as they are read.

:func:`decode_layer` runs one token through a whole transformer block in one call (norms, the
four products, attention, SwiGLU, residuals), so a decode step costs one Python call per layer
instead of about ten.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import get_num_threads, set_num_threads, types
from numba.extending import intrinsic

_jit = numba.njit(parallel=True, fastmath=True, cache=True, nogil=True)
_serial = numba.njit(fastmath=True, cache=True, nogil=True)


@intrinsic
def _f16(typingctx: Any, bits: Any) -> Any:  # pragma: no cover - compiled
    """float16 bits (``uint16``) to float32, exactly: LLVM's ``fpext half`` (``vcvtph2ps`` on x86
    with F16C, ``fcvt`` on ARM; the loops that call it vectorize it)."""
    if bits != types.uint16:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


f16: Any = _f16  # called as f16(bits) in the kernels (numba passes the typing context)


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
                acc[i] += f16(db[i]) * tmp[i] + f16(mb[i]) * sb
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
                acc[i] += f16(db[i]) * tmp[i]
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
                    di = f16(db[i])
                    mi = f16(mb[i])
                    lo[c + i] = di * np.float32(v & 15) + mi
                    hi[c + i] = di * np.float32(v >> 4) + mi


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
                    o[c + i] = f16(db[i]) * np.float32(row[i])


@_jit
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
    The heads run in parallel.
    """
    _, n_kv, hd = cache_k.shape
    group = n_heads // n_kv
    half = cos.shape[0]
    k0 = n_heads * hd
    v0 = k0 + n_kv * hd
    for g in range(n_kv):
        for j in range(half):
            x0 = qkv[k0 + g * hd + 2 * j]
            x1 = qkv[k0 + g * hd + 2 * j + 1]
            cache_k[pos, g, 2 * j] = x0 * cos[j] - x1 * sin[j]
            cache_k[pos, g, 2 * j + 1] = x0 * sin[j] + x1 * cos[j]
        for j in range(hd):
            cache_v[pos, g, j] = qkv[v0 + g * hd + j]
    for h in numba.prange(n_heads):
        g = h // group
        base = h * hd
        q = np.empty(hd, np.float32)
        for j in range(half):
            x0 = qkv[base + 2 * j]
            x1 = qkv[base + 2 * j + 1]
            q[2 * j] = x0 * cos[j] - x1 * sin[j]
            q[2 * j + 1] = x0 * sin[j] + x1 * cos[j]
        scores = np.empty(pos + 1, np.float32)
        best = np.float32(-np.inf)
        for t in range(pos + 1):
            acc = np.float32(0)
            for j in range(hd):
                acc += q[j] * cache_k[t, g, j]
            acc *= scale
            scores[t] = acc
            if acc > best:
                best = acc
        total = np.float32(0)
        for t in range(pos + 1):
            e = np.exp(scores[t] - best)
            scores[t] = e
            total += e
        o = np.zeros(hd, np.float32)
        for t in range(pos + 1):
            w = scores[t] / total
            for j in range(hd):
                o[j] += w * cache_v[t, g, j]
        out[base : base + hd] = o


@_serial
def decode_layer(  # pragma: no cover - compiled
    x: Any,
    attn_norm: Any,
    ffn_norm: Any,
    eps: float,
    qkv: tuple[Any, Any, Any],
    wo: tuple[Any, Any, Any],
    gate_up: tuple[Any, Any, Any],
    down: tuple[Any, Any, Any],
    cache_k: Any,
    cache_v: Any,
    pos: int,
    cos: Any,
    sin: Any,
    n_heads: int,
    scale: float,
    hidden: int,
    scratch: Any,
) -> None:
    """One token through one transformer block, ``x`` (dim) updated in place.

    ``x += attention(rms_norm(x))``, then ``x += down(silu(gate) * up)`` of ``rms_norm(x)``;
    each matrix is a 4-bit block matrix given as its ``(qs, d, m)``, q, k and v side by side and
    gate and up side by side (as :class:`eoc_native.llm.llama.Layer` holds them; ``hidden`` is
    the width of each of gate and up). ``scratch``
    is one float32 buffer of :func:`decode_scratch` floats. The products and the heads run in
    parallel, each as the one-product kernels do it.
    """
    dim = x.shape[0]
    n_qkv = qkv[0].shape[0] * qkv[0].shape[3]
    n_gu = gate_up[0].shape[0] * gate_up[0].shape[3]
    n_o = max(wo[0].shape[0] * wo[0].shape[3], down[0].shape[0] * down[0].shape[3])
    q_size = n_heads * cache_k.shape[2]
    h = scratch[:dim]
    b_qkv = scratch[dim : dim + n_qkv]
    heads = scratch[dim + n_qkv : dim + n_qkv + q_size]
    base = dim + n_qkv + q_size
    b_o = scratch[base : base + n_o]
    b_gu = scratch[base + n_o : base + n_o + n_gu]
    b_hid = scratch[base + n_o + n_gu : base + n_o + n_gu + n_gu // 2]
    rms_norm_row(x, attn_norm, eps, h)
    q4_matvec(qkv[0], qkv[1], qkv[2], h, b_qkv)
    decode_attention(b_qkv, cache_k, cache_v, pos, cos, sin, n_heads, scale, heads)
    q4_matvec(wo[0], wo[1], wo[2], heads, b_o)
    for i in range(dim):
        x[i] += b_o[i]
    rms_norm_row(x, ffn_norm, eps, h)
    q4_matvec(gate_up[0], gate_up[1], gate_up[2], h, b_gu)
    silu_mul(b_gu[: 2 * hidden], b_hid[:hidden])
    q4_matvec(down[0], down[1], down[2], b_hid[:hidden], b_o)
    for i in range(dim):
        x[i] += b_o[i]


class LayerPlan:
    """Every layer of a model for :meth:`run` (as :class:`eoc_native.quant.ckernels.LayerPlan`):
    ``layers`` holds each layer's norms and four 4-bit matrices as ``(qs, d, m)``, ``caches``
    the model's KV caches (n_layers, n_ctx, kv_heads, head_dim)."""

    def __init__(self, layers: Any, caches: tuple[Any, Any]) -> None:
        self.layers = list(layers)
        self.cache_k, self.cache_v = caches

    def run(
        self,
        x: Any,
        eps: float,
        pos: int,
        cos: Any,
        sin: Any,
        n_heads: int,
        n_kv: int,
        head_dim: int,
        scale: float,
        hidden: int,
        scratch: Any,
        n_ctx: int,
    ) -> None:
        """One token through every layer, ``x`` updated in place (a compiled call a layer)."""
        for i, (attn_norm, ffn_norm, (qkv, wo, gate_up, down)) in enumerate(self.layers):
            decode_layer(
                x,
                attn_norm,
                ffn_norm,
                eps,
                qkv,
                wo,
                gate_up,
                down,
                self.cache_k[i],
                self.cache_v[i],
                pos,
                cos,
                sin,
                n_heads,
                scale,
                hidden,
                scratch,
            )


NAME = "numba"
"""How the kernels are named in a model's description."""


def pool_size() -> int:
    """Threads in numba's pool (``NUMBA_NUM_THREADS``, fixed when numba starts)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def decode_scratch(dim: int, q_size: int, n_qkv: int, n_o: int, n_gate_up: int) -> int:
    """Floats of :func:`decode_layer`'s scratch buffer: the model's width, the query heads'
    width, and the (padded) widths of the qkv, output (the wider of wo and down) and gate-up
    products."""
    return dim + n_qkv + q_size + n_o + n_gate_up + n_gate_up // 2


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
    "NAME",
    "LayerPlan",
    "decode_attention",
    "decode_layer",
    "decode_scratch",
    "f16",
    "get_num_threads",
    "pool_size",
    "q4_dequant",
    "q4_matvec",
    "q8_dequant",
    "q8_matvec",
    "rms_norm_row",
    "set_num_threads",
    "silu_mul",
]
