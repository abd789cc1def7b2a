"""Issue 35, item 1: code or data planted in a shared cache folder is never loaded.

With ``$EOC_CACHE_DIR`` on a folder others can write to, another user could place
``kernels/eockernels-<arch>-<key>.so`` (the name is computable) and its constructor ran as the
user who ran ``eoc query``. eoc now loads compiled code and mapped data only from files owned by
the running user (or root) in folders no one else can write to (:mod:`eoc.files.trust`), and
refuses anything else with :class:`~eoc.errors.UntrustedFile` naming the path.

The planted library's constructor writes a marker file: the marker must never appear. Files
owned by another user need ``chown``: those tests run as root only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eoc.errors import UntrustedFile
from eoc_native.quant import cbuild

NOBODY = 65534
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root"
)
needs_cc = pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler here")

PLANT_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
    const char *marker = getenv("EOC_PLANT_MARKER");
    FILE *f = marker ? fopen(marker, "w") : NULL;
    if (f) { fputs("the planted constructor ran\n", f); fclose(f); }
}
"""

_LOAD = """
import sys
from pathlib import Path
from eoc_native.quant import cbuild
cbuild.INSTALLED = Path(sys.argv[1])  # the checkout's own install folder is not looked at
from eoc_native.quant import load_kernels
try:
    print(load_kernels().NAME)
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(3)
"""

_QUERY = """
import sys
from pathlib import Path
from eoc_native.quant import cbuild
cbuild.INSTALLED = Path(sys.argv[1])
from eoc.cli.main import main
sys.exit(main(["query", "--no-store", "--max-tokens", "2", sys.argv[2]]))
"""


def _plant(where: Path, tmp_path: Path) -> Path:
    """A real shared library at ``where`` whose constructor writes the marker."""
    src = tmp_path / "planted.c"
    src.write_text(PLANT_C)
    cc = cbuild.compiler()
    assert cc is not None
    where.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(where), str(src)], check=True)
    return where


def _library_file(cache: Path) -> Path:
    cc = cbuild.compiler()
    assert cc is not None
    return cache / "kernels" / cbuild.library_name(cc)


def _shared_cache(tmp_path: Path, mode: int = 0o1777) -> Path:
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(mode)
    return cache


def _env(cache: Path, marker: Path) -> dict[str, str]:
    return {**os.environ, "EOC_CACHE_DIR": str(cache), "EOC_PLANT_MARKER": str(marker)}


def _load_in_a_child(
    cache: Path, marker: Path, installed: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _LOAD, str(installed)],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(cache, marker),
        check=False,
    )


def _refused(done: subprocess.CompletedProcess[str], marker: Path, path: Path) -> None:
    assert not marker.exists(), "the planted constructor ran"
    assert done.returncode != 0, done.stdout
    assert "UntrustedFile" in done.stderr and str(path) in done.stderr, done.stderr


@as_root
@needs_cc
@pytest.mark.parametrize("case", ["folder", "file", "link"])
def test_a_kernel_planted_by_another_user_is_never_loaded(tmp_path: Path, case: str) -> None:
    """``folder``: ``kernels/`` itself belongs to another user, in a shared (1777) cache;
    ``file``: the library in our own ``kernels/`` belongs to another user; ``link``: our
    ``kernels/`` holds a link to another user's library elsewhere."""
    cache = _shared_cache(tmp_path)
    marker = tmp_path / "marker"
    lib = _library_file(cache)
    if case == "link":
        elsewhere = _plant(tmp_path / "elsewhere" / "lib.so", tmp_path)
        os.chown(elsewhere, NOBODY, NOBODY)
        lib.parent.mkdir(mode=0o700)
        lib.symlink_to(elsewhere)
        named = elsewhere
    else:
        _plant(lib, tmp_path)
        os.chown(lib, NOBODY, NOBODY)
        if case == "folder":
            os.chown(lib.parent, NOBODY, NOBODY)
        named = lib.parent if case == "folder" else lib
    done = _load_in_a_child(cache, marker, tmp_path / "not-installed")
    _refused(done, marker, named)


@needs_cc
@pytest.mark.parametrize("case", ["writable library", "open cache folder"])
def test_a_kernel_others_could_change_is_never_loaded(tmp_path: Path, case: str) -> None:
    """Our own files, but others could have written them: the library writable by all, or the
    cache folder writable by all without the sticky bit (anyone could swap ``kernels/``)."""
    cache = _shared_cache(tmp_path, 0o777 if case == "open cache folder" else 0o755)
    marker = tmp_path / "marker"
    lib = _plant(_library_file(cache), tmp_path)
    named = cache
    if case == "writable library":
        lib.chmod(0o777)
        named = lib
    done = _load_in_a_child(cache, marker, tmp_path / "not-installed")
    _refused(done, marker, named)


