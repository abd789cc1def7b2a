"""A model's weight matrices, kept the way the file stores them until a backend prepares them.

A :class:`Weight` is the matrix ``W`` of a linear layer used as ``x @ W``: ``n_in`` rows by
``n_out`` columns. It holds either the file's quantized blocks
(:class:`~eoc_native.quant.blocks.QuantBlocks`, for the types of
:data:`~eoc_native.quant.formats.BLOCK_BYTES`, read straight from the GGUF bytes without
dequantizing) or a dense float32 array (every other type, dequantized by the ``gguf`` package).
Each backend prepares the form it runs on once
(:meth:`eoc_native.backends.base.WeightBackend.load_weight`): numpy, MLX and CUDA a dense float32
copy, the quantized CPU kernels the blocks themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError
from eoc_native.memory import zeroed
from eoc_native.quant.blocks import Alloc, QuantBlocks, blocks_from_raw, concat_blocks
from eoc_native.quant.formats import BLOCK_BYTES, CONVERTED, dequantize
from eoc_native.quant.kquants import q8_0_from_weights, to_kernel_type

if TYPE_CHECKING:
    from eoc_native.llm.gguf import GGUFFile

Array = npt.NDArray[np.float32]


class Weight:
    """The matrix of one linear layer, for ``x @ W`` (``n_in`` x ``n_out``).

    Exactly one of ``quant`` and ``dense_f32`` is set. :meth:`dense` gives float32 either way.
    """

    __slots__ = ("_dense", "name", "quant")

    def __init__(
        self, name: str, *, quant: QuantBlocks | None = None, dense_f32: Array | None = None
    ) -> None:
        if (quant is None) == (dense_f32 is None):
            raise InputError("a Weight holds either quantized blocks or a dense matrix")
        if dense_f32 is not None and (dense_f32.ndim != 2 or dense_f32.dtype != np.float32):
            raise InputError("a dense Weight is a 2-D float32 array (n_in, n_out)")
        self.name = name
        self.quant = quant
        self._dense = dense_f32

    @property
    def shape(self) -> tuple[int, int]:
        if self.quant is not None:
            return (self.quant.n_in, self.quant.n_out)
        assert self._dense is not None
        return (int(self._dense.shape[0]), int(self._dense.shape[1]))

    @property
    def kind(self) -> str:
        """``"q4"``, ``"q8"`` or ``"f32"``."""
        return "f32" if self.quant is None else f"q{self.quant.bits}"

    @property
    def nbytes(self) -> int:
        if self.quant is not None:
            return self.quant.nbytes
        assert self._dense is not None
        return int(self._dense.nbytes)

    def dense(self) -> Array:
        """``W`` as a contiguous float32 ``(n_in, n_out)`` array (a new one if quantized)."""
        if self.quant is not None:
            return self.quant.dense()
        assert self._dense is not None
        return self._dense

    def columns(self, ids: npt.NDArray[np.intp]) -> Array:
        """Output columns ``ids`` of ``W`` as float32 ``(n_in, len(ids))`` (only they are read)."""
        if self.quant is not None:
            return self.quant.dense_columns(ids)
        assert self._dense is not None
        return np.ascontiguousarray(self._dense[:, ids])

    def __repr__(self) -> str:
        return f"Weight({self.name!r}, {self.shape[0]}x{self.shape[1]}, {self.kind})"


def read_weight(
    gf: GGUFFile,
    *names: str,
    alloc: Alloc = zeroed,
    row_orders: Mapping[str, npt.NDArray[np.intp]] | None = None,
) -> Weight:
    """The linear layer(s) ``names`` of a GGUF file as one :class:`Weight`, side by side.

    GGUF stores a layer as ``(n_out, n_in)``; the weight is ``(n_in, n_out)`` for ``x @ W``.
    Tensors of one quantized type keep their blocks (tiled into arrays ``alloc`` makes: see
    :data:`eoc_native.quant.blocks.Alloc`); K-quants are first rewritten into the kernel type
    :data:`~eoc_native.quant.formats.CONVERTED` names (all of them into Q8_0 where they would
    otherwise differ); any other mix is dequantized. ``row_orders`` takes a tensor's rows (its
    outputs) in another order: ``row_orders[name][i]`` is the file's row that becomes row ``i``.
    """
    raws = _converted([_reordered(gf, n, row_orders) for n in names])
    types = {t for _, t, _ in raws}
    label = "+".join(names)
    if len(types) == 1 and next(iter(types)) in BLOCK_BYTES:
        for n, (_, _, shape) in zip(names, raws, strict=True):
            if len(shape) != 2:
                raise InputError(f"{gf.path}: tensor {n} is not a matrix (shape {shape})")
        type_name, n_in = raws[0][1], raws[0][2][1]
        if all(shape[1] == n_in for _, _, shape in raws):
            # one matrix's rows after another's are the outputs side by side: tiled once
            rows = [
                np.asarray(data, dtype=np.uint8).reshape(shape[0], -1) for data, _, shape in raws
            ]
            joined = rows[0] if len(rows) == 1 else np.concatenate(rows)
            n_out = sum(shape[0] for _, _, shape in raws)
            blocks = blocks_from_raw(joined, type_name, n_out, n_in, alloc=alloc)
            return Weight(label, quant=blocks)
        parts = [blocks_from_raw(data, t, shape[0], shape[1]) for data, t, shape in raws]
        return Weight(label, quant=concat_blocks(parts))
    orders = row_orders or {}
    dense = np.concatenate(
        [gf.tensor(n) if n not in orders else gf.tensor(n)[orders[n]] for n in names], axis=0
    )
    return Weight(label, dense_f32=np.ascontiguousarray(dense.T, dtype=np.float32))


Raw = tuple[npt.NDArray[Any], str, tuple[int, ...]]
"""A tensor as :meth:`GGUFFile.raw` gives it: its bytes (or elements), type name, numpy shape."""


def _reordered(
    gf: GGUFFile, name: str, row_orders: Mapping[str, npt.NDArray[np.intp]] | None
) -> Raw:
    data, type_name, shape = gf.raw(name)
    order = None if row_orders is None else row_orders.get(name)
    if order is None:
        return data, type_name, shape
    if len(shape) != 2 or sorted(order.tolist()) != list(range(shape[0])):
        raise InputError(f"{gf.path}: tensor {name} {shape} cannot take its rows in that order")
    return np.asarray(data).reshape(shape[0], -1)[order], type_name, shape


def _converted(raws: list[Raw]) -> list[Raw]:
    """``raws`` with any K-quant rewritten into a kernel type (:mod:`eoc_native.quant.kquants`):
    each into its own where they then agree, else every one into Q8_0; unchanged where none is a
    K-quant, or one is a type the kernels do not run on (the layer is then dequantized)."""
    types = {t for _, t, _ in raws}
    if not types & CONVERTED.keys():
        return raws
    targets = {CONVERTED.get(t, t) for t in types}
    if not targets <= BLOCK_BYTES.keys() or any(len(shape) != 2 for _, _, shape in raws):
        return raws
    if len(targets) == 1:
        out = []
        for data, t, shape in raws:
            rows = np.asarray(data).reshape(shape[0], -1)
            out.append((*to_kernel_type(rows, t), shape) if t in CONVERTED else (rows, t, shape))
        return out
    # e.g. a Q4_K q next to a Q6_K v: one type for the joined matrix, the one that loses least
    return [
        (q8_0_from_weights(_dense(data, t, shape)), "Q8_0", shape)
        if t != "Q8_0"
        else (data, t, shape)
        for data, t, shape in raws
    ]


def _dense(data: npt.NDArray[Any], type_name: str, shape: tuple[int, ...]) -> Array:
    """A tensor's data dequantized to float32 in its numpy ``shape``."""
    return dequantize(np.asarray(data), type_name).reshape(shape)


__all__ = ["Weight", "read_weight"]
