"""The model's quantized weights in the kernels' tiled layout, kept on disk in one file and
mapped on later starts, so a model loads without tiling its blocks again.

Tiling SmolLM2-135M's 4-bit blocks takes about 0.06 s a start with the C kernels (0.3-0.6 s in
numpy, for numba's): most of a warm start's model load. The first load tiles every matrix straight
into the pages of one file, ``$EOC_CACHE_DIR/layouts/<model>-<key>.layout`` (default
``~/.cache/eoc``), named for the model file (its resolved path, size, modification time and the
SHA-256 of its first MiB) and for this layout's version: the tiled bytes go once into the file
cache, not into memory and then through a write (about 20 ms less for SmolLM2's 96 MB, and half
the fresh pages). Later loads map that file once (copy-on-write, never written, so the kernels
see the writable arrays they take) and check each matrix's CRC-32 as they take it: about 15 ms,
the pages left to the operating system's file cache. (Version 2 kept ``.npy`` files a matrix,
about 400 files whose opening cost more than the C kernels' tiling.)

The file: the arrays, each at a page boundary; then the index (JSON: each matrix's label, bits,
width, and per array its dtype, shape, offset, length and CRC-32), its length (8 bytes,
little-endian) and ``EOCLAYT`` with the version byte, last, so that a file cut short is never
read.

The cache only ever saves time. A file that cannot be written, is missing, cut off or damaged
(a header, an index or an array's bytes that do not check), or arrays of the wrong type or shape:
the matrix is tiled from the model file as without a cache, and the file is written again whole
when it can be.
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc_native import cache_dir
from eoc_native.memory import zeroed
from eoc_native.quant.blocks import QuantBlocks

LAYOUT_VERSION = 4
"""Bumped whenever the tiled layout or the file changes, so an older cache is never read (2: the
scales kept as float16 bits; 3: one file, each array with its CRC-32; 4: the index last)."""
MAGIC = b"EOCLAYT" + bytes([LAYOUT_VERSION])
PAGE = 4096
"""Arrays start at page boundaries: each is mapped on its own while the file is written."""
MAX_INDEX_BYTES = 4 << 20
"""Largest index read (a model of thousands of matrices needs well under this)."""
ALIGN = 64
"""What an offset in the index must be a multiple of (every array is at a page boundary)."""
_DTYPES = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "float32": np.float32}
"""The array types an index may name (what a matrix takes is :func:`_checked`'s to say)."""

cache_root = cache_dir  # eoc's cache folder (:func:`eoc_native.cache_dir`)


class LayoutCache:
    """Tiled weights of one model file, in ``root/layouts/<model>-<key>.layout``.

    :meth:`get` serves a matrix from the file (mapped on the first call). On a load that tiles,
    :meth:`alloc` hands the tiler zeroed arrays over the pages of the file being written (so the
    tiled bytes are written once, into the file cache, not tiled into memory and then copied),
    :meth:`put` keeps each tiled matrix, and :meth:`save` finishes the file and renames it into
    place; :meth:`close` removes a file a failed load began. ``hits`` counts matrices served from
    the file, ``writes`` the matrices :meth:`save` wrote.
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
        self._data_end = 0  # where the read file's arrays end (its index follows)
        self._kept: dict[str, QuantBlocks] = {}  # every matrix of this load, served or put
        self._put = False
        self._part: Path | None = None  # the file this load writes, while it writes it
        self._fd = -1
        self._end = 0  # the next free offset in it
        self._placed: dict[int, int] = {}  # an array's address -> its offset in that file
        self._no_alloc = False  # the file could not be begun: arrays from memory

    # -- reading -------------------------------------------------------------------------

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

    def _read_index(self) -> dict[str, Any]:
        """The file's matrices by label (and the file mapped); empty when there is no file or
        its footer or index does not check."""
        tail = len(MAGIC) + 8
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < tail:
                    return {}
                f.seek(size - tail)
                foot = f.read(tail)
                n = int.from_bytes(foot[:8], "little")
                if foot[8:] != MAGIC or n > min(MAX_INDEX_BYTES, size - tail):
                    return {}
                f.seek(size - tail - n)
                index = json.loads(f.read(n))
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError):
            return {}
        self._data_end = size - tail - n
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
                or offset + nbytes > self._data_end
            ):
                raise ValueError(f"{name}: not where the index says")
            data = np.frombuffer(self._map, kind, count, offset).reshape(dims)
            if _crc(data) != crc:
                raise ValueError(f"{name}: its bytes do not check")
            out[name] = data
        return out

    # -- writing -------------------------------------------------------------------------

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
        """A zeroed array over the next pages of the file this load writes (begun on the first
        call); from memory (:func:`eoc_native.memory.zeroed`) where the file cannot be begun or
        grown: a full or read-only disk only costs the file."""
        kind = np.dtype(dtype)
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * kind.itemsize
        if self._no_alloc or nbytes == 0:
            return zeroed(shape, kind)
        try:
            self._begin()
            at = -(-self._end // PAGE) * PAGE
            # the blocks are taken now: no disk that fills later can fault the mapping
            _reserve(self._fd, at, nbytes)
            pages = mmap.mmap(
                self._fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=at
            )
        except (OSError, ValueError):
            self._no_alloc = True
            self.close()
            return zeroed(shape, kind)
        array = np.frombuffer(pages, kind, count).reshape(shape)
        self._placed[array.ctypes.data] = at
        self._end = at + nbytes
        return array

    def put(self, label: str, blocks: QuantBlocks) -> None:
        """Keep ``blocks`` (tiled on this load) for :meth:`save`."""
        self._kept[label] = blocks
        self._put = True

    def save(self) -> None:
        """Finish the file with every matrix of this load, when any was tiled on it: arrays
        not already in it are written after the others, then the index and the footer; then it
        is renamed over the old one (a cut-off write is never read). A failure only costs
        time."""
        if not self._put:
            return
        try:
            self._begin()  # begun already, unless nothing was tiled into it (numpy's tiler)
            entries = []
            for label, blocks in self._kept.items():
                parts = {"qs": blocks.qs, "d": blocks.d}
                if blocks.m is not None:
                    parts["m"] = blocks.m
                described = {}
                for name, array in parts.items():
                    data = np.ascontiguousarray(array)
                    at = self._placed.get(data.ctypes.data) if data.nbytes else None
                    if at is None:  # served from the old file, or made by numpy: written
                        at = -(-self._end // PAGE) * PAGE
                        _write_at(self._fd, data.data.cast("B"), at)
                        self._end = at + data.nbytes
                    described[name] = [
                        str(data.dtype),
                        list(data.shape),
                        at,
                        data.nbytes,
                        _crc(data),
                    ]
                entries.append(
                    {"label": label, "bits": blocks.bits, "n_out": blocks.n_out, "parts": described}
                )
            index = json.dumps({"version": LAYOUT_VERSION, "entries": entries}).encode()
            foot = index + len(index).to_bytes(8, "little") + MAGIC
            _write_at(self._fd, memoryview(foot), self._end)
            os.ftruncate(self._fd, self._end + len(foot))
            os.close(self._fd)
            self._fd = -1
            assert self._part is not None
            self._part.replace(self.path)
            self._part = None
        except OSError:
            self.close()
            return  # a read-only or full disk: the next start tiles again
        self.writes += len(entries)
        self._put = False

    def _begin(self) -> None:
        """Open the file this load writes, beside the final one, unless it is open already."""
        if self._fd < 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._part = self.path.with_name(self.path.name + f".{os.getpid()}.part")
            self._fd = os.open(self._part, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    def close(self) -> None:
        """Remove the file this load began, when it was not saved (its arrays stay usable: the
        pages stay mapped)."""
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1
        if self._part is not None:
            _remove(self._part)
            self._part = None
            # what was placed in it is gone with it: a later save writes every array itself
            self._placed.clear()
            self._end = 0


def _write_at(fd: int, data: memoryview, at: int) -> None:
    """Write all of ``data`` at offset ``at`` (a write may take only part of it)."""
    done = 0
    while done < len(data):
        wrote = os.pwrite(fd, data[done:], at + done)
        if wrote <= 0:
            raise OSError(errno.EIO, "the file took no more bytes")
        done += wrote


def _reserve(fd: int, at: int, nbytes: int) -> None:
    """Take the file's blocks for ``nbytes`` at ``at`` (``OSError`` on a full disk), so that no
    write through a mapping of them can fail later; where the system cannot, only grow it."""
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is not None:
        try:
            fallocate(fd, at, nbytes)
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
    os.ftruncate(fd, max(os.fstat(fd).st_size, at + nbytes))


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
