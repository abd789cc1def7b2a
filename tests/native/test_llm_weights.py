"""Weights kept as the file stores them, the quantized kernels, and the dispatcher under the model.

The kernels are checked against the ``gguf`` package's own dequantizer (the llama.cpp project's
reference code), not against a second copy of this project's arithmetic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("numba", reason='the quantized kernels need numba: pip install ".[native]"')

from eoc.errors import ConfigError, InputError, Refusal
from eoc_native.autotune.dispatch import Dispatcher
from eoc_native.backends import NumpyBackend, QuantCpuBackend, check
from eoc_native.backends.quant import FEW_ROWS
from eoc_native.llm.energy import estimate, nj_per_mac
from eoc_native.llm.generate import generate_ids, load
from eoc_native.llm.weights import Weight
from eoc_native.quant.blocks import QuantBlocks, blocks_from_raw, concat_blocks
from eoc_native.quant.formats import dequantize, quantize
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model

RNG = np.random.default_rng(7)


def _matrix(n_out: int, n_in: int) -> np.ndarray:
    return (RNG.standard_normal((n_out, n_in)) * 0.2).astype(np.float32)


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q8_0"])
@pytest.mark.parametrize("n_out", [40, 96])  # a padded last tile; whole tiles
def test_blocks_are_the_files_weights(qtype: str, n_out: int, kernels: Any) -> None:
    """Read from the file's bytes by the C tiler, or numpy's beside numba's kernels."""
    w = _matrix(n_out, 96)  # GGUF layout: (n_out, n_in)
    raw = quantize(w, qtype)
    blocks = blocks_from_raw(raw, qtype, n_out, 96)
    reference = dequantize(raw, qtype).reshape(n_out, 96).T  # (n_in, n_out) for x @ W
    assert blocks.n_in == 96 and blocks.n_out == n_out
    # the scales are the file's float16, kept as their bits
    assert blocks.d.dtype == np.uint16 and (blocks.m is None or blocks.m.dtype == np.uint16)
    np.testing.assert_allclose(blocks.dense(), reference, rtol=0, atol=1e-6)


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q8_0"])
@pytest.mark.parametrize("rows", [1, 3, FEW_ROWS + 5])
def test_the_kernels_multiply_by_the_dequantized_matrix(
    qtype: str, rows: int, kernels: Any
) -> None:
    n_out, n_in = 600, 160  # more than one tile of output columns, and a ragged last tile
    raw = quantize(_matrix(n_out, n_in), qtype)
    w = Weight("w", quant=blocks_from_raw(raw, qtype, n_out, n_in))
    x = RNG.standard_normal((rows, n_in)).astype(np.float32)
    want = x.astype(np.float64) @ dequantize(raw, qtype).reshape(n_out, n_in).T.astype(np.float64)
    backend = QuantCpuBackend()
    assert backend._load_modules()[1] is kernels
    got = backend.apply(x, backend.load_weight(w))
    assert got.shape == (rows, n_out) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_joined_blocks_are_the_matrices_side_by_side() -> None:
    a, b = (blocks_from_raw(quantize(_matrix(n, 64), "Q4_1"), "Q4_1", n, 64) for n in (32, 48))
    joined = concat_blocks([a, b])
    np.testing.assert_array_equal(joined.dense(), np.concatenate([a.dense(), b.dense()], axis=1))
    q8 = blocks_from_raw(quantize(_matrix(32, 64), "Q8_0"), "Q8_0", 32, 64)
    with pytest.raises(InputError):
        concat_blocks([a, q8])


def test_damaged_blocks_are_refused() -> None:
    raw = quantize(_matrix(8, 64), "Q4_1")
    with pytest.raises(InputError, match="needs"):
        blocks_from_raw(raw[:, :-1], "Q4_1", 8, 64)
    with pytest.raises(InputError, match="whole blocks"):
        blocks_from_raw(raw, "Q4_1", 8, 60)
    with pytest.raises(InputError, match="no quantized kernel"):
        blocks_from_raw(raw, "Q5_0", 8, 64)
    with pytest.raises(InputError):
        Weight("neither")


def test_the_quant_backend_takes_only_blocks_and_passes_its_check() -> None:
    backend = QuantCpuBackend()
    assert check(backend) is None
    dense = Weight("d", dense_f32=np.ones((32, 4), np.float32))
    assert not backend.takes(dense)
    with pytest.raises(Refusal):
        backend.load_weight(dense)


