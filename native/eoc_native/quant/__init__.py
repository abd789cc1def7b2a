"""Quantized weights: the GGUF block formats and the compiled kernels that run on them.

* :mod:`eoc_native.quant.formats`: the one table of the tensor types eoc reads (block size,
  bytes per block, how a weight is dequantized), and (de)quantizing through ``gguf.quants``;
* :mod:`eoc_native.quant.blocks`: 4-bit and 8-bit matrices kept as the file's blocks, tiled for
  the kernels (:class:`~eoc_native.quant.blocks.QuantBlocks`);
* :mod:`eoc_native.quant.kernels`: the numba kernels, loaded by :func:`load_kernels`.

This package sits below both :mod:`eoc_native.backends` (the ``cpu-quant`` backend runs the
kernels) and :mod:`eoc_native.llm` (the model reads its weights into blocks) and imports neither
(tests/test_layering.py checks). Importing it loads no third-party module.
"""

from __future__ import annotations

import os
from types import ModuleType

from eoc_native import require


def load_kernels() -> ModuleType:
    """The compiled kernels (:mod:`eoc_native.quant.kernels`); numba compiles each on its first
    call.

    Raises:
        MissingExtra: numba is not installed.
    """
    require("numba", why="the quantized CPU kernels")
    from eoc_native.quant import kernels

    return kernels


def kernels_cached() -> bool:
    """Whether numba's cache holds the decode kernel already (else the first forward compiles
    the kernels, about 5 s on a small machine). ``True`` when it cannot tell: nothing is said."""
    kernels = load_kernels()
    try:
        index = kernels.q4_matvec._cache._cache_file._index_path
    except AttributeError:  # another numba: its cache is laid out otherwise
        return True
    return bool(os.path.exists(index))


__all__ = ["kernels_cached", "load_kernels"]
