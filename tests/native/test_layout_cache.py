"""The tiled weights kept on disk (native/eoc_native/llm/layout_cache.py): a later load maps them
and generates the same tokens; anything wrong with the cache only costs the tiling again."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the native extra is not installed")

from eoc_native.llm.generate import generate_ids, load
from eoc_native.llm.layout_cache import LayoutCache
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model


@pytest.fixture(autouse=True)
def numba_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache serves numba's kernels (numpy tiles for them); the C kernels tile faster than
    it maps, and load() leaves it out for them (the last test)."""
    pytest.importorskip("numba", reason="the layout cache is for numba's kernels")
    monkeypatch.setenv("EOC_KERNELS", "numba")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_model(tmp_path / "tiny.gguf", tensor_types=BLOCKS)


def tokens(path: Path, layouts: LayoutCache | None) -> list[int]:
    llama, tok = load(path, layouts=layouts)
    ids = tok.encode("hello there", special=True)
    return list(generate_ids(llama, ids, eos_id=tok.eos_id, max_tokens=12))


def test_a_second_load_maps_the_kept_layout_and_says_the_same(model: Path, tmp_path: Path) -> None:
    want = tokens(model, None)
    first = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, first) == want
    assert first.writes > 0 and first.hits == 0
    again = LayoutCache(model, tmp_path / "cache")
    assert again.folder == first.folder
    llama, _ = load(model, layouts=again)
    assert again.hits == first.writes and again.writes == 0
    mapped = llama.layers[0].wqkv.weight.quant
    assert mapped is not None and isinstance(mapped.qs.base, np.memmap)  # mapped, not copied
    assert tokens(model, LayoutCache(model, tmp_path / "cache")) == want


@pytest.mark.parametrize("damage", ["cut", "garbage", "shape", "json", "missing"])
def test_a_damaged_cache_is_tiled_again(model: Path, tmp_path: Path, damage: str) -> None:
    want = tokens(model, None)
    cache = LayoutCache(model, tmp_path / "cache")
    tokens(model, cache)
    files = sorted(cache.folder.iterdir())
    npys = [f for f in files if f.suffix == ".npy"]
    metas = [f for f in files if f.suffix == ".json"]
    if damage == "cut":
        npys[0].write_bytes(npys[0].read_bytes()[:200])
    elif damage == "garbage":
        npys[0].write_bytes(os.urandom(npys[0].stat().st_size))
    elif damage == "shape":  # a well-formed array of another shape
        np.save(npys[0], np.zeros((1, 2, 3), np.float32))
    elif damage == "json":
        metas[0].write_text("{not json")
    else:
        npys[0].unlink()
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == want
    assert again.hits == len(metas) - 1 and again.writes == 1  # the damaged one, tiled and kept


def test_a_changed_model_file_gets_another_folder(model: Path, tmp_path: Path) -> None:
    before = LayoutCache(model, tmp_path / "cache").folder
    os.utime(model, ns=(0, 1_000_000_000))
    assert LayoutCache(model, tmp_path / "cache").folder != before


def test_a_cache_that_cannot_be_written_only_costs_time(model: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    cache = LayoutCache(model, blocked)
    assert tokens(model, cache) == tokens(model, None)
    assert cache.writes == 0 and cache.hits == 0


def test_scales_of_another_type_are_not_read(model: Path, tmp_path: Path) -> None:
    """An array saved with float32 scales (an older layout's), described as such, is tiled again:
    the kernels read float16 bits."""
    import json

    want = tokens(model, None)
    cache = LayoutCache(model, tmp_path / "cache")
    tokens(model, cache)
    metas = [f for f in sorted(cache.folder.iterdir()) if f.suffix == ".json"]
    meta_path = next(f for f in metas if json.loads(f.read_text())["bits"] == 8)  # d alone
    meta = json.loads(meta_path.read_text())
    d_path = meta_path.with_name(meta_path.name.removesuffix("json") + "d.npy")
    scales = np.load(d_path).view(np.float16).astype(np.float32)
    np.save(d_path, scales)
    meta["parts"]["d"][0] = "float32"
    meta_path.write_text(json.dumps(meta))
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == want
    assert again.writes == 1


def test_the_c_kernels_tile_without_the_cache(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.quant import cbuild

    if cbuild.compiler() is None:
        pytest.skip("no C compiler here")
    want = tokens(model, None)
    monkeypatch.setenv("EOC_KERNELS", "c")
    cache = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, cache) == want
    assert cache.writes == 0 and cache.hits == 0 and not cache.folder.exists()
