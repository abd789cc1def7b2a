"""The C kernels: built once into eoc's cache with the machine's compiler, checked arguments, and
numba's kernels where no compiler builds them (``EOC_KERNELS``).

What they compute is checked beside numba's in test_llm_weights.py, test_llm_tiny.py and
test_decode_layer.py (the ``kernels`` fixture runs each test on both).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eoc.errors import ConfigError, InputError, MissingExtra
from eoc_native.quant import cbuild, kernels_cached, load_kernels
from eoc_native.quant.blocks import QuantBlocks

pytestmark = pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler here")

RNG = np.random.default_rng(3)


def _blocks(n_in: int = 64, n_out: int = 64) -> QuantBlocks:
    nb = n_in // 32
    d = (RNG.random((nb, n_out)) * 0.01).astype(np.float16)
    return QuantBlocks.from_columns(4, RNG.integers(0, 256, (nb, 16, n_out), np.uint8), d, -8 * d)


def test_a_build_is_kept_and_a_changed_source_builds_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cbuild, "INSTALLED", tmp_path / "installed")  # none built at install
    told: list[str] = []
    assert cbuild.built() is None and not kernels_cached()
    path = cbuild.build(told.append)
    assert path.is_file() and path.parent == tmp_path / "kernels"
    assert told == ["compiling the matmul kernels: the first run only (eoc keeps them)"]
    assert cbuild.build(told.append) == path and len(told) == 1  # kept: no second compile
    assert cbuild.built() == path and kernels_cached()
    changed = tmp_path / "ckernels.c"
    changed.write_text(cbuild.SOURCE.read_text() + "\nint eoc_changed(void) { return 1; }\n")
    monkeypatch.setattr(cbuild, "SOURCE", changed)
    again = cbuild.build(told.append)
    assert again != path and len(told) == 2
    encoder = tmp_path / "encoder.c"  # the 8-bit encoder is built into the same library
    encoder.write_text(cbuild.ENCODER.read_text() + "\nint eoc_changed_too(void) { return 1; }\n")
    monkeypatch.setattr(cbuild, "ENCODER", encoder)
    assert cbuild.build(told.append) not in (path, again) and len(told) == 3
    assert not [p for p in (tmp_path / "kernels").iterdir() if p.suffix == ".part"]


def test_a_failing_compiler_says_why_and_leaves_nothing_half_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken-cc"
    # writes a cut-off output, then fails: the part file must never become the library
    broken.write_text(
        "#!/bin/sh\n"
        'while [ $# -gt 0 ]; do [ "$1" = -o ] && echo cut-off > "$2"; shift; done\n'
        'echo "no such flag" >&2\nexit 1\n'
    )
    broken.chmod(0o755)
    monkeypatch.setenv("CC", str(broken))
    monkeypatch.setenv("EOC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(MissingExtra, match="could not build eoc's C kernels: no such flag"):
        cbuild.build()
    assert not list((tmp_path / "cache" / "kernels").iterdir())
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with pytest.raises(MissingExtra, match="no C compiler"):
        cbuild.build()


def _kernels_in_a_child(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "from eoc_native.quant import load_kernels; print(load_kernels().NAME)"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )


def test_without_a_compiler_numba_runs_unless_c_was_asked_for(tmp_path: Path) -> None:
    no_cc = {"CC": str(tmp_path / "no-such-compiler"), "EOC_CACHE_DIR": str(tmp_path)}
    assert _kernels_in_a_child(no_cc).stdout.strip() == "numba"
    asked = _kernels_in_a_child({**no_cc, "EOC_KERNELS": "c"})
    assert asked.returncode != 0 and "EOC_KERNELS=c, and no C compiler" in asked.stderr
    assert _kernels_in_a_child({"EOC_KERNELS": "numba"}).stdout.strip() == "numba"


def test_a_kernel_choice_that_is_neither_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_KERNELS", "fortran")
    with pytest.raises(ConfigError, match="EOC_KERNELS must be c or numba"):
        load_kernels()


def test_arrays_are_checked_before_their_address_goes_to_c(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_KERNELS", "c")
    k = load_kernels()
    w = _blocks()
    x = RNG.standard_normal(64).astype(np.float32)
    out = np.empty(64, np.float32)
    k.q4_matvec(w.qs, w.d, w.m, x, out)
    np.testing.assert_allclose(out, x @ w.dense(), rtol=1e-4, atol=1e-4)
    bad = {
        "float32 scales": (w.qs, w.d.astype(np.float32), w.m, x, out),
        "a short row": (w.qs, w.d, w.m, x[:32], out),
        "a strided row": (w.qs, w.d, w.m, np.repeat(x, 2)[::2], out),
        "a short output": (w.qs, w.d, w.m, x, out[:10]),
        "float64 output": (w.qs, w.d, w.m, x, out.astype(np.float64)),
        "minimums of another shape": (w.qs, w.d, w.m[:, :1], x, out),
        "no minimums": (w.qs, w.d, None, x, out),
        "a list": (w.qs, w.d, w.m, list(x), out),
    }
    wide = np.zeros((1, 2, 16, 1024), np.uint8)  # a tile wider than any eoc lays out
    scales = np.zeros((1, 2, 1024), np.uint16)
    bad["a tile of 1024 columns"] = (wide, scales, scales.copy(), x, np.empty(1024, np.float32))
    for what, args in bad.items():
        with pytest.raises(InputError):
            k.q4_matvec(*args)
            pytest.fail(f"{what} was taken")
    cache = np.zeros((8, 2, 16), np.float32)
    qkv = np.zeros(4 * 16 + 2 * 2 * 16, np.float32)
    table = np.zeros(8, np.float32)
    with pytest.raises(InputError, match="no position 8"):
        k.decode_attention(
            qkv, cache, cache.copy(), 8, table, table, 4, 0.25, np.empty(64, np.float32)
        )
    huge = np.zeros((8, 2, 4096), np.float32)  # a head far wider than any model's
    with pytest.raises(InputError, match="no position 0"):
        k.decode_attention(
            np.zeros(8 * 4096, np.float32),
            huge,
            huge.copy(),
            0,
            np.zeros(2048, np.float32),
            np.zeros(2048, np.float32),
            4,
            0.25,
            np.empty(4 * 4096, np.float32),
        )
    with pytest.raises(InputError, match="evenly"):
        k.decode_attention(
            qkv, cache, cache.copy(), 0, table, table, 3, 0.25, np.empty(64, np.float32)
        )


def test_a_layer_plan_refuses_what_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOC_KERNELS", "c")
    k = load_kernels()
    dim, hidden = 64, 96
    caches = (np.zeros((1, 8, 2, 16), np.float32), np.zeros((1, 8, 2, 16), np.float32))
    norm = np.ones(dim, np.float32)

    def q(n_in: int, n_out: int) -> tuple[object, object, object]:
        b = _blocks(n_in, n_out)
        return b.qs, b.d, b.m

    layer = (norm, norm, (q(dim, 128), q(dim, dim), q(dim, 2 * hidden), q(hidden, dim)))
    plan = k.LayerPlan([layer], caches)
    size = k.decode_scratch(dim, dim, 128, dim, 2 * hidden)
    x = RNG.standard_normal(dim).astype(np.float32)
    table = np.zeros(8, np.float32)
    args = (1e-5, 0, table, table, 4, 2, 16, 0.25, hidden)
    plan.run(x, *args, np.zeros(size, np.float32), 8)
    assert np.isfinite(x).all()
    with pytest.raises(InputError, match="do not fit"):
        plan.run(x, *args, np.zeros(size - 1, np.float32), 8)
    with pytest.raises(InputError, match="outside the KV cache"):
        plan.run(x, 1e-5, 8, table, table, 4, 2, 16, 0.25, hidden, np.zeros(size, np.float32), 8)
    with pytest.raises(InputError, match="do not fit"):  # down takes more than gate-up makes
        plan.run(
            x, 1e-5, 0, table, table, 4, 2, 16, 0.25, hidden // 2, np.zeros(size, np.float32), 8
        )
    with pytest.raises(InputError, match="outside the KV cache of 8"):  # a caller's larger n_ctx
        plan.run(x, 1e-5, 8, table, table, 4, 2, 16, 0.25, hidden, np.zeros(size, np.float32), 64)
    with pytest.raises(InputError, match="do not fit its width"):
        k.LayerPlan(
            [(norm, norm, (q(dim, 128), q(dim, dim), q(hidden, 2 * hidden), q(hidden, dim)))],
            caches,
        )


def test_a_build_made_at_install_is_found_before_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``make`` runs after pip (``python -m eoc_native.quant.cbuild --install``): the
    library beside the module, found by every later run whatever its cache folder."""
    monkeypatch.setattr(cbuild, "INSTALLED", tmp_path / "installed")
    monkeypatch.setenv("EOC_CACHE_DIR", str(tmp_path / "cache"))
    assert cbuild.main(["--install"]) == 0
    installed = cbuild.built()
    assert installed is not None and installed.parent == tmp_path / "installed"
    monkeypatch.setenv("EOC_CACHE_DIR", str(tmp_path / "another cache"))
    told: list[str] = []
    assert cbuild.build(told.append) == installed and told == []
    assert not (tmp_path / "another cache").exists()
    assert cbuild.main(["--bogus"]) == 2


