"""A BERT sentence encoder on 8-bit weights (``encoder.c``, AVX-512 VNNI or AMX), one text a call.

:class:`Int8Encoder` packs a BERT model's float32 weights (all-MiniLM-L6-v2's, from
:class:`eoc_native.semantic.minilm.MiniLMEmbedder`) into int8 with one scale per output column,
once, and runs a whole forward pass in one C call: the float32 numpy pass takes 13 ms for a
12-token question on this project's 2-core machine, this one about a millisecond
(``bench/embedfloor.py``). Its vectors agree with the float32 pass to a cosine of 0.998 or more,
0.9995 on average (``tests/native/test_encoder_i8.py`` holds it to that on people's questions),
so vectors stored by either serve queries embedded by the other.

:func:`unavailable` says why it cannot run here (no C compiler, or a CPU without AVX-512 VNNI:
the library is built for the machine's own CPU); the embedder then runs its float32 pass.
Where the CPU also has AMX and Linux grants this process its tiles (:func:`tiles_granted`), the
products run on them, with the same vector bit for bit.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eoc.errors import InputError, MissingExtra
from eoc_native.quant import ckernels

ROWPAD = 16
"""Rows the quantized input is padded by in ``encoder.c`` (a micro-tile's 6, an AMX tile's 16)."""
AMX_ENV = "EOC_ENCODER_AMX"
"""``off`` keeps the encoder's products off AMX's tiles where the CPU has them (the vectors are the
same bit for bit; for comparing the two paths)."""
PANEL = 64
"""Output columns per task in ``encoder.c``: every layer's width is a multiple of it."""

_p = ctypes.c_void_p
_i64 = ctypes.c_int64


class _Linear(ctypes.Structure):
    _fields_ = (
        ("q", _p),
        ("scale", _p),
        ("qsum", _p),
        ("bias", _p),
        ("smooth", _p),
        ("n", _i64),
        ("k", _i64),
    )


class _Layer(ctypes.Structure):
    _fields_ = (
        ("qk", _Linear),
        ("v", _Linear),
        ("out", _Linear),
        ("up", _Linear),
        ("down", _Linear),
        ("ln1_w", _p),
        ("ln1_b", _p),
        ("ln2_w", _p),
        ("ln2_b", _p),
    )


_lock = threading.Lock()
_typed: Any = None


def _library() -> Any:
    """The C library with ``encoder.c``'s functions given their argument types (before any is
    called: ctypes would pass an untyped address as a 32-bit int)."""
    global _typed
    with _lock:
        if _typed is None:
            lib = ckernels.library()  # MissingExtra without a C compiler
            f32, i64, i32 = ctypes.c_float, _i64, ctypes.c_int
            lib.eoc_encode.argtypes = [_p, i64, _p, i64, _p, _p, _p, _p, _p, i64, i64, i64, f32]
            lib.eoc_encode.argtypes += [_p, _p, _p, _p, _p, i32, i32]
            lib.eoc_encode.restype = ctypes.c_int
            lib.eoc_pack_i8.argtypes = [_p, _p, i64, i64, _p, _p, _p, i32]
            lib.eoc_pack_i8.restype = None
            lib.eoc_encoder_amx.restype = ctypes.c_int
            _typed = lib
    return _typed


def _encode_fn() -> Any:
    """``eoc_encode``, or ``MissingExtra`` saying why it cannot run."""
    lib = _library()
    if not lib.eoc_encoder_vnni():
        raise MissingExtra(
            "this CPU has no AVX-512 VNNI (eoc's 8-bit encoder needs it): "
            "the embedder runs in float32"
        )
    return lib.eoc_encode


def tiles_granted() -> bool:
    """Whether the encoder's products may run on AMX's tiles here: the library was built for a
    CPU with AMX-INT8, Linux granted this process the tiles, and ``$EOC_ENCODER_AMX`` is not
    ``off`` (the VNNI path then runs; the vectors are the same bit for bit)."""
    if os.environ.get(AMX_ENV, "").strip().lower() == "off":
        return False
    return bool(_library().eoc_encoder_amx())


def unavailable() -> str | None:
    """Why the 8-bit encoder cannot run on this machine, or ``None`` where it can."""
    try:
        _encode_fn()
    except MissingExtra as exc:
        return exc.reason
    return None


def quantize_columns(w: Any) -> tuple[Any, Any, Any]:
    """A float32 weight ``w`` (n outputs x k inputs, as PyTorch stores a linear layer) as int8
    with one scale per output (symmetric, rounded to nearest): the int8 matrix, the scales and
    each output's sum of its int8 weights. ``q * scale[:, None]`` is within half a step of ``w``."""
    w = np.asarray(w, dtype=np.float32)
    top = np.abs(w).max(axis=1)
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale, q.sum(axis=1, dtype=np.int32)


