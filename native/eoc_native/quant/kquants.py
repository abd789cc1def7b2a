"""llama.cpp's K-quants (Q4_K, Q6_K) turned into blocks the compiled kernels run on, at load.

A K-quant packs 256 weights in a *super-block* of smaller sub-blocks, each with its own scale
(ggml-common.h, ``block_q4_K`` and ``block_q6_K``); eoc's kernels run on 32-weight blocks
(:mod:`eoc_native.quant.blocks`). So a K-quant matrix is rewritten once, as it is loaded, into
the bytes of a kernel type, and then tiled like any file of that type (the layout cache keeps
the tiled result, so a later load maps it and converts nothing):

* **Q4_K -> Q4_1, exact but for the scales' rounding.** A Q4_K sub-block of 32 weights is
  ``w = d * sc * q - dmin * mn`` with 4-bit ``q`` and 6-bit ``sc`` and ``mn``: a Q4_1 block
  (``w = D * q + M``) with ``D = d * sc`` and ``M = -dmin * mn``, the same nibbles. Only D and M
  are rounded to float16 (Q4_1 stores them so): a relative error of at most 2**-11 in a scale.
  The weights stay 4-bit, 20 bytes a 32 (Q4_K: 18), so a decode step reads as little.
* **Q6_K -> Q8_0, requantized.** A Q6_K sub-block is 16 weights (``w = d * sc * (q - 32)``, 6-bit
  ``q``, 8-bit ``sc``); a 32-weight block holds two sub-blocks' scales, which no single Q8_0
  scale reproduces. The weights are dequantized (the ``gguf`` package, in row chunks) and
  quantized to Q8_0 as llama.cpp does (``d = max|w| / 127``, ``q = round(w / d)``): an error of
  at most half a Q8_0 step, ``max|w| / 254`` in a block, below Q6_K's own step wherever the
  block's largest weight is within 4x of its sub-block's.

Block layouts (ggml-common.h):

* ``block_q4_K`` (144 bytes): ``d``, ``dmin`` float16; 12 bytes packing eight 6-bit scales and
  eight 6-bit minimums (``get_scale_min_k4``); 128 bytes of nibbles, 32 bytes per 64 weights:
  the low nibbles are sub-block ``2j``, the high ones sub-block ``2j + 1``.
* ``block_q6_K`` (210 bytes): 128 bytes of low nibbles ``ql``, 64 bytes of high 2-bit pairs
  ``qh``, 16 int8 scales, ``d`` float16.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError

SUPER = 256
"""Weights per K-quant super-block."""
Q4_K_BYTES = 144
Q6_K_BYTES = 210
ROWS_PER_CHUNK = 4096
"""Rows of a Q6_K matrix dequantized at a time (a float32 chunk of 1536-wide rows: 25 MB)."""


def _rows(raw: npt.NDArray[Any], size: int, type_name: str) -> npt.NDArray[np.uint8]:
    """``raw`` (n_rows, bytes) as (n_rows, super-blocks, ``size``) bytes."""
    data = np.ascontiguousarray(raw, dtype=np.uint8)
    if data.ndim != 2 or data.shape[1] % size:
        raise InputError(f"{type_name} rows of {data.shape[-1]} bytes are not whole blocks")
    return data.reshape(data.shape[0], -1, size)


def q4_k_scales(packed: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The eight 6-bit scales and minimums of each Q4_K super-block from its 12 packed bytes
    (``packed`` (..., 12)), as ggml's ``get_scale_min_k4``: each (..., 8) uint8."""
    q = packed.astype(np.uint8)
    lo, mid, hi = q[..., 0:4], q[..., 4:8], q[..., 8:12]
    sc = np.concatenate([lo & 63, (hi & 0xF) | ((lo >> 6) << 4)], axis=-1)
    mn = np.concatenate([mid & 63, (hi >> 4) | ((mid >> 6) << 4)], axis=-1)
    return sc, mn