def test_the_thread_count_is_each_calling_threads_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """As numba's: a model's pass in one thread never sets another's count."""
    import threading

    monkeypatch.setenv("EOC_KERNELS", "c")
    k = load_kernels()
    before = k.get_num_threads()
    seen: list[int] = []

    def other() -> None:
        k.set_num_threads(1)
        seen.append(k.get_num_threads())

    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert seen == [1] and k.get_num_threads() == before
    with pytest.raises(InputError, match="outside"):
        k.set_num_threads(k.pool_size() + 1)


def test_a_first_load_compiles_while_it_reads_and_finishes_even_for_a_refused_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run compiles the C kernels while the model's header and tokenizer are read
    (:func:`eoc_native.llm.generate.load`); a file refused meanwhile (an architecture the runner
    does not read) is refused only once the build is whole: none is left half made."""
    from eoc_native.llm.generate import load
    from eoc_native.quant import ckernels
    from tests.native.test_llm_tiny import write_tiny_model

    monkeypatch.setenv("EOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cbuild, "INSTALLED", tmp_path / "installed")  # none built at install
    monkeypatch.setattr(ckernels, "_LIB", None)  # this process has loaded none either
    told: list[str] = []
    refused = write_tiny_model(tmp_path / "mamba.gguf", arch="mamba")
    assert not kernels_cached()
    with pytest.raises(InputError, match="mamba"):
        load(refused, progress=lambda what, _: told.append(what))
    built = cbuild.built()
    assert built is not None and built.is_file()
    assert not list(built.parent.glob("*.part"))
    assert told == ["compiling the matmul kernels: the first run only (eoc keeps them)"]