@as_root
@needs_cc
def test_an_installed_kernel_folder_of_another_user_is_never_loaded(tmp_path: Path) -> None:
    """The same rule for the library an install built beside the module (``_built/``)."""
    installed = tmp_path / "site" / "_built"
    cc = cbuild.compiler()
    assert cc is not None
    _plant(installed / cbuild.library_name(cc), tmp_path)
    os.chown(installed, NOBODY, NOBODY)
    marker = tmp_path / "marker"
    done = _load_in_a_child(tmp_path / "cache", marker, installed)
    _refused(done, marker, installed)


@needs_cc
def test_our_own_kernels_in_a_shared_sticky_folder_load(tmp_path: Path) -> None:
    """A 1777 folder (like /tmp) as the cache: ``kernels/`` is made by us, private, and the
    library built into it loads (others cannot rename or delete what is ours there)."""
    cache = _shared_cache(tmp_path)
    done = _load_in_a_child(cache, tmp_path / "marker", tmp_path / "not-installed")
    assert done.returncode == 0 and done.stdout.strip() == "C", done.stderr
    kernels = cache / "kernels"
    assert kernels.stat().st_mode & 0o777 == 0o700
    assert _library_file(cache).is_file()
    again = _load_in_a_child(cache, tmp_path / "marker", tmp_path / "not-installed")
    assert again.returncode == 0 and again.stdout.strip() == "C", again.stderr


@as_root
@needs_cc
def test_eoc_query_refuses_a_planted_kernel(tmp_path: Path) -> None:
    """The issue's own run: ``eoc query`` with a model, the planted library in a shared cache."""
    from tests.native.smollm2 import SMOLLM2

    if SMOLLM2 is None or not SMOLLM2.is_file():
        pytest.skip("SmolLM2 model not installed")
    cache = _shared_cache(tmp_path)
    marker = tmp_path / "marker"
    lib = _plant(_library_file(cache), tmp_path)
    os.chown(lib, NOBODY, NOBODY)
    os.chown(lib.parent, NOBODY, NOBODY)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _QUERY,
            str(tmp_path / "not-installed"),
            "write a short poem about the colour of rust",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**_env(cache, marker), "EOC_MODEL": str(SMOLLM2), "EOC_KERNELS": ""},
        check=False,
    )
    assert not marker.exists(), "the planted constructor ran"
    assert done.returncode != 0
    assert str(lib.parent) in done.stdout + done.stderr, done.stdout + done.stderr


# -- the layout cache: mapped weights ---------------------------------------------------------


@pytest.fixture
def _key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from eoc.store import keys as userkey

    path = tmp_path / "config" / "key"
    monkeypatch.setenv(userkey.KEY_ENV, str(path))
    return path


def _tiny(tmp_path: Path) -> Path:
    pytest.importorskip("gguf", reason="the native extra is not installed")
    from tests.native.test_llm_tiny import BLOCKS, write_tiny_model

    return write_tiny_model(tmp_path / "tiny.gguf", tensor_types=BLOCKS)


def _tokens(model: Path, layouts: Any) -> list[int]:
    from eoc_native.llm.generate import generate_ids, load

    llama, tok = load(model, layouts=layouts)
    ids = tok.encode("hello there", special=True)
    return list(generate_ids(llama, ids, eos_id=tok.eos_id, max_tokens=12))


def _footer(path: Path) -> tuple[bytes, int, dict[str, Any]]:
    from eoc_native.llm.layout_cache import MAGIC

    data = path.read_bytes()
    tail = len(MAGIC) + 8
    n = int.from_bytes(data[-tail : -len(MAGIC)], "little")
    return data, n, json.loads(data[-tail - n : -tail])


@pytest.mark.usefixtures("_key")
def test_a_layout_array_edited_with_its_digest_recomputed_is_not_mapped(tmp_path: Path) -> None:
    """What the attacker did with the CRC-32: change a matrix's bytes and recompute its
    checksum in the index. The index's keyed MAC no longer checks: nothing in the file is
    mapped, every matrix is tiled from the model again (the same tokens as a fresh load), and
    the file is written again."""
    import hashlib

    from eoc_native.llm.layout_cache import MAGIC, LayoutCache

    model = _tiny(tmp_path)
    want = _tokens(model, None)
    first = LayoutCache(model, tmp_path / "cache")
    assert _tokens(model, first) == want and first.writes > 0
    data, n, index = _footer(first.path)
    part = index["entries"][0]["parts"]["qs"]
    at, nbytes = part[2], part[3]
    edited = bytearray(data)
    edited[at : at + 8] = bytes(8)  # the planted weights
    part[4] = hashlib.sha256(bytes(edited[at : at + nbytes])).hexdigest()
    text = json.dumps(index, separators=(",", ":")).encode()
    assert len(text) <= n
    tail = len(MAGIC) + 8
    first.path.write_bytes(bytes(edited[: -tail - n]) + text.ljust(n) + bytes(edited[-tail:]))
    again = LayoutCache(model, tmp_path / "cache")
    assert _tokens(model, again) == want
    assert again.hits == 0 and again.writes == first.writes  # tiled again, written again
    healed = LayoutCache(model, tmp_path / "cache")
    assert _tokens(model, healed) == want and healed.hits == first.writes


