"""The import surface: `import eoc` loads only the standard library and eoc itself."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="needs a subprocess")


def _modules_after(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
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


def test_resolving_loads_no_third_party_module() -> None:
    """A default Cascade asks the native extra for counters, which loads nothing third-party."""
    mods = _modules_after("import eoc; eoc.Cascade().resolve('what is 2+2')")
    assert _foreign(mods, {"eoc", "native"}) == []


def test_import_does_not_load_native() -> None:
    """The core never imports the native extra at import time."""
    mods = _modules_after("import eoc, eoc.cli.main")
    assert not [m for m in mods if m == "native" or m.startswith("native.")]
