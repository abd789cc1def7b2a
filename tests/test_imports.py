"""The import surface: `import eoc` loads only the standard library and eoc itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="needs a subprocess")


def _modules_after(code: str, **env: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _foreign(mods: list[str], allowed: set[str]) -> list[str]:
    stdlib = set(sys.stdlib_module_names)
    return [
        m
        for m in mods
        if m.split(".")[0] not in stdlib | allowed | {"__main__", "_distutils_hack"}
        and not m.startswith("_")
    ]


@pytest.mark.parametrize("code", ["import eoc", "import eoc.testing, eoc.cli.main"])
def test_import_loads_only_stdlib_and_eoc(code: str) -> None:
    """Every module loaded is either eoc's own or in the standard library; nothing native."""
    assert _foreign(_modules_after(code), {"eoc"}) == []


def test_resolving_with_the_core_embedder_loads_no_third_party_module() -> None:
    """A default Cascade asks the native extra for counters, which loads nothing third-party."""
    mods = _modules_after("import eoc; eoc.Cascade().resolve('what is 2+2')", EOC_EMBEDDER="hashed")
    assert _foreign(mods, {"eoc", "eoc_native"}) == []


def test_the_semantic_embedder_loads_only_its_own_libraries() -> None:
    """With the model installed, the default kv runs MiniLM: its tokenizer is the one
    third-party import of an exact hit; numpy comes with the first embedding (the weights are
    mapped by eoc, not read by safetensors)."""
    pytest.importorskip("numpy")
    mods = _modules_after("import eoc; eoc.Cascade().resolve('what is 2+2')", EOC_EMBEDDER="auto")
    assert {m.split(".")[0] for m in _foreign(mods, {"eoc", "eoc_native"})} <= {"tokenizers"}
    mods = _modules_after(
        "import eoc; eoc.Cascade().resolve('tell me the speed of light please')",
        EOC_EMBEDDER="auto",
    )
    assert {m.split(".")[0] for m in _foreign(mods, {"eoc", "eoc_native"})} <= {
        "numpy",
        "tokenizers",
    }


def test_import_does_not_load_native() -> None:
    """The core never imports the native extra at import time."""
    mods = _modules_after("import eoc, eoc.cli.main")
    assert not [m for m in mods if m == "eoc_native" or m.startswith("eoc_native.")]
