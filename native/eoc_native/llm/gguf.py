"""Read a GGUF file: its metadata and its tensors, dequantized to float32 numpy arrays.

The header is parsed by :mod:`eoc_native.llm.gguf_header` (the ``gguf`` package's reader gives
the same values but took 3.6 s on SmolLM2's vocabulary); the tensor types eoc reads, with their
type numbers and block sizes, are :mod:`eoc_native.quant.formats`' table (a test checks it against
the ``gguf`` package, the llama.cpp project's own Python code, which is imported only for a type
outside it, and for dequantizing). This
module checks what it reads and turns every failure into :class:`eoc.errors.ModelFileError` (an
:class:`~eoc.errors.InputError`) with a reason a person can act on.

The tensor table is checked against the file as it is opened: each tensor's type is one GGML
knows, each dimension at least 1, its offset a multiple of the alignment, its bytes (dims by the
type's size) inside the file, and the tensors tile the data section the way llama.cpp's and the
``gguf`` package's writers lay them out: none overlaps another, and none is followed by more
unused bytes than the alignment pads (a tensor whose type or dims were misread leaves a gap or
overlaps its neighbour). The header's values are checked against these tensors by
:mod:`eoc_native.llm.shape`.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError, ModelFileError
from eoc_native import require
from eoc_native.llm.gguf_header import Header, HeaderError, TensorInfo, parse
from eoc_native.quant.formats import BY_CODE, SUPPORTED_TYPES, dequantize

GGUF_MAGIC = b"GGUF"

Array = npt.NDArray[np.float32]


def _gguf() -> Any:
    return require("gguf", package="gguf", why="reading GGUF model files")


class GGUFFile:
    """An open GGUF file: ``metadata`` (key -> Python value) and tensors by name.

    The tensor bytes stay memory-mapped; :meth:`tensor` dequantizes one on demand.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Open ``path``; raise :class:`InputError` if it is missing, not GGUF, or truncated."""
        self.path = Path(path)
        _check_header(self.path)
        try:
            with open(self.path, "rb") as f:
                self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
            raise ModelFileError(f"{self.path}: cannot map the model file ({exc})") from None
        self.size = len(self._mmap)
        try:
            header = parse(self._mmap)
            _check_table(header, self.size)
            self._tensors = {
                t.name: _tensor(self._mmap, header.data_start, t) for t in header.tensors
            }
        except (HeaderError, ValueError, KeyError, OverflowError, RecursionError) as exc:
            # a cut-off or corrupt header: an offset past the end or a nonsense type code
            raise ModelFileError(
                f"{self.path}: truncated or corrupt GGUF file ({exc}): the file is damaged, or "
                "not a model file"
            ) from None
        self.metadata: dict[str, Any] = header.metadata

    @property
    def architecture(self) -> str:
        """The ``general.architecture`` value, e.g. ``"llama"``."""
        arch = self.metadata.get("general.architecture")
        if not isinstance(arch, str):
            raise ModelFileError(f"{self.path}: GGUF file has no general.architecture key")
        return arch

    def tensor_names(self) -> Iterator[str]:
        """The names of the tensors, in file order."""
        return iter(self._tensors)

    def has_tensor(self, name: str) -> bool:
        """Whether a tensor called ``name`` is in the file."""
        return name in self._tensors

    def tensor_dims(self, name: str) -> tuple[int, ...] | None:
        """Tensor ``name``'s GGML dims (``ne``, fastest first), or ``None`` if there is none."""
        t = self._tensors.get(name)
        return None if t is None else tuple(int(d) for d in t.shape.tolist())

    def tensor_type(self, name: str) -> str:
        """The GGML type name of a tensor, e.g. ``"Q4_1"``."""
        return str(self._get(name).tensor_type)

    def tensor(self, name: str) -> Array:
        """Tensor ``name`` as a float32 array in numpy order (GGML's ``ne`` reversed)."""
        t = self._get(name)
        qtype = t.tensor_type
        if qtype not in SUPPORTED_TYPES:
            raise ModelFileError(
                f"{self.path}: tensor {name} has type {qtype}, which this runner does not "
                f"dequantize (supported: {', '.join(SUPPORTED_TYPES)})"
            )
        out = dequantize(np.asarray(t.data), qtype)
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        return out.reshape(shape)

    def raw(self, name: str) -> tuple[npt.NDArray[Any], str, tuple[int, ...]]:
        """Tensor ``name`` as stored: its bytes (memory-mapped), GGML type name, numpy shape."""
        t = self._get(name)
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        return np.asarray(t.data), t.tensor_type, shape

    def drop_pages(self) -> None:
        """Let go of the file's pages this process has touched (they are read again if needed).

        The tensors are copied out as a model is built; without this the whole file, read once,
        would stay counted in the process's memory next to the copies.
        """
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is not None:
            try:
                self._mmap.madvise(advice)
            except (OSError, ValueError):  # not supported here: the pages stay, nothing breaks
                pass

    def _get(self, name: str) -> _Tensor:
        try:
            return self._tensors[name]
        except KeyError:
            raise ModelFileError(f"{self.path}: GGUF file has no tensor {name}") from None