class CountingBackend(NumpyBackend):
    """numpy, counting how often it prepares a weight."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def load_weight(self, weight: Any) -> Any:
        self.loads += 1
        return super().load_weight(weight)


def test_a_weight_is_prepared_once_per_backend() -> None:
    counting = CountingBackend()
    d = Dispatcher(backends=[counting], default="numpy")
    raw = quantize(_matrix(64, 64), "Q4_1")
    dw = d.weight(Weight("w", quant=blocks_from_raw(raw, "Q4_1", 64, 64)))
    for rows in (1, 1, 7, 1):
        d.apply(np.ones((rows, 64), np.float32), dw)
    assert counting.loads == 1
    assert sum(d.calls.values()) == 4 and {b for b, _ in d.calls} == {counting.name}


def test_the_default_runs_blocks_on_the_kernels_and_the_rest_on_numpy() -> None:
    d = Dispatcher()
    q = d.weight(
        Weight("q", quant=blocks_from_raw(quantize(_matrix(32, 64), "Q8_0"), "Q8_0", 32, 64))
    )
    f = d.weight(Weight("f", dense_f32=np.ones((64, 32), np.float32)))
    d.apply(np.ones((1, 64), np.float32), q)
    d.apply(np.ones((1, 64), np.float32), f)
    assert set(d.calls) == {("cpu-quant", "1x64x32"), (NumpyBackend().name, "1x64x32")} or {
        b.split("/")[0] for b, _ in d.calls
    } == {"cpu-quant", "numpy"}
    assert "cpu-quant for quantized weights" in d.describe()
    with pytest.raises(ConfigError, match="cannot run here"):
        Dispatcher(default="no-such-backend")


@pytest.fixture(scope="module")
def block_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "blocks.gguf", tensor_types=BLOCKS)


def test_the_model_gives_the_same_logits_on_every_cpu_backend(block_model: Path) -> None:
    ids = [5, 9, 40, 41, 7]
    logits = {}
    for name in ("cpu-quant", "numpy"):
        d = Dispatcher(default=name)
        model, _ = load(block_model, n_ctx=32, dispatcher=d)
        model.reset()
        prefill = model.forward(ids, all_logits=True)  # 5 rows: the dequantize + BLAS path
        step = model.forward([3])  # 1 row: the kernels
        logits[name] = np.concatenate([prefill, step])
        # every product with a weight (inner size 64 or 96; attention's is a head, 16) ran on
        # the backend asked for
        weights_ran = {b.split("/")[0] for b, key in d.calls if key.split("x")[1] in ("64", "96")}
        assert weights_ran == {name}
        assert all(isinstance(w.weight.quant, QuantBlocks) for w in model.weights())
    np.testing.assert_allclose(logits["cpu-quant"], logits["numpy"], rtol=1e-4, atol=1e-4)


def test_generation_counts_every_matmul(block_model: Path) -> None:
    d = Dispatcher()
    model, _ = load(block_model, n_ctx=32, dispatcher=d)
    out = list(generate_ids(model, [5, 9, 40], eos_id=-1, max_tokens=4))
    assert len(out) == 4
    # per forward: 4 weights x 2 layers + the output, and 2 attention products x 2 layers
    forwards = 4  # the prompt, then one step per token but the last
    weight_calls = sum(n for (_, key), n in d.calls.items() if key.split("x")[1] in ("64", "96"))
    assert weight_calls == forwards * (4 * 2 + 1)
    # and the attention's 2 products per layer: per key/value head for the prompt, and per
    # decoding step (fused into one compiled call)
    attention = sum(n for (_, key), n in d.calls.items() if key.split("x")[1] not in ("64", "96"))
    assert attention == 2 * 2 * 2 + (forwards - 1) * 2 * 2


def test_the_estimate_says_where_its_figure_comes_from() -> None:
    uj, basis = estimate({("cpu-quant", "1x576x3072"): 10, ("numpy", "1x64x40"): 3})
    macs = 576 * 3072 * 10 + 64 * 40 * 3
    assert uj == round(macs * nj_per_mac("cpu-quant") / 1000)
    assert "documented per-backend constants" in basis and "multiply-adds" in basis
    assert nj_per_mac("cuda/torch-bf16") < nj_per_mac("numpy/scipy-openblas")
    assert estimate({})[0] == 1  # nothing ran: the floor, never 0


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_1"])
def test_embedding_rows_are_the_files_rows(tmp_path: Path, qtype: str) -> None:
    """A token's embedding row, read on every decode step (Q8_0 without the gguf package's
    detour), is the package's own dequantized row."""
    from eoc_native.llm.gguf import GGUFFile
    from eoc_native.llm.llama import Embedding

    path = write_tiny_model(tmp_path / "tiny.gguf", tensor_types=BLOCKS)
    emb = Embedding(GGUFFile(path))
    assert emb.type_name == "Q8_0"
    ids = np.array([0, 3, emb.vocab - 1])
    want = dequantize(np.asarray(emb.raw[ids]), "Q8_0").reshape(len(ids), emb.dim)
    np.testing.assert_array_equal(emb[ids], want)
    if qtype != "Q8_0":  # another type goes through the package
        raw = quantize(_matrix(4, 64), qtype)
        emb.raw, emb.type_name, emb.dim = raw.reshape(4, -1), qtype, 64
        want = dequantize(raw, qtype).reshape(4, 64)
        np.testing.assert_array_equal(emb[np.arange(4)], want)