def test_a_layout_signed_with_another_key_is_not_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc.store import keys as userkey
    from eoc_native.llm.layout_cache import LayoutCache

    model = _tiny(tmp_path)
    monkeypatch.setenv(userkey.KEY_ENV, str(tmp_path / "one" / "key"))
    first = LayoutCache(model, tmp_path / "cache")
    want = _tokens(model, first)
    monkeypatch.setenv(userkey.KEY_ENV, str(tmp_path / "two" / "key"))
    again = LayoutCache(model, tmp_path / "cache")
    assert _tokens(model, again) == want and again.hits == 0 and again.writes == first.writes


@as_root
@pytest.mark.usefixtures("_key")
def test_a_layout_file_of_another_user_is_refused(tmp_path: Path) -> None:
    from eoc_native.llm.layout_cache import LayoutCache

    model = _tiny(tmp_path)
    first = LayoutCache(model, tmp_path / "cache")
    _tokens(model, first)
    os.chown(first.path, NOBODY, NOBODY)
    with pytest.raises(UntrustedFile, match=f"the layout file {first.path} is owned by uid"):
        _tokens(model, LayoutCache(model, tmp_path / "cache"))


@pytest.mark.usefixtures("_key")
def test_a_layouts_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    """Before a file is mapped from it, and before one is written into it."""
    from eoc_native.llm.layout_cache import LayoutCache

    model = _tiny(tmp_path)
    first = LayoutCache(model, tmp_path / "cache")
    _tokens(model, first)
    folder = first.path.parent
    folder.chmod(0o777)
    with pytest.raises(UntrustedFile, match=f"{folder} .*can be written by others"):
        _tokens(model, LayoutCache(model, tmp_path / "cache"))
    first.path.unlink()
    with pytest.raises(UntrustedFile, match=f"{folder} can be written by others"):
        _tokens(model, LayoutCache(model, tmp_path / "cache"))


# -- the embedding cache, the tuning profile, the graph store ----------------------------------


class _Dense:
    name, dim, dense = "fake", 4, True
    calls = 0

    def embed_batch(self, texts: list[str]) -> Any:
        _Dense.calls += len(texts)
        return np.ones((len(texts), 4), np.float32)

    def embed(self, text: str) -> Any:
        return self.embed_batch([text])[0]


def test_an_embedding_cache_others_could_write_is_ignored_with_a_warning(tmp_path: Path) -> None:
    from eoc_native.semantic.cache import CachedEmbedder, UntrustedCacheWarning

    path = tmp_path / "cache" / "embeddings-fake.npz"
    first = CachedEmbedder(_Dense(), path)
    first.embed_batch(["a question"])
    first.save()
    assert stat_mode(path.parent) == 0o700
    _Dense.calls = 0
    CachedEmbedder(_Dense(), path).embed_batch(["a question"])
    assert _Dense.calls == 0  # read from the cache
    path.chmod(0o666)
    with pytest.warns(UntrustedCacheWarning, match=f"ignored: the embedding cache {path} can be"):
        CachedEmbedder(_Dense(), path).embed_batch(["a question"])
    assert _Dense.calls == 1  # not read: embedded again


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def test_a_tuning_profile_others_could_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.autotune import profile

    path = tmp_path / "tuning-profile.json"
    path.write_text("{}")
    path.chmod(0o666)
    monkeypatch.setenv("EOC_TUNING_PROFILE", str(path))
    monkeypatch.setattr(profile, "_GLOBAL", None)
    with pytest.raises(UntrustedFile, match=f"the tuning profile {path} can be written by others"):
        profile.global_profile()


def test_a_graph_store_others_could_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.graph import cli

    store = tmp_path / "graph"
    store.mkdir()
    (store / "CURRENT").write_text("planted")
    store.chmod(0o777)
    monkeypatch.setenv(cli.GRAPH_STORE_ENV, str(store))
    with pytest.raises(UntrustedFile, match=f"the graph store {store} can be written by others"):
        cli.open_for_answers()
    with pytest.raises(UntrustedFile, match=f"the graph store {store} can be written by others"):
        cli.open_seeded(store)
