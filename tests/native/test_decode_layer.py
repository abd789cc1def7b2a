"""A decode step in one compiled call per layer (``kernels.decode_layer``), and its thread count.

The layer kernel must compute what the products one by one compute (the dispatcher's path) and be
counted the same; it runs only where the dispatcher would run every product of the layer on the
quantized CPU kernels. The thread count is eoc's (:mod:`eoc_native.llm.threads`), set for numba and
for the BLAS library around a forward pass and put back after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")
pytest.importorskip("numba", reason='the quantized kernels need numba: pip install ".[native]"')

from eoc.errors import ConfigError, MissingExtra
from eoc_native.autotune.dispatch import Dispatcher
from eoc_native.llm.backend import LocalModel
from eoc_native.llm.generate import load
from eoc_native.llm.llama import Llama
from eoc_native.llm.threads import ENV, Pools, cores, model_threads
from tests.native.test_llm_tiny import write_tiny_model

#: Every layer matrix as 4-bit blocks (q, k and v one type, gate and up one type: the runner
#: joins each group side by side), so the layer kernel can run the model.
FOUR_BIT = {
    "q": "Q4_1",
    "k": "Q4_1",
    "v": "Q4_1",
    "o": "Q4_0",
    "gate": "Q4_0",
    "up": "Q4_0",
    "down": "Q4_1",
}
PROMPT = [5, 40, 77, 12, 90]
STEPS = [33, 8, 101, 64, 7, 19]


@pytest.fixture(scope="module")
def four_bit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(
        tmp_path_factory.mktemp("layer") / "four-bit.gguf", tensor_types=FOUR_BIT
    )


def _decode(model: Llama) -> tuple[np.ndarray, Any]:
    """Logits of each step after the prompt, and the products the dispatcher counted for them."""
    model.reset()
    model.forward(PROMPT)
    before = model.dispatcher.calls.copy()
    steps = np.stack([model.forward([t])[0] for t in STEPS])
    return steps, model.dispatcher.calls - before


def test_a_decode_step_in_one_call_a_layer_is_the_products_one_by_one(
    four_bit: Path, monkeypatch: pytest.MonkeyPatch, kernels: Any
) -> None:
    fused_model, _ = load(four_bit, n_ctx=48)
    assert fused_model._k is kernels
    fused, fused_calls = _decode(fused_model)
    plan = fused_model._decode
    assert plan is not None and plan.quant and plan.runs
    monkeypatch.setattr(Llama, "_decode_plan", lambda self: None)  # products one by one
    plain_model, _ = load(four_bit, n_ctx=48)
    plain, plain_calls = _decode(plain_model)
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-5)
    assert (fused.argmax(axis=1) == plain.argmax(axis=1)).all()
    # counted as if the dispatcher had run each product: the same estimate either way
    assert fused_calls == plain_calls
    assert any(key.startswith("1x") for _, key in fused_calls)


def test_the_layer_kernel_keeps_the_whole_prompt_in_its_cache(four_bit: Path, kernels: Any) -> None:
    model, _ = load(four_bit, n_ctx=48)
    assert model._k is kernels
    ids = PROMPT + STEPS
    full = model.forward(ids, all_logits=True)
    model.reset()
    model.forward(ids[:3])
    steps = np.stack([model.forward([t])[0] for t in ids[3:]])
    assert model._decode is not None and model._decode.quant
    # float32 sums split across threads in another order: a logit may move by ~1e-4 under load
    # (seen once at 1.2e-4); a cache that loses a position moves them by whole units
    np.testing.assert_allclose(steps, full[3:], rtol=1e-4, atol=5e-4)


def test_a_product_dispatched_elsewhere_keeps_the_products_one_by_one(
    four_bit: Path, kernels: Any
) -> None:
    fused, _ = _decode(load(four_bit, n_ctx=48)[0])
    model, _ = load(four_bit, n_ctx=48, dispatcher=Dispatcher(default="numpy"))
    on_numpy, calls = _decode(model)
    assert model._decode is not None and not model._decode.quant
    ran = {backend.split("/")[0] for backend, key in calls if key.startswith("1x")}
    assert "numpy" in ran
    np.testing.assert_allclose(on_numpy, fused, rtol=1e-4, atol=1e-4)


def test_a_forward_runs_on_eocs_thread_count_and_puts_the_pools_back(
    four_bit: Path, kernels: Any
) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    model, _ = load(four_bit, n_ctx=48, threads=1)
    seen: list[tuple[int, list[int]]] = []
    apply = model.dispatcher.apply

    def spy(x: Any, dw: Any) -> Any:
        blas = [
            p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"
        ]
        seen.append((kernels.get_num_threads(), blas))
        return apply(x, dw)

    model.dispatcher.apply = spy  # type: ignore[method-assign]
    numba_before = kernels.get_num_threads()
    # the BLAS pool at 2 threads first, whatever OPENBLAS_NUM_THREADS or the cores made it
    # (make unit runs at 1: a pass that left it alone would pass unseen)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        blas_before = threadpoolctl.threadpool_info()
        assert {p["num_threads"] for p in blas_before if p["user_api"] == "blas"} == {2}
        model.forward(PROMPT * 2)  # 10 rows: the BLAS path
        model.forward([3])
        assert threadpoolctl.threadpool_info() == blas_before
    assert seen and all(n == 1 for n, _ in seen)
    assert all(b == 1 for _, blas in seen[:-1] for b in blas)  # the prompt's products
    assert kernels.get_num_threads() == numba_before


def test_the_pools_are_set_only_for_the_pass(kernels: Any) -> None:
    before = kernels.get_num_threads()
    pools = Pools(kernels, 1)
    with pools(1):
        assert kernels.get_num_threads() == 1
    assert kernels.get_num_threads() == before
    with pytest.raises(RuntimeError), pools(1):
        raise RuntimeError("a failing pass")
    assert kernels.get_num_threads() == before


def test_thread_counts_are_checked(
    four_bit: Path, monkeypatch: pytest.MonkeyPatch, kernels: Any
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert model_threads(None, pool=64) == min(cores(), 64)
    assert model_threads(None, pool=1) == 1
    assert model_threads(3, pool=4) == 3
    for bad in (0, -2, True, 1.5, "2"):
        with pytest.raises(ConfigError, match="at least 1"):
            model_threads(bad, pool=4)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="NUMBA_NUM_THREADS"):
        model_threads(5, pool=4)
    monkeypatch.setenv(ENV, "3")
    assert model_threads(None, pool=4) == 3
    with pytest.raises(ConfigError, match=ENV):
        model_threads(None, pool=2)
    monkeypatch.setenv(ENV, "two")
    with pytest.raises(ConfigError, match="whole number"):
        LocalModel(four_bit)  # refused when made, not at the first question
    monkeypatch.delenv(ENV)
    with pytest.raises(ConfigError, match="at least 1"):
        LocalModel(four_bit, threads=0)
    pool = kernels.pool_size()
    too_many = LocalModel(four_bit, threads=pool + 1)
    with pytest.raises(ConfigError, match="NUMBA_NUM_THREADS"):
        too_many.load()


def test_the_c_and_numba_kernels_decode_alike(
    four_bit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both kernel sets run the same arithmetic (numba's fastmath may reorder a sum): their
    decode steps agree to float32 rounding, and on every next token."""
    steps = {}
    for name in ("c", "numba"):
        monkeypatch.setenv("EOC_KERNELS", name)
        try:
            model, _ = load(four_bit, n_ctx=48)
        except MissingExtra as exc:
            pytest.skip(f"no {name} kernels here: {exc.reason}")
        assert model._k.NAME.lower() == name
        steps[name] = _decode(model)[0]
    np.testing.assert_allclose(steps["c"], steps["numba"], rtol=1e-4, atol=1e-4)
    assert (steps["c"].argmax(axis=1) == steps["numba"].argmax(axis=1)).all()


def test_a_choice_made_while_autotuning_is_not_kept_after_it(
    four_bit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a tuning profile sends the layer's products elsewhere, each step runs them one by
    one; once autotuning is off, the default (cpu-quant) runs the layer kernel again."""
    model, _ = load(four_bit, n_ctx=48)
    tuning = [True]
    monkeypatch.setattr(Dispatcher, "autotuning", property(lambda self: tuning[0]))
    default_for = Dispatcher.backend_for

    def backend_for(self: Dispatcher, dw: Any, m: int) -> Any:
        if tuning[0]:
            return self._default_for(None)  # the profile's choice: numpy
        return default_for(self, dw, m)

    monkeypatch.setattr(Dispatcher, "backend_for", backend_for)
    model.forward(PROMPT)
    assert model._decode_plan() is None
    tuning[0] = False
    assert model._decode_plan() is not None
