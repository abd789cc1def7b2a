"""The tiled weights kept on disk in one file (native/eoc_native/llm/layout_cache.py): a later
load maps them and generates the same tokens; anything wrong with the file only costs the tiling
again, and the file is written again whole. A file edited with its checksums recomputed fails
its keyed MAC (issue 35): the same. (Files others could have written: test_planted_files.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the native extra is not installed")

from eoc.store import keys as userkey
from eoc_native.llm.generate import generate_ids, load
from eoc_native.llm.layout_cache import MAGIC, LayoutCache
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model


@pytest.fixture(autouse=True)
def _own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test signs with a key of its own, never the user's."""
    monkeypatch.setenv(userkey.KEY_ENV, str(tmp_path / "config" / "key"))


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_model(tmp_path / "tiny.gguf", tensor_types=BLOCKS)


def tokens(path: Path, layouts: LayoutCache | None) -> list[int]:
    llama, tok = load(path, layouts=layouts)
    ids = tok.encode("hello there", special=True)
    return list(generate_ids(llama, ids, eos_id=tok.eos_id, max_tokens=12))


def test_a_second_load_maps_the_kept_layout_and_says_the_same(
    model: Path, tmp_path: Path, kernels: Any
) -> None:
    """Either kernel set: the first load tiles and writes the file, the next maps every matrix
    from it (a view of the map, not a copy) and generates the same tokens."""
    want = tokens(model, None)
    first = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, first) == want
    assert first.writes > 0 and first.hits == 0 and first.path.is_file()
    assert first.path.read_bytes()[-len(MAGIC) :] == MAGIC
    assert not list(first.path.parent.glob("*.part"))
    again = LayoutCache(model, tmp_path / "cache")
    assert again.path == first.path
    llama, _ = load(model, layouts=again)
    assert again.hits == first.writes and again.writes == 0
    mapped = llama.layers[0].wqkv.weight.quant
    assert mapped is not None and not mapped.qs.flags.owndata  # over the map
    assert tokens(model, LayoutCache(model, tmp_path / "cache")) == want


def _index(path: Path) -> tuple[int, dict[str, Any]]:
    """The index's length and the index, read from the footer."""
    data = path.read_bytes()
    tail = len(MAGIC) + 8
    n = int.from_bytes(data[-tail : -len(MAGIC)], "little")
    return n, json.loads(data[-tail - n : -tail])


def _rewrite_index(path: Path, change: Any) -> None:
    """The file with its index changed by ``change`` (padded to its length: the arrays stay)."""
    data = path.read_bytes()
    n, index = _index(path)
    change(index)
    text = json.dumps(index, separators=(",", ":")).encode()
    assert len(text) <= n
    tail = len(MAGIC) + 8
    path.write_bytes(data[: -tail - n] + text.ljust(n) + data[-tail:])


