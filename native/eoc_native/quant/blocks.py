"""4-bit and 8-bit weight matrices kept as the file's blocks, tiled for the compiled kernels.

A :class:`QuantBlocks` is read straight from a GGUF tensor's bytes (:func:`blocks_from_raw`),
without dequantizing, for the types of :data:`~eoc_native.quant.formats.BLOCK_BYTES`; the
kernels of :mod:`eoc_native.quant.kernels` multiply by it as it is.

Block layouts (ggml's, one block per 32 weights of a row):

* Q4_0: float16 scale ``d``, 16 bytes of nibbles; ``w = d * (q - 8)``.
* Q4_1: float16 scale ``d`` and minimum ``m``, 16 bytes of nibbles; ``w = d * q + m``.
* Q8_0: float16 scale ``d``, 32 signed bytes; ``w = d * q``.

In a 4-bit block, byte ``j`` holds weight ``j`` in its low nibble and weight ``j + 16`` in its
high nibble. Q4_0 is kept as Q4_1 with ``m = -8 d`` (exact in float16 too: a power-of-two
multiple). The scales stay the file's float16 (kept as their 16 bits, ``uint16``, which numba
can pass; the kernels widen them as they read them), so a tiled matrix is no larger than the
file's blocks and a decode step reads no more bytes than the file holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError
from eoc_native.memory import zeroed
from eoc_native.quant.formats import BLOCK, BLOCK_BYTES

Array = npt.NDArray[np.float32]

TILES = (512, 256, 128, 64, 32)
"""Output columns per tile, largest first: the first that divides a matrix's width is used."""


def tile_width(n_out: int) -> int:
    """Columns per tile for a matrix ``n_out`` wide (padded to a whole tile if none divides it)."""
    return next((t for t in TILES if n_out % t == 0), 64)


@dataclass(frozen=True)
class QuantBlocks:
    """A matrix of 4-bit (``bits == 4``) or 8-bit quantized blocks, tiled for the kernels.

    The output columns are cut into tiles of ``T`` columns, and each tile's bytes are one
    contiguous run, so a kernel (one task per tile) streams through memory in order:
    ``qs`` is ``(n_tiles, n_blocks, 16, T)`` uint8 nibble pairs (4-bit) or
    ``(n_tiles, n_blocks, 32, T)`` int8 (8-bit); ``d`` and ``m`` are ``(n_tiles, n_blocks, T)``
    float16 scales held as their bits, ``uint16`` (``m`` is ``None`` for 8-bit;
    :meth:`scales` gives them as float32). Columns past ``n_out`` (a last tile's padding) are
    zero. Build one with :meth:`from_columns`.
    """

    bits: int
    qs: npt.NDArray[Any]
    d: npt.NDArray[np.uint16]
    m: npt.NDArray[np.uint16] | None
    n_out: int

    @classmethod
    def from_columns(
        cls, bits: int, qs: npt.NDArray[Any], d: npt.NDArray[Any], m: npt.NDArray[Any] | None
    ) -> QuantBlocks:
        """Tile blocks laid out by column: ``qs`` (n_blocks, 16 or 32, n_out), ``d``/``m``
        (n_blocks, n_out) float16 scales (wider floats are rounded to float16, as a GGUF file
        stores them)."""
        n = int(qs.shape[-1])
        t = tile_width(n)
        nt = -(-n // t)
        pad = nt * t - n

        def tiled(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            if pad:
                a = np.concatenate([a, np.zeros((*a.shape[:-1], pad), a.dtype)], axis=-1)
            lead = a.shape[:-1]
            moved = a.reshape(*lead, nt, t)
            return np.ascontiguousarray(np.moveaxis(moved, -2, 0))

        d16, m16 = _f16_bits(d), None if m is None else _f16_bits(m)
        return cls(bits, tiled(qs), tiled(d16), None if m16 is None else tiled(m16), n)

    def columns(self) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any] | None]:
        """``qs``, ``d``, ``m`` laid out by column again (the inverse of :meth:`from_columns`;
        the scales as float16)."""

        def untiled(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            nt, *lead, t = a.shape
            out = np.moveaxis(a, 0, -2).reshape(*lead, nt * t)
            return np.ascontiguousarray(out[..., : self.n_out])

        d = untiled(self.d).view(np.float16)
        return untiled(self.qs), d, None if self.m is None else untiled(self.m).view(np.float16)

    def scales(self) -> tuple[Array, Array | None]:
        """``d`` and ``m`` (tiled, as stored) widened to float32."""
        d = self.d.view(np.float16).astype(np.float32)
        return d, None if self.m is None else self.m.view(np.float16).astype(np.float32)

    @property
    def n_in(self) -> int:
        return int(self.d.shape[1]) * BLOCK

    @property
    def tile(self) -> int:
        return int(self.d.shape[2])

    @property
    def padded_out(self) -> int:
        return int(self.d.shape[0] * self.d.shape[2])

    @property
    def nbytes(self) -> int:
        return int(self.qs.nbytes + self.d.nbytes + (0 if self.m is None else self.m.nbytes))

    def dense_columns(self, ids: npt.NDArray[np.intp]) -> Array:
        """Output columns ``ids`` of the matrix dequantized, ``(n_in, len(ids))`` float32: a few
        columns read from the tiles, not the whole matrix."""
        tiles, at = ids // self.tile, ids % self.tile
        qs = self.qs[tiles, :, :, at]  # (k, n_blocks, 16 or 32): the picked dims lead
        d = self.d[tiles, :, at].view(np.float16).astype(np.float32)[..., None]
        if self.bits == 4:
            assert self.m is not None
            m = self.m[tiles, :, at].view(np.float16).astype(np.float32)[..., None]
            w = np.concatenate([qs & 15, qs >> 4], axis=2).astype(np.float32) * d + m
        else:
            w = qs.astype(np.float32) * d
        return np.ascontiguousarray(w.reshape(len(ids), -1).T, dtype=np.float32)

    def dense(self) -> Array:
        """The dequantized matrix, ``(n_in, n_out)`` float32 (numpy; the kernels do it faster)."""
        qs, d16, m16 = self.columns()
        nb, n = d16.shape
        d = d16.astype(np.float32)
        if self.bits == 4:
            q = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.float32)
            assert m16 is not None
            w = q * d[:, None, :] + m16.astype(np.float32)[:, None, :]
        else:
            w = qs.astype(np.float32) * d[:, None, :]
        return np.ascontiguousarray(w.reshape(nb * BLOCK, n), dtype=np.float32)


