"""The C kernels (``ckernels.c``, built by :mod:`eoc_native.quant.cbuild`), called through ctypes.

The same functions, arguments and arrays as the numba kernels of :mod:`eoc_native.quant.kernels`,
so every caller runs on either; :func:`eoc_native.quant.load_kernels` picks this one where a C
compiler builds it. A model run through it loads neither numba nor LLVM, which keeps a process's
memory and start-up small, and the first run compiles in about a second instead of five.

Arrays are checked for type and layout before their address goes to C (a wrong one is a
:class:`~eoc.errors.InputError`, never a wild read). The thread count is this module's
(:func:`set_num_threads`, per calling thread as numba's; eoc's
:class:`~eoc_native.llm.threads.Pools` sets it around each
forward pass), passed to each parallel loop.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eoc.errors import InputError
from eoc_native.quant import cbuild

_c_i64 = ctypes.c_int64
_p = ctypes.c_void_p


class _Q4(ctypes.Structure):
    _fields_ = (("qs", _p), ("d", _p), ("m", _p), ("nt", _c_i64), ("nb", _c_i64), ("t", _c_i64))


class _Layer(ctypes.Structure):
    _fields_ = (
        ("attn_norm", _p),
        ("ffn_norm", _p),
        ("qkv", _Q4),
        ("wo", _Q4),
        ("gate_up", _Q4),
        ("down", _Q4),
        ("cache_k", _p),
        ("cache_v", _p),
    )


def _load(progress: Callable[[str], None] | None = None) -> ctypes.CDLL:
    lib = cbuild.load(cbuild.build(progress))  # checked: only a file no one else could write
    f32, i64, i32 = ctypes.c_float, _c_i64, ctypes.c_int
    sigs: dict[str, list[Any]] = {
        "eoc_q4_matvec": [_p, _p, _p, _p, _p, i64, i64, i64, i32],
        "eoc_q8_matvec": [_p, _p, _p, _p, i64, i64, i64, i32],
        "eoc_q4_dequant": [_p, _p, _p, _p, i64, i64, i64, i32],
        "eoc_q8_dequant": [_p, _p, _p, i64, i64, i64, i32],
        "eoc_rms_norm_row": [_p, _p, f32, _p, i64],
        "eoc_silu_mul": [_p, _p, i64],
        "eoc_decode_attention": [_p, _p, _p, i64, _p, _p, i64, i64, i64, f32, _p, i32],
        "eoc_decode_layers": [
            *(_p, i64, _p, i64, f32, i64, _p, _p),
            *(i64, i64, i64, f32, i64, _p, i32),
        ],
        "eoc_tile_blocks": [_p, i64, i64, i64, i64, i64, i64, _p, _p, _p, i64, i32],
        "eoc_q4_k_to_q4_1": [_p, _p, i64, i32],
        "eoc_q6_k_to_q8_0": [_p, _p, i64, i32],
        "eoc_kernels_openmp": [],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = ctypes.c_int if name == "eoc_kernels_openmp" else None
    return lib


_LIB: ctypes.CDLL | None = None
MAX_TILE = 512
MAX_HEAD_DIM = 1024
"""The largest attention head the C kernels take (Llama-family models use 64 to 256)."""
"""The widest tile eoc lays out (:data:`eoc_native.quant.blocks.TILES`)."""
_counts = threading.local()  # each thread's count, as numba's: two models' passes never mix


def library(progress: Callable[[str], None] | None = None) -> ctypes.CDLL:
    """The loaded C library, built first if need be (:func:`eoc_native.quant.cbuild.build`)."""
    global _LIB
    if _LIB is None:
        _LIB = _load(progress)
    return _LIB


def pool_size() -> int:
    """The most threads a kernel may run on: the machine's cores (OpenMP starts them)."""
    return max(1, os.cpu_count() or 1) if library().eoc_kernels_openmp() else 1


def get_num_threads() -> int:
    """The kernels' thread count for the calling thread (the cores, until it is set)."""
    n: int | None = getattr(_counts, "n", None)
    return n if n is not None else max(1, os.cpu_count() or 1)


def set_num_threads(n: int) -> None:
    """The thread count of the kernels' parallel loops, for calls from the calling thread."""
    if not 1 <= n <= pool_size():
        raise InputError(f"thread count {n} is outside 1..{pool_size()}")
    _counts.n = n


def _ptr(a: Any, dtype: Any, name: str, ndim: int | None = None) -> int:
    """The address of ``a``'s data, after checking it is a C-contiguous array of ``dtype``."""
    if (
        not isinstance(a, np.ndarray)
        or a.dtype != dtype
        or not a.flags.c_contiguous
        or (ndim is not None and a.ndim != ndim)
    ):
        got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        raise InputError(f"kernel argument {name}: a contiguous {np.dtype(dtype)} array, not {got}")
    return int(a.__array_interface__["data"][0])


