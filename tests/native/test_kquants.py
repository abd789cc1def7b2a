"""The K-quants (Q4_K, Q6_K): read as ggml lays them out, and rewritten into kernel blocks.

A hand-built block of each checks ``gguf.quants`` (which dequantizes them) against the format in
ggml-common.h; random blocks check eoc's rewrites (:mod:`eoc_native.quant.kquants`) against
``gguf.quants``' reading of the original: Q4_K -> Q4_1 exact but for float16 scales, Q6_K ->
Q8_0 within half a Q8_0 step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")

from eoc.errors import InputError  # noqa: E402
from eoc_native.quant import kquants  # noqa: E402
from eoc_native.quant.formats import CONVERTED, FORMATS, dequantize  # noqa: E402


def random_blocks(n_rows: int, n_blocks: int, size: int, seed: int = 0) -> np.ndarray:
    """Random K-quant rows whose float16 fields (the last two bytes of Q6_K, the first four of
    Q4_K) are small finite scales."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 256, (n_rows, n_blocks, size), dtype=np.uint8)
    scales = rng.uniform(1e-4, 1e-2, (n_rows, n_blocks, 2)).astype(np.float16).view(np.uint8)
    if size == kquants.Q4_K_BYTES:
        b[..., 0:4] = scales.reshape(n_rows, n_blocks, 4)
    else:
        b[..., 208:210] = scales[..., 0:2]
    return b.reshape(n_rows, -1)


def test_the_table_converts_each_k_quant_into_a_kernel_type() -> None:
    assert CONVERTED == {"Q4_K": "Q4_1", "Q6_K": "Q8_0"}
    assert (FORMATS["Q4_K"].block, FORMATS["Q4_K"].nbytes) == (256, 144)
    assert (FORMATS["Q6_K"].block, FORMATS["Q6_K"].nbytes) == (256, 210)


def test_a_hand_built_q4_k_block_reads_as_its_layout_says() -> None:
    """Sub-block s of a Q4_K block is d * sc[s] * q - dmin * mn[s]; scales 0..3 sit in the
    low six bits of bytes 0..3 (minimums 4..7), scales 4..7 in the nibbles of bytes 8..11 with
    their top two bits in bytes 0..3's top bits."""
    sc = np.array([1, 2, 3, 4, 17, 33, 50, 63], np.uint8)
    mn = np.array([0, 5, 10, 15, 20, 40, 62, 63], np.uint8)
    packed = np.zeros(12, np.uint8)
    packed[0:4] = sc[0:4] | ((sc[4:8] >> 4) << 6)
    packed[4:8] = mn[0:4] | ((mn[4:8] >> 4) << 6)
    packed[8:12] = (sc[4:8] & 0xF) | ((mn[4:8] & 0xF) << 4)
    got_sc, got_mn = kquants.q4_k_scales(packed)
    np.testing.assert_array_equal(got_sc, sc)
    np.testing.assert_array_equal(got_mn, mn)
    q = np.arange(256) % 16  # weight i's 4-bit value
    qs = np.zeros(128, np.uint8)
    for j in range(4):  # run j: low nibbles are sub-block 2j, high nibbles 2j + 1
        qs[32 * j : 32 * j + 32] = q[64 * j : 64 * j + 32] | (q[64 * j + 32 : 64 * j + 64] << 4)
    d, dmin = 0.5, 0.25
    raw = np.frombuffer(
        np.float16(d).tobytes() + np.float16(dmin).tobytes() + packed.tobytes() + qs.tobytes(),
        np.uint8,
    ).reshape(1, -1)
    want = d * np.repeat(sc, 32) * q - dmin * np.repeat(mn, 32)
    np.testing.assert_array_equal(dequantize(raw, "Q4_K")[0], want.astype(np.float32))
    q41 = kquants.q4_k_to_q4_1(raw)
    np.testing.assert_array_equal(dequantize(q41, "Q4_1")[0], want.astype(np.float32))


def test_a_hand_built_q6_k_block_reads_as_its_layout_says() -> None:
    """Weight i of a Q6_K block is d * sc[i // 16] * (q - 32): per half of 128 weights, the low
    nibbles of bytes 0..63 then their high nibbles, the 2-bit pairs of 32 bytes of qh on top."""
    q = (np.arange(256) * 7) % 64
    ql, qh = np.zeros(128, np.uint8), np.zeros(64, np.uint8)
    for h in range(2):
        w = q[128 * h : 128 * h + 128]
        lo, hi = w & 0xF, w >> 4
        ql[64 * h : 64 * h + 32] = lo[0:32] | (lo[64:96] << 4)
        ql[64 * h + 32 : 64 * h + 64] = lo[32:64] | (lo[96:128] << 4)
        qh[32 * h : 32 * h + 32] = hi[0:32] | (hi[32:64] << 2) | (hi[64:96] << 4) | (hi[96:] << 6)
    sc = np.array([1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -128], np.int8)
    d = 0.125
    raw = np.frombuffer(
        ql.tobytes() + qh.tobytes() + sc.tobytes() + np.float16(d).tobytes(), np.uint8
    ).reshape(1, -1)
    want = (d * np.repeat(sc.astype(np.float32), 16) * (q - 32)).astype(np.float32)
    np.testing.assert_array_equal(dequantize(raw, "Q6_K")[0], want)
    np.testing.assert_array_equal(kquants.q6_k_weights(raw)[0], want)


def test_q4_k_becomes_q4_1_blocks_of_the_same_weights() -> None:
    """Only the scales move: to float16, a relative 2**-11 of each sub-block's scale."""
    raw = random_blocks(16, 3, kquants.Q4_K_BYTES)
    want = dequantize(raw, "Q4_K")
    got = dequantize(kquants.q4_k_to_q4_1(raw), "Q4_1")
    assert got.shape == want.shape == (16, 768)
    scale = np.abs(want).reshape(16, -1, 32).max(axis=-1, keepdims=True)
    assert np.all(np.abs(got - want).reshape(16, -1, 32) <= scale * 2**-10 + 1e-9)


