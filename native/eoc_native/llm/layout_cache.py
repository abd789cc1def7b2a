"""The model's quantized weights in the kernels' tiled layout, kept on disk in one file and
mapped on later starts, so a model loads without tiling its blocks again.

Tiling SmolLM2-135M's 4-bit blocks takes about 0.06 s a start with the C kernels (0.3-0.6 s in
numpy, for numba's): most of a warm start's model load. The first load tiles every matrix straight
into the pages of one file, ``$EOC_CACHE_DIR/layouts/<model>-<key>.layout`` (default
``~/.cache/eoc``), named for the model file (its resolved path, size, modification time and the
SHA-256 of its first MiB) and for this layout's version: the tiled bytes go once into the file
cache, not into memory and then through a write (about 20 ms less for SmolLM2's 96 MB, and half
the fresh pages). Later loads map that file once (copy-on-write, never written, so the kernels
see the writable arrays they take) and check each matrix's SHA-256 as they take it, the pages
left to the operating system's file cache. (Version 2 kept ``.npy`` files a matrix, about 400
files whose opening cost more than the C kernels' tiling.)

The file: the arrays, each at a page boundary; then the index's MAC (64 hex digits), the index
(JSON: the signing key's id, each matrix's label, bits, width, and per array its dtype, shape,
offset, length and SHA-256), its length (8 bytes, little-endian) and ``EOCLAYT`` with the
version byte, last, so that a file cut short is never read.

**Who may have written it.** The arrays are mapped and run as the model's weights: a file
edited with its checksum recomputed silently changed a model's output (issue 35). So:

* the index carries a keyed MAC (:func:`eoc.store.keys.mac`, purpose ``layout``, over the file's
  name, which names the model file, and the index), with the user's key (:mod:`eoc.store.keys`,
  outside the cache, readable by its owner only); the index holds each array's SHA-256, which
  is checked as the array is taken (a CRC-32 is no defence: anyone can make bytes fit one). A
  file whose MAC or digests do not check is a damaged file (below). SmolLM2-135M's 97 MB: all
  121 matrices checked in about 60 ms on a 2-core machine (CRC-32, before: about 38 ms);
* the file is opened, then checked (:func:`eoc.files.trust.open_checked`: owned by the user or
  root, writable by no one else, in folders no one else can write to) before it is mapped, and
  the ``layouts`` folder is made with mode 700 and checked (:func:`eoc.files.trust.private_folder`)
  before a file is written into it. A file or folder that fails raises
  :class:`~eoc.errors.UntrustedFile` naming it, as does a key file that fails its own check:
  someone else could write there, which the user must hear of, not have hidden by a re-tiling.

The cache only ever saves time otherwise. A file that cannot be written, is missing, cut off or
damaged (a header, an index, a MAC or an array's bytes that do not check, or signed with another
key), or arrays of the wrong type or shape: the matrix is tiled from the model file as without a
cache, and the file is written again whole when it can be (a key that cannot be read or made, for
a read-only home, only costs the cache).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import mmap
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.files.trust import open_checked, private_folder
from eoc.store import keys as userkey
from eoc_native import cache_dir
from eoc_native.memory import zeroed
from eoc_native.quant.blocks import QuantBlocks

LAYOUT_VERSION = 5
"""Bumped whenever the tiled layout or the file changes, so an older cache is never read (2: the
scales kept as float16 bits; 3: one file, each array with its CRC-32; 4: the index last; 5: the
index under the user's keyed MAC, each array with its SHA-256)."""
MAGIC = b"EOCLAYT" + bytes([LAYOUT_VERSION])
MAC_BYTES = 64
"""The index's MAC, in hex, just before the index."""
PURPOSE = "layout"
"""The MAC's purpose (:func:`eoc.store.keys.mac`)."""
WHAT = "the layout file"
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
        self._key: bytes | None = None
        self._hashes: dict[tuple[int, int], Future[str]] = {}  # (offset, length) -> its SHA-256

    def _user_key(self) -> bytes | None:
        """The user's key (:mod:`eoc.store.keys`), or ``None`` where it cannot be read or made
        (the cache is then neither read nor written). An untrusted key file raises."""
        if self._key is None:
            try:
                self._key = userkey.load_key()
            except OSError:
                return None
        return self._key

    def _mac(self, key: bytes, index: bytes) -> bytes:
        return userkey.mac(
            key, PURPOSE, self.path.name.encode("utf-8", "surrogateescape"), index
        ).encode()

    # -- reading -------------------------------------------------------------------------

    def get(self, label: str) -> QuantBlocks | None:
        """The tiled matrix ``label`` from the file, mapped; ``None`` when the file does not
        hold it whole and right."""
        if self._index is None:
            self._index = self._read_index()
            self._start_hashing()
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
        its footer, MAC or index does not check.

        Raises:
            UntrustedFile: the file, a folder above it or the user's key file could have been
                written by someone else (:mod:`eoc.files.trust`).
        """
        tail = len(MAGIC) + 8
        try:
            fd = open_checked(self.path, what=WHAT)
        except OSError:
            return {}
        try:
            with os.fdopen(fd, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < tail:
                    return {}
                f.seek(size - tail)
                foot = f.read(tail)
                n = int.from_bytes(foot[:8], "little")
                if foot[8:] != MAGIC or n > min(MAX_INDEX_BYTES, size - tail - MAC_BYTES):
                    return {}
                f.seek(size - tail - n - MAC_BYTES)
                tag = f.read(MAC_BYTES)
                raw = f.read(n)
                key = self._user_key()
                if key is None or not hmac.compare_digest(tag, self._mac(key, raw)):
                    return {}  # not written by this user's eoc, or edited since
                index = json.loads(raw)
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        except (OSError, ValueError):
            return {}
        self._data_end = size - tail - n - MAC_BYTES
        if (
            not isinstance(index, dict)
            or index.get("version") != LAYOUT_VERSION
            or index.get("key") != userkey.key_id(key)
        ):
            return {}
        entries = index.get("entries")
        if not isinstance(entries, list):
            return {}
        return {e["label"]: e for e in entries if isinstance(e, dict) and "label" in e}

    def _place(self, name: str, part: Any) -> tuple[Any, tuple[int, ...], int, int, int, Any]:
        """An index part's (dtype, shape, count, offset, length, digest), checked against the
        file (``ValueError``, ``KeyError`` or ``TypeError`` when it does not fit)."""
        dtype, shape, offset, nbytes, digest = part
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
        return kind, dims, count, offset, nbytes, digest

    def _start_hashing(self) -> None:
        """Start the SHA-256 of every array the index places, in the index's order, on a few
        threads (hashlib lets go of the interpreter's lock): a load's :meth:`get` calls take
        the digests as they are ready (97 MB on two cores: about half the time of one)."""
        if not self._index or self._map is None or (os.cpu_count() or 1) < 2:
            return
        view = memoryview(self._map)
        pool = ThreadPoolExecutor(min(4, os.cpu_count() or 1), thread_name_prefix="eoc-layout")
        try:
            for entry in self._index.values():
                for name, part in entry["parts"].items():
                    try:
                        _, _, _, offset, nbytes, _ = self._place(name, part)
                    except (ValueError, KeyError, TypeError):
                        continue  # _arrays refuses it
                    span = (offset, nbytes)
                    if span not in self._hashes:
                        chunk = view[offset : offset + nbytes]
                        self._hashes[span] = pool.submit(_sha256, chunk)
        except (AttributeError, TypeError):  # an index whose entries are not what it says
            pass
        finally:
            pool.shutdown(wait=False)

    def _arrays(self, entry: dict[str, Any]) -> dict[str, Any]:
        """An entry's arrays over the map, each checked against its place in the file and its
        SHA-256 (``ValueError`` when one does not check)."""
        assert self._map is not None
        out = {}
        for name, part in entry["parts"].items():
            kind, dims, count, offset, nbytes, digest = self._place(name, part)
            data = np.frombuffer(self._map, kind, count, offset).reshape(dims)
            pending = self._hashes.get((offset, nbytes))
            got = pending.result() if pending is not None else _digest(data)
            if not isinstance(digest, str) or not hmac.compare_digest(got, digest):
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
                        _digest(data),
                    ]
                entries.append(
                    {"label": label, "bits": blocks.bits, "n_out": blocks.n_out, "parts": described}
                )
            key = self._user_key()
            if key is None:  # no key to sign it with: the next start tiles again
                self.close()
                return
            doc = {"version": LAYOUT_VERSION, "key": userkey.key_id(key), "entries": entries}
            index = json.dumps(doc).encode()
            foot = self._mac(key, index) + index + len(index).to_bytes(8, "little") + MAGIC
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
        """Open the file this load writes, beside the final one, unless it is open already (the
        folder made private and checked first: :class:`~eoc.errors.UntrustedFile` when someone
        else could write in it)."""
        if self._fd < 0:
            private_folder(self.path.parent, what="the folder of eoc's layout files")
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


def _digest(data: Any) -> str:
    """The SHA-256 (hex) of a C-contiguous array's bytes (about 1.5 GB/s with SHA extensions)."""
    return _sha256(data.data.cast("B"))


def _sha256(data: Any) -> str:
    return hashlib.sha256(data).hexdigest()


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