def _out(out: Any, floats: int, name: str = "out") -> int:
    ptr = _ptr(out, np.float32, name)
    if out.size < floats:
        raise InputError(f"kernel argument {name} holds {out.size} floats, {floats} needed")
    return ptr


def _blocks(qs: Any, d: Any, m: Any, rows: int) -> tuple[int, int, int, int, int, int]:
    """Pointers and (n_tiles, n_blocks, T) of a block matrix, its arrays checked together."""
    dtype = np.uint8 if rows == 16 else np.int8
    q = _ptr(qs, dtype, "qs", 4)
    dp = _ptr(d, np.uint16, "d", 3)
    nt, nb, r, t = qs.shape
    if r != rows or d.shape != (nt, nb, t):
        raise InputError(f"kernel arguments qs {qs.shape} and d {d.shape} do not fit together")
    if not 0 < t <= MAX_TILE or nb < 1:  # a tile's sums live on the stack in C
        raise InputError(f"a tile of {t} columns and {nb} blocks is not one eoc lays out")
    mp = 0
    if (m is None) != (rows == 32):
        raise InputError("a 4-bit matrix needs its minimums m, an 8-bit one has none")
    if m is not None:
        mp = _ptr(m, np.uint16, "m", 3)
        if m.shape != d.shape:
            raise InputError(f"kernel arguments d {d.shape} and m {m.shape} do not fit together")
    return q, dp, mp, nt, nb, t


def _vector(x: Any, floats: int, name: str = "x") -> int:
    ptr = _ptr(x, np.float32, name, 1)
    if x.shape[0] < floats:
        raise InputError(f"kernel argument {name} holds {x.shape[0]} floats, {floats} needed")
    return ptr


def q4_matvec(qs: Any, d: Any, m: Any, x: Any, out: Any) -> None:
    """``out = x @ W`` for one float32 row ``x`` and a tiled 4-bit block matrix ``W``."""
    q, dp, mp, nt, nb, t = _blocks(qs, d, m, 16)
    library().eoc_q4_matvec(
        q, dp, mp, _vector(x, nb * 32), _out(out, nt * t), nt, nb, t, get_num_threads()
    )


def q8_matvec(qs: Any, d: Any, x: Any, out: Any) -> None:
    """``out = x @ W`` for one float32 row ``x`` and a tiled 8-bit block matrix ``W``."""
    q, dp, _, nt, nb, t = _blocks(qs, d, None, 32)
    library().eoc_q8_matvec(
        q, dp, _vector(x, nb * 32), _out(out, nt * t), nt, nb, t, get_num_threads()
    )


def q4_dequant(qs: Any, d: Any, m: Any, out: Any) -> None:
    """``out`` (n_in, padded n_out) float32 = the tiled 4-bit block matrix, dequantized."""
    q, dp, mp, nt, nb, t = _blocks(qs, d, m, 16)
    if out.shape != (nb * 32, nt * t):
        raise InputError(f"kernel argument out {out.shape} is not ({nb * 32}, {nt * t})")
    library().eoc_q4_dequant(q, dp, mp, _out(out, 0), nt, nb, t, 1)  # see _SERIAL


def q8_dequant(qs: Any, d: Any, out: Any) -> None:
    """``out`` (n_in, padded n_out) float32 = the tiled 8-bit block matrix, dequantized."""
    q, dp, _, nt, nb, t = _blocks(qs, d, None, 32)
    if out.shape != (nb * 32, nt * t):
        raise InputError(f"kernel argument out {out.shape} is not ({nb * 32}, {nt * t})")
    library().eoc_q8_dequant(q, dp, _out(out, 0), nt, nb, t, 1)  # see _SERIAL


def rms_norm_row(x: Any, weight: Any, eps: float, out: Any) -> None:
    """RMSNorm of one row (the sum of squares in float64), times ``weight``, into ``out``."""
    n = x.shape[0]
    library().eoc_rms_norm_row(_vector(x, n), _vector(weight, n, "weight"), eps, _out(out, n), n)


def silu_mul(gate_up: Any, out: Any) -> None:
    """``out = silu(gate) * up`` for one row holding gate and up side by side."""
    h = out.shape[0]
    library().eoc_silu_mul(_vector(gate_up, 2 * h, "gate_up"), _out(out, h), h)