def test_q6_k_becomes_q8_0_within_half_a_step() -> None:
    """Half a step of max|w| / 127, and the step's own rounding to float16 (2**-11 of it, times
    127 at most)."""
    raw = random_blocks(16, 2, kquants.Q6_K_BYTES, seed=1)
    want = dequantize(raw, "Q6_K")
    np.testing.assert_array_equal(kquants.q6_k_weights(raw), want)
    got = dequantize(kquants.q6_k_to_q8_0(raw), "Q8_0")
    amax = np.abs(want).reshape(16, -1, 32).max(axis=-1, keepdims=True)
    err = np.abs(got - want).reshape(16, -1, 32)
    assert np.all(err <= amax * (1 / 254 + 2**-10) + 1e-9)


def test_q8_0_quantizing_agrees_with_gguf_s() -> None:
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((8, 128)) * rng.uniform(0.01, 5, (8, 1))).astype(np.float32)
    w[0, :32] = 0  # an all-zero block: scale 0, not a division by 0
    mine = kquants.q8_0_from_weights(w)
    theirs = gguf.quants.quantize(w, gguf.GGMLQuantizationType.Q8_0)
    np.testing.assert_array_equal(mine, theirs)


def _file_with(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> Path:
    w = gguf.GGUFWriter(str(path), arch="llama")
    for name, (qtype, data) in tensors.items():
        w.add_tensor(name, data, raw_dtype=gguf.GGMLQuantizationType[qtype])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_k_quant_weights_load_as_kernel_blocks(tmp_path: Path) -> None:
    """A Q4_K layer loads as its Q4_1 blocks, a Q4_K one beside a Q6_K one as Q8_0 blocks of
    the file's weights, and rows reordered take the file's rows."""
    from eoc_native.llm.gguf import GGUFFile
    from eoc_native.llm.weights import read_weight

    q4k = random_blocks(64, 2, kquants.Q4_K_BYTES, seed=3)  # 64 outputs of 512 inputs
    q6k = random_blocks(32, 2, kquants.Q6_K_BYTES, seed=4)
    gf = GGUFFile(_file_with(tmp_path / "k.gguf", {"a": ("Q4_K", q4k), "b": ("Q6_K", q6k)}))
    dense_a, dense_b = dequantize(q4k, "Q4_K"), dequantize(q6k, "Q6_K")
    one = read_weight(gf, "a")
    assert one.kind == "q4" and one.shape == (512, 64)
    np.testing.assert_array_equal(one.dense(), dequantize(kquants.q4_k_to_q4_1(q4k), "Q4_1").T)
    both = read_weight(gf, "a", "b")
    assert both.kind == "q8" and both.shape == (512, 96)
    joined = np.concatenate([dense_a, dense_b])
    np.testing.assert_array_equal(
        both.dense(), dequantize(kquants.q8_0_from_weights(joined), "Q8_0").T
    )
    amax = np.abs(joined).reshape(96, -1, 32).max(axis=-1, keepdims=True)
    err = np.abs(both.dense().T - joined).reshape(96, -1, 32)
    assert np.all(err <= amax * (1 / 254 + 2**-10) + 1e-9)
    order = np.arange(64)[::-1].copy()
    flipped = read_weight(gf, "a", row_orders={"a": order})
    np.testing.assert_array_equal(flipped.dense(), one.dense()[:, order])


def _finite_halves(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random float16 bit patterns, every finite one possible (subnormals, zeros, up to 65504)."""
    bits = rng.integers(0, 1 << 16, shape, dtype=np.uint16)
    bits[(bits & 0x7C00) == 0x7C00] &= 0xBFFF  # an infinity's or a NaN's exponent made finite
    return bits.view(np.uint8)


@pytest.mark.parametrize("type_name", ["Q4_K", "Q6_K"])
def test_the_c_kernels_convert_byte_for_byte_as_numpy_does(type_name: str) -> None:
    """The C conversion a model load runs where eoc's C kernels run: the same bytes as the numpy
    functions above, over any bytes with finite float16 scales (their rounding to float16 at
    every exponent, subnormals and overflow to infinity included)."""
    from eoc_native.quant import cbuild, ckernels

    if cbuild.compiler() is None:
        pytest.skip("no C compiler here")
    size = kquants.Q4_K_BYTES if type_name == "Q4_K" else kquants.Q6_K_BYTES
    ours = kquants.q4_k_to_q4_1 if type_name == "Q4_K" else kquants.q6_k_to_q8_0
    theirs = ckernels.q4_k_to_q4_1 if type_name == "Q4_K" else ckernels.q6_k_to_q8_0
    rng = np.random.default_rng(11)
    raw = rng.integers(0, 256, (300, 3, size), dtype=np.uint8)
    for at in (0, 2) if type_name == "Q4_K" else (208,):
        raw[..., at : at + 2] = _finite_halves(rng, (300, 3, 1))
    raw[0] = random_blocks(1, 3, size, seed=5).reshape(3, size)  # small scales, as models have
    with np.errstate(over="ignore"):  # numpy warns where a scale rounds to infinity
        want = ours(raw.reshape(300, -1))
    got = theirs(raw.reshape(300, -1))
    assert got.dtype == np.uint8 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert theirs(np.zeros((0, size), np.uint8)).shape == (0, want.shape[1] // 3)
    with pytest.raises(InputError, match="not whole blocks"):
        theirs(np.zeros((2, size + 1), np.uint8))
