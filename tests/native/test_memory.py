"""The model's large buffers live on plain pages (eoc_native.memory): numpy's huge-page advice
made the first touch of a KV cache or an output head stall for up to 0.8 s on a 2-core VM."""

from __future__ import annotations

import mmap
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eoc_native.memory import MAPPED_FROM, zeroed
from eoc_native.quant.blocks import blocks_from_raw
from eoc_native.quant.formats import quantize
from tests.native.test_llm_tiny import write_tiny_model


def _vm_flags(arr: np.ndarray) -> list[str] | None:
    """The kernel's flags for the mapping that holds the middle of ``arr`` (``None`` where
    ``/proc/self/smaps`` does not say); ``hg`` is the huge-page advice."""
    addr = arr.ctypes.data + arr.nbytes // 2
    inside = False
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        head = line.split()
        if head and "-" in head[0] and all(c in "0123456789abcdef-" for c in head[0]):
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            inside = lo <= addr < hi
        elif inside and head[:1] == ["VmFlags:"]:
            return head[1:]
    return None


def _mapped(arr: np.ndarray) -> bool:
    """Whether ``arr`` is a view of an anonymous map (eoc_native.memory), not numpy's memory."""
    base: Any = arr
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def test_zeroed_is_a_writable_zero_filled_c_array() -> None:
    for shape in ((3, 5, 7), (64, 128, 32)):  # numpy's memory, then a map (1 MiB)
        a = zeroed(shape, np.float32)
        assert a.shape == shape and a.dtype == np.float32 and not a.any()
        assert a.flags.c_contiguous and a.flags.writeable
        a[2, 4, 6] = 1.5
        assert a.sum() == 1.5
        assert _mapped(a) == (a.nbytes >= MAPPED_FROM)
    assert zeroed(0, np.uint8).shape == (0,)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/smaps")
def test_a_large_zeroed_array_carries_no_huge_page_advice() -> None:
    """numpy advises huge pages for its own 12 MiB array (where it does at all), and eoc's
    array of the same size carries no such advice."""
    theirs = np.empty(12 << 20, np.uint8)
    theirs[::4096] = 1
    flags = _vm_flags(theirs)
    if flags is None or "hg" not in flags:
        pytest.skip("numpy gives no huge-page advice here (THP off, or numpy built without)")
    ours = zeroed(12 << 20, np.uint8)
    ours[::4096] = 1
    ours_flags = _vm_flags(ours)
    assert ours_flags is not None and "hg" not in ours_flags


def test_the_kv_cache_and_the_tiled_weights_are_on_plain_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every size mapped, a model's KV cache and its tiled blocks are maps: they are
    taken from :func:`zeroed` (SmolLM2's are 12 MB and, for its output head, 28 MB)."""
    from eoc_native import memory
    from eoc_native.llm.generate import load

    monkeypatch.setattr(memory, "MAPPED_FROM", 1)
    model, _ = load(write_tiny_model(tmp_path / "tiny.gguf"), n_ctx=48)
    assert _mapped(model.cache_k) and _mapped(model.cache_v)
    raw = quantize(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32), "Q4_1")
    blocks: Any = blocks_from_raw(raw, "Q4_1", 64, 64)
    assert all(_mapped(part) for part in (blocks.qs, blocks.d, blocks.m))