SMOOTH_ALPHA = 0.5
SMOOTH_SIGMAS = 2.0
"""How the inputs of the values' and the intermediate layer's products, which come out of a
layer norm, are smoothed before 8 bits (SmoothQuant, Xiao et al. 2023, without calibration
data): a channel's reach is taken as ``SIGMAS * |gain| + |bias|`` of the norm that made it, and
divided by ``reach ** ALPHA / weight_reach ** (1 - ALPHA)``. The queries' and keys' input is
not: smoothed by their weights it gained nothing, smoothed with the values' (one product of
all three) it lost the values' gain. Chosen on the 530 texts of the human suite's tune file:
mean cosine with the float32 pass 0.9991 (least 0.9981) without, 0.99947 (least 0.99906)
with; ``tests/native/test_encoder_i8.py`` checks held-out texts."""


def smoothing(gain: Any, bias: Any, w: Any) -> Any:
    """Per-input factors ``s`` for a linear layer ``w`` (n x k) fed by a layer norm of ``gain``
    and ``bias`` (k each): the layer runs as ``(x / s) @ (w * s).T``, the same product with the
    norm's large channels divided down (mean factor 1)."""
    reach = SMOOTH_SIGMAS * np.abs(gain) + np.abs(bias)
    s = reach**SMOOTH_ALPHA / np.maximum(np.abs(w).max(axis=0), 1e-8) ** (1 - SMOOTH_ALPHA)
    s = np.where(s > 0, s, 1.0)
    return (s / s.mean()).astype(np.float32)