Alloc = Callable[[tuple[int, ...], Any], npt.NDArray[Any]]
"""Where tiled arrays are made: ``alloc(shape, dtype)`` returns a zeroed array (by default
:func:`eoc_native.memory.zeroed`; a model's layout cache hands out its file's pages)."""


def blocks_from_raw(
    raw: npt.NDArray[Any], type_name: str, n_out: int, n_in: int, *, alloc: Alloc = zeroed
) -> QuantBlocks:
    """Unpack a GGUF tensor's bytes (``n_out`` rows of ``n_in`` weights) into :class:`QuantBlocks`
    (the C tiler's arrays made by ``alloc``)."""
    size = BLOCK_BYTES.get(type_name)
    if size is None:
        raise InputError(f"no quantized kernel for GGML type {type_name}")
    if n_in % BLOCK:
        raise InputError(f"a {type_name} row of {n_in} weights is not whole blocks of {BLOCK}")
    nb = n_in // BLOCK
    data = np.ascontiguousarray(raw, dtype=np.uint8)
    if data.size != n_out * nb * size:
        raise InputError(
            f"a {type_name} tensor of {n_out}x{n_in} needs {n_out * nb * size} bytes, "
            f"the file has {data.size}"
        )
    b = data.reshape(n_out, nb, size)
    t = tile_width(n_out)
    if n_out % t:  # a padded last tile: by way of the column layout
        return _from_columns_raw(b, type_name)
    nt = n_out // t
    tile = _c_tiler()
    if tile is not None:  # the C kernels' tiler: one pass over the bytes, on the kernels' threads
        q0 = 4 if type_name == "Q4_1" else 2
        qs = alloc((nt, nb, size - q0, t), np.uint8)  # plain pages (eoc_native.memory)
        d16 = alloc((nt, nb, t), np.uint16)
        m16 = alloc((nt, nb, t), np.uint16) if type_name == "Q4_1" else None
        tile(b, size, q0, 2 if m16 is not None else None, qs, d16, m16)
        if type_name == "Q8_0":
            return QuantBlocks(8, qs.view(np.int8), d16, None, n_out)
        if m16 is None:  # Q4_0: w = d * (q - 8) kept as d * q + m with m = -8 d (exact)
            m16 = _f16_bits(d16.view(np.float16) * -8)
        return QuantBlocks(4, qs, d16, m16, n_out)

    def tiled(lo: int, hi: int) -> npt.NDArray[Any]:
        # bytes [lo, hi) of every block, as (n_tiles, n_blocks, hi - lo, T): one copy
        part = b.reshape(nt, t, nb, size)[:, :, :, lo:hi]  # a view: b is contiguous
        return np.ascontiguousarray(part.transpose(0, 2, 3, 1))

    def f16(lo: int) -> npt.NDArray[np.uint16]:
        bits = np.ascontiguousarray(b[:, :, lo : lo + 2]).view(np.uint16)[:, :, 0]  # (n, nb)
        return np.ascontiguousarray(bits.reshape(nt, t, nb).transpose(0, 2, 1))

    d = f16(0)
    if type_name == "Q8_0":
        return QuantBlocks(8, tiled(2, size).view(np.int8), d, None, n_out)
    if type_name == "Q4_1":
        return QuantBlocks(4, tiled(4, size), d, f16(2), n_out)
    return QuantBlocks(4, tiled(2, size), d, _f16_bits(d.view(np.float16) * -8), n_out)  # Q4_0


