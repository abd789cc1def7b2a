"""Parse a GGUF file's header (metadata and tensor list) from its memory map, quickly.

The ``gguf`` package's reader builds a numpy view for every part of every field, which takes
3.6 s here for SmolLM2's 49k-token vocabulary (most of what loading the model took). This reads
the same header with :mod:`struct` and one ``bytes`` slice per string (about 0.1 s), gives the
same values (tests/native/test_gguf_header.py compares them with the package's reader), and
leaves the package what it is good at: the tensor types, their block sizes and dequantizing.

Standard library only, so the demo's build (``web/ggufmacs.py``, in a venv with pip alone) reads
headers with it too. Every count and length is checked against the file's size before it is
used, so a cut-off or damaged header is a :class:`HeaderError` with the offset, never a huge
allocation.
"""

from __future__ import annotations

import mmap
import struct
from typing import Any, NamedTuple

MAX_DIMS = 4
"""GGML tensors have at most four dimensions."""
MAX_NESTING = 8
"""The deepest arrays of arrays a header may hold (a writer nests none: deeper is damage, and
would otherwise recurse until Python's limit)."""
DEFAULT_ALIGNMENT = 32

# GGUF value types: the struct code of each fixed-size one
_FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")


class HeaderError(ValueError):
    """The header is cut short or holds what no GGUF writer writes."""


class TensorInfo(NamedTuple):
    """One tensor as the header lists it: GGML dims (``ne``, fastest first), type code, and
    where its bytes start in the file."""

    name: str
    dims: tuple[int, ...]
    type_code: int
    offset: int


class Header(NamedTuple):
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo]
    data_start: int
    """Where the tensor data begins (aligned): each tensor's bytes are at ``offset`` from it."""


class _Cursor:
    __slots__ = ("buf", "off", "size")

    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.off = 0
        self.size = len(buf)

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.off + n > self.size:
            raise HeaderError(
                f"the header is cut short or damaged: {what} needs {n:,} bytes at offset "
                f"{self.off:,} of a {self.size:,}-byte file"
            )

    def fixed(self, code: str, what: str) -> Any:
        n = struct.calcsize(code)
        self.need(n, what)
        value = struct.unpack_from("<" + code, self.buf, self.off)[0]
        self.off += n
        return value

    def string(self, what: str) -> str:
        n = self.fixed("Q", what)
        self.need(n, what)
        start = self.off
        self.off += n
        return bytes(self.buf[start : self.off]).decode("utf-8")

    def _strings(self, n: int, what: str) -> list[str]:
        """``n`` strings in a row (a vocabulary: 49k of them), in one tight loop."""
        buf, off, size = self.buf, self.off, self.size
        length = _U64.unpack_from
        out: list[str] = []
        append = out.append
        for _ in range(n):
            if off + 8 > size:
                self.off = off
                self.need(8, what)
            end = off + 8 + length(buf, off)[0]
            if end > size:
                self.off = off + 8
                self.need(end - off - 8, what)
            append(str(buf[off + 8 : end], "utf-8"))
            off = end
        self.off = off
        return out

    def value(self, kind: int, what: str, depth: int = 0) -> Any:
        if kind in _FIXED:
            return self.fixed(_FIXED[kind], what)
        if kind == _STRING:
            return self.string(what)
        if kind == _ARRAY:
            item = self.fixed("I", what)
            n = self.fixed("Q", what)
            if item in _FIXED:
                code = f"<{self._count(n, struct.calcsize(_FIXED[item]), what)}{_FIXED[item]}"
                out = list(struct.unpack_from(code, self.buf, self.off))
                self.off += struct.calcsize(code)
                return out
            if item == _STRING:
                return self._strings(self._count(n, 8, what), what)
            if item == _ARRAY:
                if depth >= MAX_NESTING:
                    raise HeaderError(f"{what}: arrays nested more than {MAX_NESTING} deep")
                count = self._count(n, 12, what)
                return [self.value(_ARRAY, what, depth + 1) for _ in range(count)]
            raise HeaderError(f"{what}: an array of unknown type {item}")
        raise HeaderError(f"{what}: unknown value type {kind} at offset {self.off:,}")

    def _count(self, n: int, least: int, what: str) -> int:
        """``n`` items of at least ``least`` bytes each must fit in what is left of the file."""
        self.claims(n * least, f"{n:,} items in {what}")
        return n

    def claims(self, nbytes: int, claim: str) -> None:
        """``nbytes`` more bytes, which ``claim`` needs, must fit in what is left of the file."""
        if self.off + nbytes > self.size:
            raise HeaderError(
                f"the header claims {claim}, more than its {self.size:,}-byte file can hold: "
                "the file is cut short or damaged, or not a model file"
            )


def parse(buf: mmap.mmap | bytes) -> Header:
    """The header of the GGUF file mapped in ``buf``."""
    c = _Cursor(buf)
    c.need(4, "the magic")
    if bytes(buf[:4]) != b"GGUF":
        raise HeaderError("not a GGUF file (no GGUF magic)")
    c.off = 4
    version = c.fixed("I", "the version")
    if version not in (2, 3):
        raise HeaderError(f"GGUF version {version}: eoc reads versions 2 and 3")
    n_tensors = c.fixed("Q", "the tensor count")
    n_keys = c.fixed("Q", "the metadata count")
    c.claims(n_keys * 12 + n_tensors * 24, f"{n_keys:,} metadata keys and {n_tensors:,} tensors")
    metadata: dict[str, Any] = {}
    for _ in range(n_keys):
        key = c.string("a metadata key")
        if key in metadata:
            raise HeaderError(f"metadata key {key!r} appears twice")
        metadata[key] = c.value(c.fixed("I", key), key)
    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for _ in range(n_tensors):
        name = c.string("a tensor name")
        if name in seen:
            raise HeaderError(f"tensor {name!r} appears twice")
        seen.add(name)
        n_dims = c.fixed("I", name)
        if not 1 <= n_dims <= MAX_DIMS:
            raise HeaderError(f"tensor {name!r} has {n_dims} dimensions")
        dims = tuple(c.fixed("Q", name) for _ in range(n_dims))
        tensors.append(TensorInfo(name, dims, c.fixed("I", name), c.fixed("Q", name)))
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if (
        not isinstance(alignment, int)
        or isinstance(alignment, bool)
        or not 1 <= alignment <= 1 << 16
    ):
        raise HeaderError(f"general.alignment is {alignment!r}, not a small whole number")
    start = c.off + (-c.off % alignment)
    return Header(version, metadata, tensors, start)


__all__ = ["Header", "HeaderError", "TensorInfo", "parse"]
