"""Compute backends: bf16 handling, the correctness check, and which backends run here."""

from __future__ import annotations

import numpy as np
import pytest

from eoc.errors import ConfigError
from eoc_native.backends import CudaBackend, MlxBackend, NumpyBackend, Shape, check, usable_backends
from eoc_native.backends.base import from_bf16_bits, operands, to_bf16_bits
from eoc_native.backends.cpu import blas_name


def test_bf16_rounds_to_nearest_even() -> None:
    assert to_bf16_bits(np.array([1.0], np.float32))[0] == 0x3F80
    # 1 + 2^-8 is halfway between two bf16 values: ties go to the even one (1.0)
    assert from_bf16_bits(to_bf16_bits(np.array([1 + 2**-8], np.float32)))[0] == 1.0
    assert from_bf16_bits(to_bf16_bits(np.array([1 + 3 * 2**-8], np.float32)))[0] == 1 + 2**-6
    x = np.array([3.140625, -2.5, 0.0], np.float32)  # exactly representable in bf16
    assert (from_bf16_bits(to_bf16_bits(x)) == x).all()


def test_shapes_are_checked_and_parsed() -> None:
    assert Shape.parse("1x4096x4096") == Shape(1, 4096, 4096) and Shape(2, 3, 4).flops == 48
    for bad in ("1x2", "axbxc", "0x1x1"):
        with pytest.raises(ConfigError):
            Shape.parse(bad)


def test_numpy_runs_right_and_names_its_blas() -> None:
    b = NumpyBackend()
    assert check(b) is None
    assert b.name == f"numpy/{blas_name()}" and blas_name() != "unknown"


def test_mlx_runs_right_on_its_device() -> None:
    pytest.importorskip("mlx.core", reason="mlx is not installed (pip install 'mlx[cpu]' on Linux)")
    b = MlxBackend()
    assert check(b) is None


def test_cuda_says_why_it_cannot_run_on_a_host_without_a_gpu() -> None:
    b = CudaBackend()
    why = b.unavailable()
    if why is None:
        assert check(b) is None  # a GPU host: it must also be right
    else:
        assert "CUDA" in why or "CuPy" in why


def test_a_backend_that_computes_wrong_or_fails_never_passes() -> None:
    class Wrong(NumpyBackend):
        def result(self, prepared):  # type: ignore[no-untyped-def]
            return prepared.out * 1.1

    class Broken(NumpyBackend):
        def run(self, prepared):  # type: ignore[no-untyped-def]
            raise MemoryError("out of device memory")

    assert "wrong result" in (check(Wrong()) or "")
    assert "out of device memory" in (check(Broken()) or "")


def test_usable_backends_lists_why_each_other_one_cannot_run() -> None:
    ok, why = usable_backends()
    assert any(b.name.startswith("numpy") for b in ok)
    assert set(why) | {b.name for b in ok} >= {"cuda"} or any(b.name.startswith("cuda") for b in ok)


def test_compute_matches_the_reference() -> None:
    x, w = operands(Shape(3, 32, 5), seed=4)
    want = x.astype(np.float64) @ from_bf16_bits(w).astype(np.float64)
    assert np.allclose(NumpyBackend().compute(x, w), want, rtol=1e-4, atol=1e-4)