def _c_tiler() -> Any:
    """The C kernels' tiler (:func:`eoc_native.quant.ckernels.tile_blocks`) where they run here,
    else ``None`` (numpy tiles, about 6x slower)."""
    from eoc.errors import EocError
    from eoc_native.quant import load_kernels

    try:
        kernels = load_kernels()
    except EocError:
        return None
    return getattr(kernels, "tile_blocks", None)


def _from_columns_raw(b: npt.NDArray[Any], type_name: str) -> QuantBlocks:
    """:func:`blocks_from_raw` for a width no tile divides (the last tile is padded)."""

    def f16(lo: int) -> npt.NDArray[np.float16]:
        return np.ascontiguousarray(
            np.ascontiguousarray(b[:, :, lo : lo + 2]).view(np.float16)[:, :, 0].T
        )

    d = f16(0)
    if type_name == "Q8_0":
        qs = np.ascontiguousarray(b[:, :, 2:].view(np.int8).transpose(1, 2, 0))
        return QuantBlocks.from_columns(8, qs, d, None)
    if type_name == "Q4_1":
        m = np.ascontiguousarray(f16(2))
        qs = np.ascontiguousarray(b[:, :, 4:].transpose(1, 2, 0))
    else:  # Q4_0
        m = d * np.float16(-8)
        qs = np.ascontiguousarray(b[:, :, 2:].transpose(1, 2, 0))
    return QuantBlocks.from_columns(4, qs, d, m)


def _f16_bits(scales: npt.NDArray[Any]) -> npt.NDArray[np.uint16]:
    """Scales as float16 bits (uint16); float16 input is kept exactly, wider floats rounded."""
    if scales.dtype == np.uint16:
        return np.ascontiguousarray(scales)
    return np.ascontiguousarray(scales, dtype=np.float16).view(np.uint16)


def concat_blocks(parts: Sequence[QuantBlocks]) -> QuantBlocks:
    """Matrices of the same input size and type side by side (more output columns)."""
    first = parts[0]
    if any(p.bits != first.bits or p.n_in != first.n_in for p in parts):
        raise InputError("only blocks of one type and input size can be joined")
    cols = [p.columns() for p in parts]
    m = None if first.m is None else np.concatenate([c[2] for c in cols if c[2] is not None], 1)
    return QuantBlocks.from_columns(
        first.bits,
        np.concatenate([c[0] for c in cols], axis=-1),
        np.concatenate([c[1] for c in cols], axis=1),
        m,
    )


__all__ = [
    "TILES",
    "QuantBlocks",
    "blocks_from_raw",
    "concat_blocks",
    "tile_width",
]
