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


@pytest.mark.parametrize(
    "code",
    [
        "import eoc",
        "import eoc; eoc.Cascade().resolve('what is 2+2')",
        "import eoc.testing, eoc.cli.main",
    ],
)
def test_import_loads_only_stdlib_and_eoc(code: str) -> None:
    """Every module loaded is either eoc's own or in the standard library; nothing native."""
    stdlib = set(sys.stdlib_module_names)
    foreign = [
        m
        for m in _modules_after(code)
        if m.split(".")[0] not in stdlib
        and m.split(".")[0] not in {"eoc", "__main__", "_distutils_hack"}
        and not m.startswith("_")
    ]
    assert foreign == []


def test_import_does_not_load_native() -> None:
    """The core never imports the native extra at import time."""
    mods = _modules_after("import eoc, eoc.cli.main")
    assert not [m for m in mods if m == "native" or m.startswith("native.")]
