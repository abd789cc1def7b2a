"""Dequantization of each supported GGML type: hand-built blocks and quantize round trips.

The hand-built blocks follow the block layouts of ggml-common.h, so they check ``gguf.quants``
(which the runner relies on) against the format itself, not against its own quantizer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")

from eoc.errors import InputError
from eoc_native.quant.formats import BY_CODE, FORMATS, SUPPORTED_TYPES, dequantize, quantize

J = np.arange(16)


def f16(x: float) -> bytes:
    return np.float16(x).tobytes()


def nibbles(low: np.ndarray, high: np.ndarray) -> bytes:
    """16 bytes whose low nibbles give elements 0..15 and high nibbles elements 16..31."""
    return (low.astype(np.uint8) | (high.astype(np.uint8) << 4)).astype(np.uint8).tobytes()


def block(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.uint8).reshape(1, -1)


def test_q4_0_block() -> None:
    # x = (q - 8) * d
    raw = f16(0.5) + nibbles(J, 15 - J)
    expected = np.concatenate([(J - 8) * 0.5, (7 - J) * 0.5])
    np.testing.assert_array_equal(dequantize(block(raw), "Q4_0")[0], expected)


def test_q4_1_block() -> None:
    # x = q * d + m
    raw = f16(0.25) + f16(-1.0) + nibbles(J, 15 - J)
    expected = np.concatenate([J * 0.25 - 1.0, (15 - J) * 0.25 - 1.0])
    np.testing.assert_array_equal(dequantize(block(raw), "Q4_1")[0], expected)


def test_q5_0_block() -> None:
    # x = (q - 16) * d, the 5th bit of element i is bit i of the 32-bit qh
    qh = 0xF0F0F0F0
    high = np.array([(qh >> i) & 1 for i in range(32)])
    raw = f16(2.0) + np.uint32(qh).tobytes() + nibbles(J, 15 - J)
    q = np.concatenate([J, 15 - J]) | (high << 4)
    np.testing.assert_array_equal(dequantize(block(raw), "Q5_0")[0], (q - 16) * 2.0)


def test_q5_1_block() -> None:
    # x = q * d + m
    qh = 0x12345678
    high = np.array([(qh >> i) & 1 for i in range(32)])
    raw = f16(0.5) + f16(3.0) + np.uint32(qh).tobytes() + nibbles(J, 15 - J)
    q = np.concatenate([J, 15 - J]) | (high << 4)
    np.testing.assert_array_equal(dequantize(block(raw), "Q5_1")[0], q * 0.5 + 3.0)


def test_q8_0_block() -> None:
    # x = q * d, q signed bytes
    q = np.arange(-16, 16, dtype=np.int8) * 4
    raw = f16(0.125) + q.tobytes()
    np.testing.assert_array_equal(dequantize(block(raw), "Q8_0")[0], q * 0.125)


def test_float_types() -> None:
    values = np.array([[1.5, -2.0, 0.0, 65504.0, 1e-3, -7.25]], dtype=np.float32)
    np.testing.assert_array_equal(dequantize(values, "F32"), values)
    np.testing.assert_array_equal(
        dequantize(values.astype(np.float16), "F16"), values.astype(np.float16)
    )
    # bf16 is the top half of a float32; these values are exact in it except 1e-3.
    bf16 = (values.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
    got = dequantize(bf16, "BF16")
    np.testing.assert_array_equal(got[:, [0, 1, 2, 5]], values[:, [0, 1, 2, 5]])
    assert abs(got[0, 4] - 1e-3) < 1e-5


# Worst-case error of a round trip, as a fraction of the block's largest magnitude.
BOUND = {"Q4_0": 1 / 8, "Q4_1": 1 / 14, "Q5_0": 1 / 16, "Q5_1": 1 / 30, "Q8_0": 1 / 127,
         "F16": 1e-3, "BF16": 1 / 128, "F32": 0.0}  # fmt: skip


@pytest.mark.parametrize("type_name", [t for t in SUPPORTED_TYPES if t in BOUND])
def test_round_trip(type_name: str) -> None:
    """(The K-quants have no quantizer in ``gguf``: tests/native/test_kquants.py reads them.)"""
    rng = np.random.default_rng(0)
    values = (rng.standard_normal((8, 64)) * rng.uniform(0.01, 10, (8, 1))).astype(np.float32)
    got = dequantize(quantize(values, type_name), type_name)
    assert got.shape == values.shape and got.dtype == np.float32
    blocks = np.abs(values).reshape(8, -1, 32).max(axis=-1, keepdims=True)
    err = np.abs(got - values).reshape(8, -1, 32)
    assert np.all(err <= blocks * BOUND[type_name] * 1.01 + 1e-7), type_name


def test_unsupported_type_is_refused() -> None:
    with pytest.raises(InputError, match="Q5_K is not supported"):
        dequantize(np.zeros((1, 176), dtype=np.uint8), "Q5_K")


def test_the_format_table_agrees_with_gguf() -> None:
    """Weights and bytes per block of each type, as the llama.cpp project's package has them."""
    import gguf

    assert SUPPORTED_TYPES == tuple(FORMATS)
    for name, fmt in FORMATS.items():
        sizes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[name]]
        assert sizes == (fmt.block, fmt.nbytes), name
        assert int(gguf.GGMLQuantizationType[name]) == fmt.code, name
    assert {f.code: f for f in FORMATS.values()} == BY_CODE


def _file_with(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> Path:
    """A GGUF file holding ``tensors`` (name -> GGML type name, bytes or float32 values)."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch="llama")
    for name, (qtype, data) in tensors.items():
        if qtype == "F32":
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, raw_dtype=gguf.GGMLQuantizationType[qtype])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_a_type_outside_the_table_is_named_and_refused(tmp_path: Path) -> None:
    """A tensor of a type eoc does not read (Q5_K) opens, is named by the ``gguf`` package's
    table, and is refused when dequantized, saying which types are read."""
    from eoc_native.llm.gguf import GGUFFile

    q5k = np.zeros((2, 176), np.uint8)  # two 256-weight Q5_K blocks, as stored
    path = _file_with(
        tmp_path / "q5k.gguf", {"w": ("Q5_K", q5k), "n": ("F32", np.ones(4, np.float32))}
    )
    f = GGUFFile(path)
    assert f.tensor_type("w") == "Q5_K"
    assert f.raw("w")[2] == (2, 256)
    np.testing.assert_array_equal(f.tensor("n"), np.ones(4, np.float32))
    with pytest.raises(InputError, match="type Q5_K, which this runner does not dequantize"):
        f.tensor("w")


def test_reading_the_table_s_types_leaves_the_gguf_package_unimported(tmp_path: Path) -> None:
    """Opening a file of the types in eoc's table and reading its tensors' bytes does not import
    ``gguf`` (about 45 ms of every model start)."""
    q4 = quantize(np.ones((4, 64), np.float32), "Q4_1")
    path = _file_with(
        tmp_path / "q4.gguf", {"w": ("Q4_1", q4), "n": ("F32", np.ones(4, np.float32))}
    )
    code = (
        "import sys; from eoc_native.llm.gguf import GGUFFile; f = GGUFFile(sys.argv[1]); "
        "raw, kind, shape = f.raw('w'); assert (kind, shape) == ('Q4_1', (4, 64)), (kind, shape); "
        "f.tensor('n'); print('gguf' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
