"""Large arrays on plain pages.

numpy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every array of
4 MiB or more. Where the kernel's THP defrag setting is ``madvise`` (a common default), the first
touch of such an array may stall while the kernel compacts memory into a 2 MiB page: on this
project's 2-core VM the first prompt of a model answer took 0.2-0.8 s instead of 0.1 s in one run
of two to eight, the time spent faulting in the KV cache. The model's large buffers (the KV cache,
the tiled weights) are therefore taken from an anonymous private map, zeroed by the kernel and on
ordinary pages: no stall, and pages never touched (the KV cache past the current position) never
count in the process's memory. llama.cpp's weights, mapped from the model file, are on ordinary
pages too.
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np
import numpy.typing as npt

MAPPED_FROM = 1 << 20
"""Arrays of this many bytes or more are mapped; smaller ones are numpy's own (numpy advises
huge pages from 4 MiB on)."""


def zeroed(shape: tuple[int, ...] | int, dtype: Any) -> npt.NDArray[Any]:
    """A writable, zero-filled C-contiguous array on ordinary (not huge) pages."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    kind = np.dtype(dtype)
    count = 1
    for d in dims:
        count *= int(d)
    if count == 0 or count * kind.itemsize < MAPPED_FROM:
        return np.zeros(dims, kind)
    buf = mmap.mmap(-1, count * kind.itemsize, flags=mmap.MAP_PRIVATE)  # -1: anonymous
    return np.frombuffer(buf, kind, count).reshape(dims)


__all__ = ["MAPPED_FROM", "zeroed"]