def _damage(path: Path, how: str) -> int:
    """Damage the file; how many of its matrices a load should still take from it."""
    n, index = _index(path)
    entries = len(index["entries"])
    data = path.read_bytes()
    tail = len(MAGIC) + 8
    if how == "cut":  # the footer is gone: nothing is read
        path.write_bytes(data[: len(data) // 2])
        return 0
    if how == "garbage":
        path.write_bytes(os.urandom(len(data)))
        return 0
    if how == "json":
        path.write_bytes(data[: -tail - n] + b"{not json".ljust(n) + data[-tail:])
        return 0
    if how == "signed-json":  # signed with the user's key, as a buggy eoc would: not JSON
        raw = b"{not json".ljust(n)
        tag = userkey.mac(userkey.load_key(), "layout", path.name.encode(), raw).encode()
        mac = len(tag)
        path.write_bytes(data[: -tail - n - mac] + tag + raw + data[-tail:])
        return 0
    if how == "version":
        path.write_bytes(data[:-1] + bytes([data[-1] - 1]))
        return 0
    if how == "missing":
        path.unlink()
        return 0
    first = index["entries"][0]
    if how == "bytes":  # one byte of the first matrix's weights flipped: its SHA-256 fails
        at = first["parts"]["qs"][2]
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
        return entries - 1
    assert how == "shape"  # the index says another shape for the same bytes: its MAC fails
    _rewrite_index(path, lambda ix: ix["entries"][0]["parts"]["qs"][1].reverse())
    return 0


@pytest.mark.parametrize(
    "how", ["cut", "garbage", "json", "signed-json", "version", "missing", "bytes", "shape"]
)
def test_a_damaged_file_is_tiled_again_and_written_again(
    model: Path, tmp_path: Path, how: str
) -> None:
    want = tokens(model, None)
    cache = LayoutCache(model, tmp_path / "cache")
    tokens(model, cache)
    kept = _damage(cache.path, how)
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == want
    assert again.hits == kept and again.writes == cache.writes  # written again, whole
    healed = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, healed) == want and healed.hits == cache.writes


def test_scales_of_another_type_are_not_read(model: Path, tmp_path: Path) -> None:
    """A matrix kept with float32 scales (as layout 1 kept them), whole and described as such,
    is tiled again: the kernels read float16 bits."""
    from eoc_native.quant.blocks import QuantBlocks

    want = tokens(model, None)
    tokens(model, LayoutCache(model, tmp_path / "cache"))
    cache = LayoutCache(model, tmp_path / "cache")
    load(model, layouts=cache)
    label, blocks = next((k, b) for k, b in cache._kept.items() if b.bits == 8)
    scales = blocks.d.view(np.float16).astype(np.float32)
    cache._kept[label] = QuantBlocks(blocks.bits, blocks.qs, scales, blocks.m, blocks.n_out)  # type: ignore[arg-type]
    cache._put = True
    cache.save()
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == want
    assert again.hits == cache.writes - 1 and again.writes == cache.writes


def test_a_changed_model_file_gets_another_file(model: Path, tmp_path: Path) -> None:
    before = LayoutCache(model, tmp_path / "cache").path
    os.utime(model, ns=(0, 1_000_000_000))
    assert LayoutCache(model, tmp_path / "cache").path != before


def test_a_cache_that_cannot_be_written_only_costs_time(model: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    cache = LayoutCache(model, blocked)
    assert tokens(model, cache) == tokens(model, None)
    assert cache.writes == 0 and cache.hits == 0
    layouts = tmp_path / "cache2" / "layouts"
    layouts.parent.mkdir()
    layouts.write_text("a file where the layouts folder would go")
    cache = LayoutCache(model, tmp_path / "cache2")
    assert tokens(model, cache) == tokens(model, None)  # no error from a part file's folder
    assert cache.writes == 0 and layouts.read_text().startswith("a file")


def test_an_index_past_its_bound_is_not_read(model: Path, tmp_path: Path) -> None:
    cache = LayoutCache(model, tmp_path / "cache")
    tokens(model, cache)
    data = cache.path.read_bytes()
    tail = len(MAGIC) + 8
    cache.path.write_bytes(data[:-tail] + (1 << 40).to_bytes(8, "little") + MAGIC)
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == tokens(model, None) and again.hits == 0


def test_the_mapped_arrays_are_the_tiled_ones(model: Path, tmp_path: Path) -> None:
    """What a load maps is, array for array, what tiling gives."""
    llama, _ = load(model)
    cache = LayoutCache(model, tmp_path / "cache")
    load(model, layouts=cache)
    mapped, _ = load(model, layouts=LayoutCache(model, tmp_path / "cache"))
    for a, b in zip(llama.weights(), mapped.weights(), strict=True):
        qa, qb = a.weight.quant, b.weight.quant
        if qa is None:
            continue
        assert qb is not None and qa.bits == qb.bits and qa.n_out == qb.n_out
        for x, y in ((qa.qs, qb.qs), (qa.d, qb.d), (qa.m, qb.m)):
            assert (x is None and y is None) or np.array_equal(x, y)


def test_a_first_load_tiles_into_the_file_it_writes(model: Path, tmp_path: Path) -> None:
    """The C tiler's arrays are the written file's own pages (no copy through memory): after the
    first load each is a view of a map of the finished file, holding its bytes."""
    from eoc_native.quant import cbuild

    if cbuild.compiler() is None:
        pytest.skip("no C compiler here: numpy tiles into memory and the file is written")
    cache = LayoutCache(model, tmp_path / "cache")
    llama, _ = load(model, layouts=cache)
    quant = llama.layers[0].wqkv.weight.quant
    assert quant is not None
    maps = Path("/proc/self/maps")
    if maps.exists():  # the array's pages are a mapping of the layout file itself
        address = quant.qs.ctypes.data
        for line in maps.read_text().splitlines():
            span, *rest = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                assert len(rest) == 5 and rest[4].startswith(str(cache.path)), line
                break
        else:
            raise AssertionError("no mapping holds the array")
    written = cache.path.read_bytes()
    _, index = _index(cache.path)
    at = index["entries"][0]["parts"]["qs"][2]
    assert bytes(quant.qs.reshape(-1).view(np.uint8)[:64]) == written[at : at + 64]


def test_a_disk_that_refuses_the_file_leaves_the_arrays_in_memory(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk (no blocks for the file, no write): tiled into memory, the same tokens, no
    file and no part file left."""
    import errno

    from eoc_native.llm import layout_cache

    def full(*args: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(layout_cache, "_reserve", full)
    monkeypatch.setattr(layout_cache.os, "pwrite", full)
    cache = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, cache) == tokens(model, None)
    assert cache.writes == 0 and not cache.path.exists()
    assert not list((tmp_path / "cache" / "layouts").glob("*"))


def test_a_load_that_fails_leaves_no_part_file(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc.errors import InputError
    from eoc_native.llm import llama as llama_module

    calls = []
    real = llama_module.read_weight

    def fails_later(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise InputError("a tensor that does not read")
        return real(*args, **kwargs)

    monkeypatch.setattr(llama_module, "read_weight", fails_later)
    cache = LayoutCache(model, tmp_path / "cache")
    with pytest.raises(InputError, match="does not read"):
        load(model, layouts=cache)
    assert not list((tmp_path / "cache" / "layouts").glob("*"))


def test_a_file_given_up_midway_is_written_whole_by_the_save(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk refuses the file's third array: the arrays tiled into it so far stay usable, the
    rest are tiled into memory, and the save writes every array into a new file, which the next
    load takes whole."""
    import errno

    from eoc_native.llm import layout_cache

    calls = []
    real = layout_cache._reserve

    def refuses_the_third(fd: int, at: int, nbytes: int) -> None:
        calls.append(nbytes)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, at, nbytes)

    monkeypatch.setattr(layout_cache, "_reserve", refuses_the_third)
    want = tokens(model, None)
    cache = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, cache) == want and cache.writes > 0
    monkeypatch.setattr(layout_cache, "_reserve", real)
    again = LayoutCache(model, tmp_path / "cache")
    assert tokens(model, again) == want and again.hits == cache.writes