def pack(q: Any) -> Any:
    """int8 weights (n x k) in ``encoder.c``'s layout: [n/64][k/4][64][4]."""
    n, k = q.shape
    return np.ascontiguousarray(q.reshape(n // PANEL, PANEL, k // 4, 4).transpose(0, 2, 1, 3))


def pack_columns(w: Any, mul: Any = None) -> tuple[Any, Any, Any]:
    """``pack(quantize_columns(w * mul))`` and its scales and sums, in C (``eoc_pack_i8``: the
    same numbers, 10 times faster, so the first embedding waits less)."""
    w = _f32(w)
    n, k = w.shape
    packed = np.empty((n // PANEL, k // 4, PANEL, 4), np.int8)
    scale = np.empty(n, np.float32)
    qsum = np.empty(n, np.int32)
    m = None if mul is None else _f32(mul)
    _library().eoc_pack_i8(
        w.ctypes.data, None if m is None else m.ctypes.data, n, k, packed.ctypes.data,
        scale.ctypes.data, qsum.ctypes.data, ckernels.pool_size(),
    )  # fmt: skip
    return packed, scale, qsum


class Int8Encoder:
    """All-MiniLM-L6-v2's forward pass (or any post-norm BERT of the same kind) on int8 weights.

    ``w`` maps the model's tensor names (``embeddings.word_embeddings.weight``,
    ``encoder.layer.{i}.attention.self.query.weight``, ...) to float32 arrays.

    Raises:
        MissingExtra: the machine cannot run it (:func:`unavailable`).
        InputError: the model's shape is not one ``encoder.c`` takes (widths not multiples of
            64, heads not multiples of 16 floats) or a tensor is missing.
    """

    def __init__(
        self, w: Mapping[str, Any], *, layers: int, heads: int, eps: float, amx: bool | None = None
    ) -> None:
        self._fn = _encode_fn()
        self.amx = tiles_granted() if amx is None else bool(amx and tiles_granted())
        """Whether the products run on AMX's tiles (``amx``: ``None`` where the CPU has them, this
        process may use them and ``$EOC_ENCODER_AMX`` is not ``off``; ``False`` never). The
        vector is the same either way."""
        self.tiled = 0
        """How many of the last encoding's products ran on tiles (five a layer where they do)."""
        try:
            self._word = _f32(w["embeddings.word_embeddings.weight"])
            self._pos = _f32(w["embeddings.position_embeddings.weight"])
            self._type0 = _f32(w["embeddings.token_type_embeddings.weight"][0])
            self._emb = (
                _f32(w["embeddings.LayerNorm.weight"]),
                _f32(w["embeddings.LayerNorm.bias"]),
            )
            d = self._word.shape[1]
            ff = np.asarray(w["encoder.layer.0.intermediate.dense.weight"]).shape[0]
        except (KeyError, IndexError) as exc:
            raise InputError(f"the model lacks a BERT tensor ({exc})") from None
        if d % PANEL or ff % PANEL or heads < 1 or d % heads or (d // heads) % 16:
            raise InputError(
                f"eoc's 8-bit encoder takes widths that are multiples of {PANEL} and heads of a "
                f"multiple of 16 floats, not hidden {d}, intermediate {ff}, {heads} heads"
            )
        self.dim, self.ff, self.heads, self.eps = d, ff, heads, eps
        self._keep: list[Any] = []  # every array the C structures point into
        self._layers = (_Layer * layers)()
        for i in range(layers):
            p = f"encoder.layer.{i}"
            try:
                att = f"{p}.attention.self"
                qk = np.concatenate([w[f"{att}.{x}.weight"] for x in ("query", "key")])
                qk_b = np.concatenate([w[f"{att}.{x}.bias"] for x in ("query", "key")])
                before = (
                    "embeddings.LayerNorm" if i == 0 else f"encoder.layer.{i - 1}.output.LayerNorm"
                )
                mid = f"{p}.attention.output.LayerNorm"
                ly = self._layers[i]
                ly.qk = self._linear(qk, qk_b, (2 * d, d))
                ly.v = self._linear(
                    w[f"{att}.value.weight"], w[f"{att}.value.bias"], (d, d), w, before
                )
                ly.out = self._linear(
                    w[f"{p}.attention.output.dense.weight"], w[f"{p}.attention.output.dense.bias"],
                    (d, d),
                )  # fmt: skip
                ly.up = self._linear(
                    w[f"{p}.intermediate.dense.weight"], w[f"{p}.intermediate.dense.bias"], (ff, d),
                    w, mid,
                )  # fmt: skip
                ly.down = self._linear(
                    w[f"{p}.output.dense.weight"], w[f"{p}.output.dense.bias"], (d, ff)
                )
                norms = [
                    self._vec(w[f"{p}.{name}.{part}"], d)
                    for name in ("attention.output.LayerNorm", "output.LayerNorm")
                    for part in ("weight", "bias")
                ]
            except KeyError as exc:
                raise InputError(f"the model lacks a BERT tensor ({exc})") from None
            ly.ln1_w, ly.ln1_b, ly.ln2_w, ly.ln2_b = norms
        self.n_layers = layers
        self.max_tokens = self._pos.shape[0]

    def _vec(self, a: Any, n: int) -> int:
        a = _f32(a)
        if a.shape != (n,):
            raise InputError(f"a BERT vector of shape {a.shape} where ({n},) belongs")
        self._keep.append(a)
        return int(a.ctypes.data)

    def _linear(
        self,
        w: Any,
        bias: Any,
        shape: tuple[int, int],
        weights: Mapping[str, Any] | None = None,
        norm: str | None = None,
    ) -> _Linear:
        """A linear layer's C structure; ``norm``: the layer norm (in ``weights``) its input
        comes from, whose large channels are smoothed (:func:`smoothing`)."""
        if np.shape(w) != shape:
            raise InputError(f"a BERT weight of shape {np.shape(w)} where {shape} belongs")
        n, k = shape
        smooth, s = 0, None
        if weights is not None and norm is not None:
            s = smoothing(_f32(weights[f"{norm}.weight"]), _f32(weights[f"{norm}.bias"]), w)
            smooth = self._vec(1.0 / s, k)
        packed, scale, qsum = pack_columns(w, s)
        self._keep += [packed, scale, qsum]
        return _Linear(
            int(packed.ctypes.data), int(scale.ctypes.data), int(qsum.ctypes.data),
            self._vec(bias, n), smooth or None, n, k,
        )  # fmt: skip

    def encode(self, ids: Sequence[int], threads: int = 1) -> Any:
        """The unit sentence vector (float32, ``dim``) of one text's token ids, ``[CLS]`` and
        ``[SEP]`` included, on ``threads`` threads (at most the cores).

        Raises:
            InputError: no ids, more than the model's positions, or an id outside its vocabulary.
        """
        t = len(ids)
        tok = np.asarray(ids, dtype=np.int64)
        if not 0 < t <= self.max_tokens:
            raise InputError(f"{t} tokens: the encoder takes 1 to {self.max_tokens}")
        if tok.min() < 0 or tok.max() >= self._word.shape[0]:
            raise InputError(f"a token id outside the vocabulary of {self._word.shape[0]}")
        d, ff = self.dim, self.ff
        tp = (t + 15) // 16 * 16  # the scores and each head's keys, transposed, padded to 16
        scratch = np.empty(t * (5 * d + ff) + tp * (1 + d // self.heads), np.float32)
        aq = np.empty((t + ROWPAD) * max(d, ff), np.uint8)
        scales = np.empty(t + ROWPAD, np.float32)
        zeros = np.empty(t + ROWPAD, np.int32)
        out = np.empty(d, np.float32)
        nth = threads
        if not 1 <= nth <= ckernels.pool_size():
            raise InputError(f"thread count {nth} is outside 1..{ckernels.pool_size()}")
        self.tiled = self._fn(
            self._layers, self.n_layers, tok.ctypes.data, t, self._word.ctypes.data,
            self._pos.ctypes.data, self._type0.ctypes.data, self._emb[0].ctypes.data,
            self._emb[1].ctypes.data, d, self.heads, ff, self.eps, scratch.ctypes.data,
            aq.ctypes.data, scales.ctypes.data, zeros.ctypes.data, out.ctypes.data, nth,
            int(self.amx),
        )  # fmt: skip
        return out


def _f32(a: Any) -> Any:
    return np.ascontiguousarray(a, dtype=np.float32)


__all__ = [
    "AMX_ENV",
    "Int8Encoder",
    "pack",
    "pack_columns",
    "quantize_columns",
    "smoothing",
    "tiles_granted",
    "unavailable",
]