def _check_header(path: Path) -> None:
    """Refuse a missing file or one without the GGUF magic before the reader sees it."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise InputError(f"{path}: no such model file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a GGUF model file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read model file ({exc.strerror})") from None
    if magic != GGUF_MAGIC:
        raise ModelFileError(f"{path}: not a GGUF file (starts with {magic!r}, expected b'GGUF')")


class _Tensor(NamedTuple):
    """A tensor's type, GGML dims and bytes, typed and shaped as the ``gguf`` reader gives them."""

    name: str
    tensor_type: str  # the GGML type's name, e.g. "Q4_1"
    shape: npt.NDArray[np.uint64]
    n_bytes: int
    data: npt.NDArray[Any]


_ITEM_TYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8}
_ITEM_TYPES.update({"I16": np.int16, "I32": np.int32, "I64": np.int64})


def _tensor_bytes(buf: mmap.mmap, start: int, nbytes: int) -> npt.NDArray[np.uint8]:
    """``nbytes`` bytes of the map from ``start`` as a plain (not memmap) uint8 array."""
    if start < 0 or nbytes < 0 or start + nbytes > len(buf):
        raise HeaderError(
            f"a tensor's {nbytes:,} bytes at offset {start:,} run past the end of the "
            f"{len(buf):,}-byte file"
        )
    return np.frombuffer(buf, np.uint8, nbytes, start)


def _check_table(header: Header, file_size: int) -> None:
    """Every tensor's type, dims and offset against the file (see the module's docstring);
    :class:`HeaderError` naming the tensor otherwise."""
    align = int(header.metadata.get("general.alignment", 32))
    spans = []
    for info in header.tensors:
        name, block, size = _type_of(info.type_code, info.name)
        if any(d < 1 for d in info.dims):
            raise HeaderError(f"tensor {info.name} has a dimension of 0 (dims {list(info.dims)})")
        if info.dims[0] % block:
            raise HeaderError(
                f"tensor {info.name}: a row of {info.dims[0]} weights is not whole {block}-weight "
                f"blocks of its type {name}"
            )
        if info.offset % align:
            raise HeaderError(
                f"tensor {info.name}: its offset {info.offset:,} is not a multiple of the "
                f"alignment {align}"
            )
        n_bytes = _n_bytes(info.dims, block, size)
        if header.data_start + info.offset + n_bytes > file_size:
            raise HeaderError(
                f"tensor {info.name}: its {n_bytes:,} bytes ({name}, dims {list(info.dims)}) at "
                f"offset {info.offset:,} run past the end of the {file_size:,}-byte file"
            )
        spans.append((info.offset, info.offset + n_bytes, info.name))
    if not spans:
        return  # a vocabulary file: metadata alone
    spans.sort()
    end_of_data = file_size - header.data_start
    for (start, end, name), (after, _, other) in zip(
        spans, [*spans[1:], (end_of_data, 0, "the end of the file")], strict=True
    ):
        if after < end:
            raise HeaderError(f"tensor {name} (bytes {start:,} to {end:,}) overlaps {other}")
        if after - end >= align:
            raise HeaderError(
                f"tensor {name} is followed by {after - end:,} unused bytes before {other}: its "
                "type or dims do not match the bytes the file holds for it"
            )
    if spans and spans[0][0] >= align:
        raise HeaderError(f"{spans[0][0]:,} unused bytes come before tensor {spans[0][2]}")


def _n_bytes(dims: tuple[int, ...], block: int, size: int) -> int:
    n_elems = 1
    for d in dims:
        n_elems *= d
    return n_elems * size // block


def _tensor(buf: mmap.mmap, start: int, info: TensorInfo) -> _Tensor:
    """``info``'s bytes from the map, viewed as the reader views them (typed elements for the
    plain types, bytes in blocks for the quantized ones)."""
    name, block, size = _type_of(info.type_code, info.name)
    n_bytes = _n_bytes(info.dims, block, size)
    data = _tensor_bytes(buf, start + info.offset, n_bytes)
    np_dims = tuple(reversed(info.dims))
    item = _ITEM_TYPES.get(name)
    if item is not None:
        data = data.view(item).reshape(np_dims)
    else:
        if not np_dims or np_dims[-1] % block:
            raise ValueError(f"{info.name}: a row of {name} is not whole {block}-weight blocks")
        data = data.reshape((*np_dims[:-1], np_dims[-1] // block * size))
    return _Tensor(info.name, name, np.array(info.dims, dtype=np.uint64), n_bytes, data)


def _type_of(code: int, tensor: str = "a tensor") -> tuple[str, int, int]:
    """Tensor type ``code``'s name, weights per block and bytes per block: from eoc's table, or
    for a type outside it (one eoc refuses to read, named in the refusal) from the ``gguf``
    package; :class:`HeaderError` naming ``tensor`` for a code neither knows."""
    fmt = BY_CODE.get(code)
    if fmt is not None:
        return fmt.name, fmt.block, fmt.nbytes
    gguf = _gguf()
    try:
        qtype = gguf.GGMLQuantizationType(code)
        block, size = gguf.GGML_QUANT_SIZES[qtype]
    except (ValueError, KeyError):
        raise HeaderError(
            f"tensor {tensor} has type {code}, which is no GGML tensor type"
        ) from None
    return str(qtype.name), int(block), int(size)