def _cache(cache_k: Any, cache_v: Any, pos: int) -> tuple[int, int, int, int]:
    """Pointers, kv heads and head size of one layer's KV cache (n_ctx, kv_heads, head_dim)."""
    k, v = _ptr(cache_k, np.float32, "cache_k", 3), _ptr(cache_v, np.float32, "cache_v", 3)
    n_ctx, n_kv, hd = cache_k.shape
    if (
        cache_v.shape != cache_k.shape
        or not 0 <= pos < n_ctx
        or hd % 2
        or not 0 < hd <= MAX_HEAD_DIM  # a head's query and output live on the stack in C
        or n_kv < 1
    ):
        raise InputError(f"a KV cache of {cache_k.shape} has no position {pos}")
    return k, v, n_kv, hd


def decode_attention(
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
    """One new token's attention in one layer (as :func:`eoc_native.quant.kernels.decode_attention`),
    on one thread: it runs between products another backend may run on its own threads (BLAS's),
    and two pools spinning for the same cores slow both many times over. The layer plan's
    attention (:class:`LayerPlan`) runs its heads on the kernels' threads."""
    k, v, n_kv, hd = _cache(cache_k, cache_v, pos)
    if n_heads % n_kv:
        raise InputError(f"{n_heads} query heads do not share {n_kv} key/value heads evenly")
    half = hd // 2
    library().eoc_decode_attention(
        _vector(qkv, (n_heads + 2 * n_kv) * hd, "qkv"),
        k,
        v,
        pos,
        _vector(cos, half, "cos"),
        _vector(sin, half, "sin"),
        n_heads,
        n_kv,
        hd,
        scale,
        _out(out, n_heads * hd),
        1,  # between another backend's products (BLAS's threads): one thread, never two pools
    )


def _q4(blocks: tuple[Any, Any, Any]) -> _Q4:
    q, dp, mp, nt, nb, t = _blocks(*blocks, 16)
    return _Q4(q, dp, mp, nt, nb, t)


class LayerPlan:
    """Every layer of a model for :meth:`run`, its addresses read and checked once: the arrays
    it holds stay alive and in place as long as the plan does."""

    def __init__(
        self,
        layers: Sequence[tuple[Any, Any, tuple[Any, Any, Any, Any]]],
        caches: tuple[Any, Any],
    ) -> None:
        self._keep = (layers, caches)
        cache_k, cache_v = caches
        self.structs = (_Layer * len(layers))()
        shapes: set[tuple[int, ...]] = set()
        for i, (attn_norm, ffn_norm, (qkv, wo, gate_up, down)) in enumerate(layers):
            k, v, n_kv, hd = _cache(cache_k[i], cache_v[i], 0)
            q = [_q4(w) for w in (qkv, wo, gate_up, down)]
            dim = attn_norm.shape[0]
            if not (
                ffn_norm.shape == attn_norm.shape
                and q[0].nb * 32 == dim == q[2].nb * 32
                and min(q[1].nt * q[1].t, q[3].nt * q[3].t) >= dim
            ):
                raise InputError(f"layer {i}'s matrices do not fit its width {dim}")
            shapes.add(
                (
                    dim,
                    n_kv,
                    hd,
                    q[1].nb * 32,
                    q[3].nb * 32,
                    q[0].nt * q[0].t,
                    max(q[1].nt * q[1].t, q[3].nt * q[3].t),
                    q[2].nt * q[2].t,
                )
            )
            self.structs[i] = _Layer(
                _ptr(attn_norm, np.float32, "attn_norm", 1),
                _ptr(ffn_norm, np.float32, "ffn_norm", 1),
                *q,
                k,
                v,
            )
        if len(shapes) != 1:
            raise InputError("the layers differ in shape: one plan runs layers of one shape")
        self.n_layers = len(layers)
        self.cache_positions = int(cache_k.shape[1])
        (
            self.dim,
            self.n_kv,
            self.head_dim,
            self.wo_in,
            self.down_in,
            self.n_qkv,
            self.n_o,
            self.n_gu,
        ) = shapes.pop()

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
        """One token through every layer, ``x`` updated in place."""
        if not 0 <= pos < min(n_ctx, self.cache_positions):
            raise InputError(f"position {pos} is outside the KV cache of {self.cache_positions}")
        q_size = n_heads * head_dim
        need = decode_scratch(self.dim, q_size, self.n_qkv, self.n_o, self.n_gu)
        if (
            x.shape != (self.dim,)
            or (n_kv, head_dim) != (self.n_kv, self.head_dim)
            or n_heads % n_kv
            or self.n_qkv < q_size + 2 * n_kv * head_dim
            or self.wo_in != q_size
            or not 0 < hidden == self.down_in <= self.n_gu // 2  # down reads all it takes
            or scratch.shape[0] < need
        ):
            raise InputError("the decode step's sizes do not fit its layer plan")
        library().eoc_decode_layers(
            self.structs,
            self.n_layers,
            _ptr(x, np.float32, "x", 1),
            x.shape[0],
            eps,
            pos,
            _vector(cos, head_dim // 2, "cos"),
            _vector(sin, head_dim // 2, "sin"),
            n_heads,
            n_kv,
            head_dim,
            scale,
            hidden,
            _ptr(scratch, np.float32, "scratch", 1),
            get_num_threads(),
        )


def tile_blocks(
    raw: Any, size: int, q0: int, m_at: int | None, qs: Any, d: Any, m: Any | None
) -> None:
    """Tile a GGUF tensor's blocks into ``qs``, ``d`` (and ``m``) as
    :func:`eoc_native.quant.blocks.blocks_from_raw` lays them out: ``raw`` is (n_out, n_blocks,
    ``size``) bytes; bytes ``q0`` on of each block are its weights, its float16 scale is at 0
    and (``m_at``) its minimum. ``n_out`` is whole tiles."""
    blocks = _ptr(raw, np.uint8, "raw", 3)
    n_out, nb, got = raw.shape
    nt, nb2, qlen, t = qs.shape
    if got != size or nb2 != nb or nt * t != n_out or not 0 <= q0 <= size - qlen:
        raise InputError(f"blocks {raw.shape} do not tile into {qs.shape}")
    q = _ptr(qs, qs.dtype if qs.dtype in (np.uint8, np.int8) else np.uint8, "qs", 4)
    dp = _ptr(d, np.uint16, "d", 3)
    if d.shape != (nt, nb, t) or (m is not None and (m.shape != d.shape or m_at is None)):
        raise InputError(f"scales {d.shape} do not fit blocks tiled as {qs.shape}")
    mp = 0 if m is None else _ptr(m, np.uint16, "m", 3)
    if m_at is not None and not 0 <= m_at <= size - 2:
        raise InputError(f"a minimum at byte {m_at} is outside a {size}-byte block")
    library().eoc_tile_blocks(
        blocks,
        n_out,
        nb,
        size,
        q0,
        qlen,
        -1 if m is None else m_at,
        q,
        dp,
        mp,
        t,
        get_num_threads(),
    )


def _k_quant(raw: Any, size: int, type_name: str, out_size: int, fn: str) -> Any:
    """K-quant rows (n_rows, bytes) converted by the C function ``fn``: eight ``out_size``-byte
    blocks for each ``size``-byte super-block."""
    data = np.ascontiguousarray(raw, dtype=np.uint8)
    if data.ndim != 2 or data.shape[1] % size:
        raise InputError(f"{type_name} rows of {data.shape[-1]} bytes are not whole blocks")
    n_rows, n_super = data.shape[0], data.shape[1] // size
    out = np.empty((n_rows, n_super * 8 * out_size), np.uint8)
    if out.size:
        getattr(library(), fn)(
            _ptr(data, np.uint8, "raw", 2),
            _ptr(out, np.uint8, "out", 2),
            n_rows * n_super,
            get_num_threads(),
        )
    return out


def q4_k_to_q4_1(raw: Any) -> Any:
    """Q4_K rows as Q4_1 rows, byte for byte as :func:`eoc_native.quant.kquants.q4_k_to_q4_1`."""
    return _k_quant(raw, 144, "Q4_K", 20, "eoc_q4_k_to_q4_1")


def q6_k_to_q8_0(raw: Any) -> Any:
    """Q6_K rows as Q8_0 rows, byte for byte as :func:`eoc_native.quant.kquants.q6_k_to_q8_0`."""
    return _k_quant(raw, 210, "Q6_K", 34, "eoc_q6_k_to_q8_0")


def decode_scratch(dim: int, q_size: int, n_qkv: int, n_o: int, n_gate_up: int) -> int:
    """Floats of the decode scratch buffer (as :func:`eoc_native.quant.kernels.decode_scratch`)."""
    return dim + n_qkv + q_size + n_o + n_gate_up + n_gate_up // 2


NAME = "C"
"""How the kernels are named in a model's description."""

__all__ = [
    "NAME",
    "LayerPlan",
    "decode_attention",
    "decode_scratch",
    "get_num_threads",
    "library",
    "pool_size",
    "q4_dequant",
    "q4_k_to_q4_1",
    "q4_matvec",
    "q6_k_to_q8_0",
    "q8_dequant",
    "q8_matvec",
    "rms_norm_row",
    "set_num_threads",
    "silu_mul",
    "tile_blocks",
]