def q4_k_to_q4_1(raw: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """Q4_K rows (n_rows, bytes) as Q4_1 rows of the same weights: (n_rows, 8 * 20 per block)."""
    b = _rows(raw, Q4_K_BYTES, "Q4_K")
    n, nsb = b.shape[:2]
    d = b[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float32)  # (n, nsb)
    dmin = b[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
    sc, mn = q4_k_scales(b[..., 4:16])
    scale = (d[..., None] * sc).astype(np.float16)  # (n, nsb, 8): D of each sub-block
    low = (-(dmin[..., None] * mn)).astype(np.float16)  # M of each sub-block
    qs = b[..., 16:].reshape(n, nsb, 4, 32)  # four 64-weight runs of 32 bytes
    # sub-block 2j is the low nibbles of run j, 2j+1 the high ones; weight l of a sub-block in
    # byte l: a Q4_1 block wants weight i low and weight i + 16 high in byte i
    q = np.stack([qs & 0xF, qs >> 4], axis=3).reshape(n, nsb, 8, 32)
    packed = q[..., :16] | (q[..., 16:] << 4)
    out = np.empty((n, nsb, 8, 20), np.uint8)
    out[..., 0:2] = scale[..., None].view(np.uint8)
    out[..., 2:4] = low[..., None].view(np.uint8)
    out[..., 4:] = packed
    return out.reshape(n, -1)


def q6_k_weights(raw: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Q6_K rows (n_rows, bytes) dequantized to float32 (n_rows, weights), by ggml's layout.

    The ``gguf`` package does the same; this is here so the layout is read in eoc's own code too
    (tests/native/test_kquants.py checks the two agree)."""
    b = _rows(raw, Q6_K_BYTES, "Q6_K")
    n, nsb = b.shape[:2]
    ql = b[..., 0:128].reshape(n, nsb, 2, 64)  # per 128-weight half: 64 bytes of low nibbles
    qh = b[..., 128:192].reshape(n, nsb, 2, 32)  # and 32 bytes of high pairs
    sc = b[..., 192:208].view(np.int8).astype(np.float32).reshape(n, nsb, 2, 8)
    d = b[..., 208:210].copy().view(np.float16)[..., 0].astype(np.float32)
    # the half's weights l, l + 32, l + 64, l + 96 (l < 32) come from ql[l], ql[l + 32] (low,
    # then high nibbles) and the 2-bit pairs 0, 1, 2, 3 of qh[l]
    lo = np.stack([ql[..., :32] & 0xF, ql[..., 32:] & 0xF, ql[..., :32] >> 4, ql[..., 32:] >> 4], 3)
    hi = np.stack([(qh >> s) & 3 for s in (0, 2, 4, 6)], axis=3)
    q = (lo | (hi << 4)).astype(np.float32) - 32  # (n, nsb, 2, 4, 32)
    # weight i of a half has scale i // 16: four runs of 32 are two sub-blocks each
    scales = sc.reshape(n, nsb, 2, 4, 2, 1)
    w = q.reshape(n, nsb, 2, 4, 2, 16) * scales * d[..., None, None, None, None]
    return np.ascontiguousarray(w.reshape(n, nsb * SUPER), dtype=np.float32)


def q8_0_from_weights(w: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """float32 rows (n_rows, weights, a multiple of 32) as Q8_0 rows (llama.cpp's
    ``quantize_row_q8_0``: ``d = max|w| / 127``, ``q = round(w / d)``, halves away from 0)."""
    n, k = w.shape
    blocks = w.reshape(n, k // 32, 32)
    amax = np.abs(blocks).max(axis=-1)
    d = amax / np.float32(127)
    inv = np.divide(1, d, out=np.zeros_like(d), where=d != 0)
    x = blocks * inv[..., None]
    q = (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(np.int8)
    out = np.empty((n, k // 32, 34), np.uint8)
    out[..., 0:2] = d.astype(np.float16)[..., None].view(np.uint8)
    out[..., 2:] = q.view(np.uint8)
    return out.reshape(n, -1)


def q6_k_to_q8_0(raw: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """Q6_K rows (n_rows, bytes) requantized to Q8_0 rows, ``ROWS_PER_CHUNK`` rows at a time."""
    b = _rows(raw, Q6_K_BYTES, "Q6_K")
    n, nsb = b.shape[:2]
    out = np.empty((n, nsb * 8 * 34), np.uint8)
    for r in range(0, n, ROWS_PER_CHUNK):
        chunk = b[r : r + ROWS_PER_CHUNK].reshape(-1, nsb * Q6_K_BYTES)
        out[r : r + ROWS_PER_CHUNK] = q8_0_from_weights(q6_k_weights(chunk))
    return out


def _c_kernels() -> Any:
    """eoc's C kernels where they are the kernels eoc runs (:func:`eoc_native.quant.load_kernels`):
    they convert byte for byte as the functions above, in one pass and without their temporary
    arrays (Qwen2.5-1.5B's 1 GB: about 1 s, not 13 s, on 2 cores); else ``None``."""
    from eoc.errors import MissingExtra
    from eoc_native.quant import load_kernels

    try:
        kernels = load_kernels()
    except MissingExtra:
        return None
    return kernels if hasattr(kernels, "q6_k_to_q8_0") else None


def to_kernel_type(raw: npt.NDArray[Any], type_name: str) -> tuple[npt.NDArray[np.uint8], str]:
    """A K-quant tensor's rows (n_rows, bytes) as the rows of the kernel type
    :data:`~eoc_native.quant.formats.CONVERTED` names, and that type's name (converted by the
    C kernels where eoc runs them, else by the functions above)."""
    if type_name not in ("Q4_K", "Q6_K"):
        raise InputError(f"GGML type {type_name} is no K-quant eoc converts")
    c = _c_kernels()
    if type_name == "Q4_K":
        return (c.q4_k_to_q4_1(raw) if c else q4_k_to_q4_1(raw)), "Q4_1"
    return (c.q6_k_to_q8_0(raw) if c else q6_k_to_q8_0(raw)), "Q8_0"


__all__ = [
    "q4_k_scales",
    "q4_k_to_q4_1",
    "q6_k_to_q8_0",
    "q6_k_weights",
    "q8_0_from_weights",
    "to_kernel_type",
]
