"""The model's quantized weights in the kernels' tiled layout, kept on disk in one file and
mapped on later starts, so a model loads without tiling its blocks again.

Tiling SmolLM2-135M's 4-bit blocks takes about 0.06 s a start with the C kernels (0.3-0.6 s in
numpy, for numba's): most of a warm start's model load. The first load writes every tiled matrix
into one file, ``$EOC_CACHE_DIR/layouts/<model>-<key>.layout`` (default ``~/.cache/eoc``), named
for the model file (its resolved path, size, modification time and the SHA-256 of its first MiB)
and for this layout's version; later loads map that file once (copy-on-write, never written, so
the kernels see the writable arrays they take) and check each matrix's CRC-32 as they take it:
about 15 ms for SmolLM2's 66 MB, the pages left to the operating system's file cache. (Version 2
kept ``.npy`` files a matrix, about 400 files whose opening cost more than the C kernels' tiling.)

The file: ``EOCLAYT`` and the version byte, the index's length (8 bytes, little-endian), the
index (JSON: each matrix's label, bits, width, and per array its dtype, shape, offset, length and
CRC-32), then the arrays, each at a 64-byte boundary.

The cache only ever saves time. A file that cannot be written, is missing, cut off or damaged
(a header, an index or an array's bytes that do not check), or arrays of the wrong type or shape:
the matrix is tiled from the model file as without a cache, and the file is written again whole
when it can be.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from eoc_native import cache_dir
from eoc_native.quant.blocks import QuantBlocks

LAYOUT_VERSION = 3
"""Bumped whenever the tiled layout or the file changes, so an older cache is never read (2: the
scales kept as float16 bits; 3: one file, each array with its CRC-32)."""
MAGIC = b"EOCLAYT" + bytes([LAYOUT_VERSION])
MAX_INDEX_BYTES = 4 << 20
"""Largest index read (a model of thousands of matrices needs well under this)."""
ALIGN = 64
_DTYPES = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "float32": np.float32}
"""The array types an index may name (what a matrix takes is :func:`_checked`'s to say)."""

cache_root = cache_dir  # eoc's cache folder (:func:`eoc_native.cache_dir`)


class LayoutCache:
    """Tiled weights of one model file, in ``root/layouts/<model>-<key>.layout``.

    :meth:`get` serves a matrix from the file (mapped on the first call); :meth:`put` keeps one
    tiled on this load; :meth:`save` writes the file whole when anything was put.
    ``hits`` counts matrices served from the file, ``writes`` the matrices written by
    :meth:`save`.
    """

    def __init__(self, model: Path, root: Path | None = None) -> None:
        model = Path(model).resolve()
        st = model.stat()
        with open(model, "rb") as f:
            head = hashlib.sha256(f.read(1 << 20)).hexdigest()
        key = f"{model}|{st.st_size}|{st.st_mtime_ns}|{head}|layout {LAYOUT_VERSION}"
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.path = (root or cache_root()) / "layouts" / f"{model.stem}-{digest}.layout"
        self.hits = 0
        self.writes = 0
        self._index: dict[str, Any] | None = None  # label -> entry; read on the first get
        self._map: mmap.mmap | None = None
        self._kept: dict[str, QuantBlocks] = {}  # every matrix of this load, served or put
        self._put = False

    def get(self, label: str) -> QuantBlocks | None:
        """The tiled matrix ``label`` from the file, mapped; ``None`` when the file does not
        hold it whole and right."""
        if self._index is None:
            self._index = self._read_index()
        entry = self._index.get(label)
        if entry is None or self._map is None:
            return None
        try:
            blocks = _checked(entry, self._arrays(entry))
        except (ValueError, KeyError, TypeError):
            blocks = None
        if blocks is not None:
            self.hits += 1
            self._kept[label] = blocks
        return blocks

    def put(self, label: str, blocks: QuantBlocks) -> None:
        """Keep ``blocks`` (tiled on this load) for :meth:`save`."""
        self._kept[label] = blocks
        self._put = True

    def save(self) -> None:
        """Write every matrix of this load into a new file, when any was tiled on it (written
        beside, then renamed over the old one: a cut-off write is never read). A failure only
        costs time."""
        if not self._put:
            return
        entries, arrays, offset = [], [], 0
        for label, blocks in self._kept.items():
            parts = {"qs": blocks.qs, "d": blocks.d}
            if blocks.m is not None:
                parts["m"] = blocks.m
            described = {}
            for name, array in parts.items():
                data = np.ascontiguousarray(array)
                described[name] = [
                    str(data.dtype),
                    list(data.shape),
                    offset,
                    data.nbytes,
                    _crc(data),
                ]
                arrays.append((offset, data))
                offset += -(-data.nbytes // ALIGN) * ALIGN
            entries.append(
                {"label": label, "bits": blocks.bits, "n_out": blocks.n_out, "parts": described}
            )
        index = json.dumps({"version": LAYOUT_VERSION, "entries": entries}).encode()
        start = -(-(len(MAGIC) + 8 + len(index)) // ALIGN) * ALIGN  # offsets count from here
        part = self.path.with_name(self.path.name + f".{os.getpid()}.part")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(part, "wb") as f:
                f.write(MAGIC + len(index).to_bytes(8, "little") + index)
                for at, data in arrays:
                    f.seek(start + at)
                    f.write(data.data.cast("B"))
                f.truncate(start + offset)
            part.replace(self.path)
        except OSError:
            _remove(part)
            return  # a read-only or full disk: the next start tiles again
        self.writes += len(entries)
        self._put = False

    def _read_index(self) -> dict[str, Any]:
        """The file's matrices by label (and the file mapped); empty when there is no file or
        its header or index does not check."""
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                head = f.read(len(MAGIC) + 8)
                if len(head) != len(MAGIC) + 8 or head[: len(MAGIC)] != MAGIC:
                    return {}
                n = int.from_bytes(head[len(MAGIC) :], "little")
                if n > min(MAX_INDEX_BYTES, size):
                    return {}
                index = json.loads(f.read(n))
                if size:
                    self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError):
            return {}
        self._start = -(-(len(MAGIC) + 8 + n) // ALIGN) * ALIGN
        self._size = size
        if not isinstance(index, dict) or index.get("version") != LAYOUT_VERSION:
            return {}
        entries = index.get("entries")
        if not isinstance(entries, list):
            return {}
        return {e["label"]: e for e in entries if isinstance(e, dict) and "label" in e}

    def _arrays(self, entry: dict[str, Any]) -> dict[str, Any]:
        """An entry's arrays over the map, each checked against its place in the file and its
        CRC-32 (``ValueError`` when one does not check)."""
        assert self._map is not None
        out = {}
        for name, (dtype, shape, offset, nbytes, crc) in entry["parts"].items():
            kind = np.dtype(_DTYPES[dtype])
            dims = tuple(int(d) for d in shape)
            count = int(np.prod(dims, dtype=np.int64)) if dims else 1
            if (
                min(dims, default=0) < 0
                or not isinstance(offset, int)
                or offset < 0
                or offset % ALIGN
                or nbytes != count * kind.itemsize
                or self._start + offset + nbytes > self._size
            ):
                raise ValueError(f"{name}: not where the index says")
            data = np.frombuffer(self._map, kind, count, self._start + offset).reshape(dims)
            if _crc(data) != crc:
                raise ValueError(f"{name}: its bytes do not check")
            out[name] = data
        return out


def _crc(data: Any) -> int:
    """The CRC-32 of a C-contiguous array's bytes (zlib's: about 6 GB/s here)."""
    return zlib.crc32(data.data.cast("B"))


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # its folder is gone or is no folder: nothing was left there
        pass


def _checked(meta: dict[str, Any], arrays: dict[str, Any]) -> QuantBlocks | None:
    """The blocks when every array has the type and shape the description says and the shapes
    fit together as :class:`QuantBlocks` needs; else ``None``."""
    if meta.get("bits") not in (4, 8):
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
