"""web/ggufmacs.py: the multiply-adds a token takes, read from a GGUF header with the standard
library, against the llama.cpp project's own reader (the ``gguf`` package) on the real file."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import pytest

from tests.native.smollm2 import SMOLLM2, needs_smollm2

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "web"))
from ggufmacs import GGUFHeaderError, model_work


@needs_smollm2
def test_the_counts_match_the_gguf_packages_reader() -> None:
    import gguf

    assert SMOLLM2 is not None
    reader = gguf.GGUFReader(SMOLLM2)
    sizes = {t.name: int(math.prod(t.shape)) for t in reader.tensors}
    body = sum(
        n
        for t, n in zip(reader.tensors, sizes.values(), strict=True)
        if len(t.shape) == 2 and t.name not in ("token_embd.weight", "output.weight")
    )
    head = sizes.get("output.weight", sizes["token_embd.weight"])
    work = model_work(SMOLLM2)
    assert work.architecture == "llama"
    assert work.macs_per_prompt_token == body
    assert work.macs_per_token == body + head
    assert work.parameters == sum(sizes.values())
    assert 130e6 < work.parameters < 140e6  # SmolLM2-135M


def _header(version: int = 3, tensors: int = 0, keys: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, keys)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "cut short"),
        (b"GGML" + bytes(20), "not a GGUF file"),
        (_header(version=1), "version 1"),
        (_header(tensors=1 << 40), "not a model file"),
        (_header(keys=1) + struct.pack("<Q", 1 << 40), "damaged"),
        (_header(keys=1) + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 99), "unknown"),
        (_header(tensors=1), "cut short"),
        (_header(), "no token_embd"),
    ],
)
def test_a_damaged_header_is_a_clear_error(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFHeaderError, match=reason):
        model_work(path)


@needs_smollm2
def test_a_file_cut_inside_its_tensor_list_is_refused(tmp_path: Path) -> None:
    assert SMOLLM2 is not None
    cut = tmp_path / "cut.gguf"
    with open(SMOLLM2, "rb") as f:
        cut.write_bytes(f.read(1_500_000))  # past the vocabulary, before the tensor list ends
    with pytest.raises(GGUFHeaderError, match="cut short"):
        model_work(cut)
