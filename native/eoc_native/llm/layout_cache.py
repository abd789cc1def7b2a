"""The model's quantized weights in the kernels' tiled layout, kept on disk and mapped on later
starts, so a model loads without tiling its blocks again.

Used with numba's kernels only: tiling SmolLM2-135M's 4-bit blocks in numpy
(:func:`eoc_native.quant.blocks.blocks_from_raw`) takes about 0.3-0.6 s a start, most of a warm
start's load, while the C kernels tile them in about 0.1 s, less than mapping the cache and with
no first run writing 108 MB (:func:`eoc_native.llm.generate.load` leaves the cache out then). The first load writes each tiled matrix as ``.npy``
files under ``$EOC_CACHE_DIR/layouts/`` (default ``~/.cache/eoc``), in a folder named for the
model file (its resolved path, size, modification time and the SHA-256 of its first MiB) and for
this layout's version; later loads map them (``numpy.load(mmap_mode="c")``: copy-on-write, never
written, so the kernels see the array type they were compiled for), which costs no copy and
leaves the pages to the operating system's file cache.

The cache only ever saves time. A folder that cannot be written, a missing, cut-off or damaged
file, or arrays of the wrong type or shape: the matrix is tiled from the model file as without a
cache (and written again when it can be). Like numba's cache of compiled kernels beside it, it
trusts files in the user's own cache folder to hold what eoc wrote there.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from eoc_native import cache_dir
from eoc_native.quant.blocks import QuantBlocks

LAYOUT_VERSION = 2
"""Bumped whenever the tiled layout changes, so an older cache is never read (2: the scales are
kept as float16 bits)."""
MAX_META_BYTES = 4096


cache_root = cache_dir  # eoc's cache folder (:func:`eoc_native.cache_dir`)


class LayoutCache:
    """Tiled weights of one model file, in ``root/layouts/<model>-<key>/``."""

    def __init__(self, model: Path, root: Path | None = None) -> None:
        model = Path(model).resolve()
        st = model.stat()
        with open(model, "rb") as f:
            head = hashlib.sha256(f.read(1 << 20)).hexdigest()
        key = f"{model}|{st.st_size}|{st.st_mtime_ns}|{head}|layout {LAYOUT_VERSION}"
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.folder = (root or cache_root()) / "layouts" / f"{model.stem}-{digest}"
        self.hits = 0
        self.writes = 0

    def _path(self, label: str, part: str) -> Path:
        name = hashlib.sha256(label.encode()).hexdigest()[:32]
        return self.folder / f"{name}.{part}"

    def get(self, label: str) -> QuantBlocks | None:
        """The tiled matrix ``label`` as written by :meth:`put`, mapped; ``None`` when the cache
        does not hold it whole and right."""
        try:
            meta_path = self._path(label, "json")
            with open(meta_path, "rb") as f:
                text = f.read(MAX_META_BYTES + 1)
            if len(text) > MAX_META_BYTES:
                return None
            meta = json.loads(text)
            if not isinstance(meta, dict) or meta.get("label") != label:
                return None
            arrays = {
                # copy-on-write, never written: typed like the arrays the kernels were compiled
                # for (a read-only one would make numba compile them again)
                part: np.asarray(np.load(self._path(label, f"{part}.npy"), mmap_mode="c"))
                for part in meta["parts"]
            }
            blocks = _checked(meta, arrays)
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            return None  # absent, cut off or damaged: tiled again from the model file
        if blocks is not None:
            self.hits += 1
        return blocks

    def put(self, label: str, blocks: QuantBlocks) -> None:
        """Keep ``blocks`` for the next start (each file written whole, then renamed; the
        description last, so a cut-off write is never read). A failure only costs time."""
        parts = {"qs": blocks.qs, "d": blocks.d}
        if blocks.m is not None:
            parts["m"] = blocks.m
        meta = {
            "label": label,
            "version": LAYOUT_VERSION,
            "bits": blocks.bits,
            "n_out": blocks.n_out,
            "parts": {p: [str(a.dtype), list(a.shape)] for p, a in parts.items()},
        }
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for part, array in parts.items():
                _write_atomic(self._path(label, f"{part}.npy"), lambda f, a=array: np.save(f, a))
            text = json.dumps(meta).encode()
            _write_atomic(self._path(label, "json"), lambda f: f.write(text))
        except OSError:
            return  # a read-only or full disk: the next start tiles again
        self.writes += 1


def _write_atomic(path: Path, write: Any) -> None:
    part = path.with_name(path.name + f".{os.getpid()}.part")
    try:
        with open(part, "wb") as f:
            write(f)
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)


def _checked(meta: dict[str, Any], arrays: dict[str, Any]) -> QuantBlocks | None:
    """The blocks when every array has the type and shape the description says and the shapes
    fit together as :class:`QuantBlocks` needs; else ``None``."""
    if meta.get("version") != LAYOUT_VERSION or meta.get("bits") not in (4, 8):
        return None
    for part, array in arrays.items():
        dtype, shape = meta["parts"][part]
        if str(array.dtype) != dtype or list(array.shape) != shape:
            return None
    bits, qs, d, m = meta["bits"], arrays.get("qs"), arrays.get("d"), arrays.get("m")
    if qs is None or d is None or qs.ndim != 4 or d.ndim != 3:
        return None
    nt, nb, rows, t = qs.shape
    if d.shape != (nt, nb, t) or rows != (16 if bits == 4 else 32):
        return None
    if (bits == 4) != (m is not None) or (
        m is not None and (m.shape, m.dtype) != (d.shape, d.dtype)
    ):
        return None
    if qs.dtype != (np.uint8 if bits == 4 else np.int8) or d.dtype != np.uint16:
        return None
    n_out = meta.get("n_out")
    if not isinstance(n_out, int) or not 0 < n_out <= nt * t:
        return None
    return QuantBlocks(bits, qs, d, m, n_out)


__all__ = ["LAYOUT_VERSION", "LayoutCache", "cache_root"]
