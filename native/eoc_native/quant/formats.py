"""The GGUF tensor types eoc reads: one table of their block formats, and (de)quantizing them.

:data:`FORMATS` is the one table: per GGML type, how many weights a block holds, how many bytes
it takes, how a weight is dequantized from it, and whether eoc's compiled kernels
(:mod:`eoc_native.quant.kernels`) run on the blocks as stored (:data:`BLOCK_BYTES`), or on the blocks they are converted into as a model loads (the K-quants:
:data:`CONVERTED`, :mod:`eoc_native.quant.kquants`); every other type is dequantized to float32
by the ``gguf`` package, the llama.cpp project's own (``gguf.quants``), which :func:`dequantize`
and :func:`quantize` wrap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError
from eoc_native import require

Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class BlockFormat:
    """One GGML tensor type as stored in a GGUF file."""

    name: str
    code: int
    """The type's number in a GGUF file's tensor table (GGML's ``ggml_type``)."""
    block: int
    """Weights per block (1 for the plain float types)."""
    nbytes: int
    """Bytes per block."""
    dequantized: str
    """How a weight is read back: ``d`` is a block's float16 scale, ``m`` its float16 minimum,
    ``q`` the weight's unsigned (or, for Q8_0, signed) integer."""
    kernels: bool = False
    """Whether the compiled kernels run on these blocks as stored (:mod:`eoc_native.quant.blocks`)."""
    converted: str | None = None
    """The kernel type these blocks are rewritten into as a model loads
    (:mod:`eoc_native.quant.kquants`), for a type the kernels do not run on as stored."""


FORMATS: dict[str, BlockFormat] = {
    f.name: f
    for f in (
        BlockFormat("F32", 0, 1, 4, "w = the float32"),
        BlockFormat("F16", 1, 1, 2, "w = the float16"),
        BlockFormat("BF16", 30, 1, 2, "w = the bfloat16 (a float32's top half)"),
        BlockFormat("Q4_0", 2, 32, 18, "w = d * (q - 8); d, 16 bytes of 4-bit q", kernels=True),
        BlockFormat("Q4_1", 3, 32, 20, "w = d * q + m; d, m, 16 bytes of 4-bit q", kernels=True),
        BlockFormat("Q5_0", 6, 32, 22, "w = d * (q - 16); d, 4 bytes of 5th bits, 16 of nibbles"),
        BlockFormat("Q5_1", 7, 32, 24, "w = d * q + m; d, m, 4 bytes of 5th bits, 16 of nibbles"),
        BlockFormat("Q8_0", 8, 32, 34, "w = d * q; d, 32 signed bytes of q", kernels=True),
        BlockFormat(
            "Q4_K",
            12,
            256,
            144,
            "w = d * sc * q - dmin * mn per 32; d, dmin, 12 bytes of 6-bit sc and mn, 128 of q",
            converted="Q4_1",
        ),
        BlockFormat(
            "Q6_K",
            14,
            256,
            210,
            "w = d * sc * (q - 32) per 16; 128 bytes of low nibbles, 64 of high pairs, 16 sc, d",
            converted="Q8_0",
        ),
    )
}
"""Every tensor type this runner reads; each has a round-trip test in tests/native/test_llm_gguf.py."""

BY_CODE: dict[int, BlockFormat] = {f.code: f for f in FORMATS.values()}
""":data:`FORMATS` by type number: a file holding only these types is read without the ``gguf``
package (importing it takes about 45 ms a start)."""

SUPPORTED_TYPES = tuple(FORMATS)
"""The names of :data:`FORMATS`: the tensor types this runner dequantizes."""

BLOCK = 32
"""Weights per block of every quantized type the kernels run on."""

BLOCK_BYTES = {f.name: f.nbytes for f in FORMATS.values() if f.kernels}
"""Bytes per 32-weight block of each type the quantized kernels run on as stored."""

CONVERTED = {f.name: f.converted for f in FORMATS.values() if f.converted is not None}
"""Each type rewritten at load into a kernel type (:mod:`eoc_native.quant.kquants`): that type."""


def _gguf() -> Any:
    return require("gguf", package="gguf", why="reading GGUF model files")


def dequantize(data: npt.NDArray[Any], type_name: str) -> Array:
    """Dequantize raw GGUF tensor data of GGML type ``type_name`` to float32.

    Args:
        data: the tensor as the reader stores it: bytes (uint8) per row for block types,
            float16/float32 elements for the plain float types.
        type_name: a GGML type name from :data:`SUPPORTED_TYPES`.
    """
    if type_name not in SUPPORTED_TYPES:
        raise InputError(f"GGML tensor type {type_name} is not supported")
    if type_name in ("F32", "F16"):  # plain floats: widened here, without importing gguf
        return np.asarray(data, dtype=np.float32)
    if type_name == "BF16":  # a bfloat16 is a float32's top 16 bits
        bits = np.ascontiguousarray(data, dtype=np.uint8).view(np.uint16).astype(np.uint32)
        return np.asarray((bits << 16).view(np.float32))
    gguf = _gguf()
    qtype = gguf.GGMLQuantizationType[type_name]
    out = gguf.quants.dequantize(data, qtype)
    return np.asarray(out, dtype=np.float32)


def quantize(values: npt.NDArray[np.float32], type_name: str) -> npt.NDArray[Any]:
    """Quantize float32 ``values`` (last axis a multiple of the block size) to ``type_name``."""
    gguf = _gguf()
    return np.asarray(gguf.quants.quantize(values, gguf.GGMLQuantizationType[type_name]))


__all__ = [
    "BLOCK",
    "BLOCK_BYTES",
    "BY_CODE",
    "CONVERTED",
    "FORMATS",
    "SUPPORTED_TYPES",
    "BlockFormat",
    "dequantize",
    "quantize",
]
