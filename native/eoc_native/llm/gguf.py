"""Read a GGUF file: its metadata and its tensors, dequantized to float32 numpy arrays.

The parsing is done by the ``gguf`` package, the llama.cpp project's own Python reader, and so
is the dequantization (``gguf.quants``, by way of :mod:`eoc_native.quant.formats`, which holds
the table of the tensor types eoc reads): this module only checks what it reads and turns the
reader's failures into :class:`eoc.errors.InputError` with a reason a person can act on.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from eoc.errors import InputError
from eoc_native import require
from eoc_native.quant.formats import SUPPORTED_TYPES, dequantize

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
        gguf = _gguf()
        try:
            reader = gguf.GGUFReader(self.path)
        except (ValueError, IndexError, KeyError, OSError, OverflowError) as exc:
            # The reader walks offsets it read from the file: a cut-off or corrupt header shows
            # up as an out-of-range read or a nonsense type code.
            raise InputError(f"{self.path}: truncated or corrupt GGUF file ({exc})") from None
        self._reader = reader
        self.metadata: dict[str, Any] = {}
        for name, field in reader.fields.items():
            if name.startswith("GGUF."):
                continue  # the reader's own bookkeeping (version, counts), not model metadata
            self.metadata[name] = _field_value(field)
        self._tensors = {t.name: t for t in reader.tensors}
        # The reader keeps a small array per token string (100+ MB of objects for a 49k
        # vocabulary); the metadata is copied out above, so let them go.
        reader.fields.clear()
        for t in reader.tensors:
            # np.memmap slicing past the end silently yields a short array, so check the size.
            if t.data.nbytes != t.n_bytes:
                raise InputError(
                    f"{self.path}: truncated GGUF file: tensor {t.name} has "
                    f"{t.data.nbytes} of its {t.n_bytes} bytes"
                )

    @property
    def architecture(self) -> str:
        """The ``general.architecture`` value, e.g. ``"llama"``."""
        arch = self.metadata.get("general.architecture")
        if not isinstance(arch, str):
            raise InputError(f"{self.path}: GGUF file has no general.architecture key")
        return arch

    def tensor_names(self) -> Iterator[str]:
        """The names of the tensors, in file order."""
        return iter(self._tensors)

    def has_tensor(self, name: str) -> bool:
        """Whether a tensor called ``name`` is in the file."""
        return name in self._tensors

    def tensor_type(self, name: str) -> str:
        """The GGML type name of a tensor, e.g. ``"Q4_1"``."""
        return str(self._get(name).tensor_type.name)

    def tensor(self, name: str) -> Array:
        """Tensor ``name`` as a float32 array in numpy order (GGML's ``ne`` reversed)."""
        t = self._get(name)
        qtype = t.tensor_type
        if qtype.name not in SUPPORTED_TYPES:
            raise InputError(
                f"{self.path}: tensor {name} has type {qtype.name}, which this runner does not "
                f"dequantize (supported: {', '.join(SUPPORTED_TYPES)})"
            )
        out = dequantize(np.asarray(t.data), qtype.name)
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        return out.reshape(shape)

    def raw(self, name: str) -> tuple[npt.NDArray[Any], str, tuple[int, ...]]:
        """Tensor ``name`` as stored: its bytes (memory-mapped), GGML type name, numpy shape."""
        t = self._get(name)
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        return np.asarray(t.data), str(t.tensor_type.name), shape

    def drop_pages(self) -> None:
        """Let go of the file's pages this process has touched (they are read again if needed).

        The tensors are copied out as a model is built; without this the whole file, read once,
        would stay counted in the process's memory next to the copies.
        """
        mm = getattr(self._reader.data, "_mmap", None)
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if mm is not None and advice is not None:
            try:
                mm.madvise(advice)
            except (OSError, ValueError):  # not supported here: the pages stay, nothing breaks
                pass

    def _get(self, name: str) -> Any:
        try:
            return self._tensors[name]
        except KeyError:
            raise InputError(f"{self.path}: GGUF file has no tensor {name}") from None


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
        raise InputError(f"{path}: not a GGUF file (starts with {magic!r}, expected b'GGUF')")


def _field_value(field: Any) -> Any:
    """A reader field as a plain Python value (str, int, float, bool or list of them)."""
    value = field.contents()
    if isinstance(value, np.generic):
        return value.item()
    return value
