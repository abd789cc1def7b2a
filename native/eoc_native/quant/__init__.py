"""Quantized weights: the GGUF block formats and the compiled kernels that run on them.

* :mod:`eoc_native.quant.formats`: the one table of the tensor types eoc reads (block size,
  bytes per block, how a weight is dequantized), and (de)quantizing through ``gguf.quants``;
* :mod:`eoc_native.quant.blocks`: 4-bit and 8-bit matrices kept as the file's blocks, tiled for
  the kernels (:class:`~eoc_native.quant.blocks.QuantBlocks`);
* :mod:`eoc_native.quant.ckernels`: the same kernels in C (``ckernels.c``), compiled once with
  the machine's C compiler (:mod:`eoc_native.quant.cbuild`) and called through ctypes;
* :mod:`eoc_native.quant.kernels`: the same kernels in numba, where no C compiler builds them.

:func:`load_kernels` picks one (``$EOC_KERNELS``: ``c``, ``numba``, or unset for C where it builds).

This package sits below both :mod:`eoc_native.backends` (the ``cpu-quant`` backend runs the
kernels) and :mod:`eoc_native.llm` (the model reads its weights into blocks) and imports neither
(tests/test_layering.py checks). Importing it loads no third-party module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

from eoc.errors import ConfigError, MissingExtra
from eoc_native import require

ENV = "EOC_KERNELS"
"""``c`` or ``numba`` picks the kernels; unset, C where a C compiler builds them, else numba."""
_CHOICES = ("", "c", "numba")
_c_refused: str | None = None  # why the C kernels could not be built, once per process


def _choice() -> str:
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in _CHOICES:
        raise ConfigError(f"{ENV} must be c or numba (or unset), not {choice!r}")
    return choice


def load_kernels(progress: Callable[[str], None] | None = None) -> ModuleType:
    """The kernels: :mod:`~eoc_native.quant.ckernels` (C, compiled on the first run, telling
    ``progress`` first) or :mod:`~eoc_native.quant.kernels` (numba compiles each on its first
    call), as :data:`ENV` says.

    Raises:
        MissingExtra: neither can run (no C compiler and no numba, or the one asked for).
        ConfigError: :data:`ENV` names neither.
    """
    global _c_refused
    choice = _choice()
    if choice in ("", "c") and _c_refused is None:
        from eoc_native.quant import ckernels

        try:
            ckernels.library(progress)
        except MissingExtra as exc:
            _c_refused = exc.reason
        else:
            return ckernels
    if choice == "c":
        raise MissingExtra(f"{ENV}=c, and {_c_refused}")
    require("numba", why="the quantized CPU kernels (no C compiler built eoc's C kernels)")
    from eoc_native.quant import kernels

    return kernels


def kernels_cached() -> bool:
    """Whether the kernels are compiled already (else the first run compiles them: about a
    second in C, about 5 s in numba on a small machine). ``True`` when it cannot tell."""
    choice = _choice()
    if choice in ("", "c") and _c_refused is None:
        from eoc_native.quant import cbuild

        if cbuild.compiler() is not None:
            return cbuild.built() is not None
    kernels = load_kernels()
    try:
        index = kernels.q4_matvec._cache._cache_file._index_path
    except AttributeError:  # another numba: its cache is laid out otherwise
        return True
    return bool(os.path.exists(index))


__all__ = ["ENV", "kernels_cached", "load_kernels"]
