"""Build web/dist/: the page, the Pyodide core files from the npm package, and the wheels.

    python web/build.py            # needs `npm ci` in web/ first (make web does both)

Nothing here is fetched at page time from anywhere but the folder it is served from.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

WEB = Path(__file__).resolve().parent
ROOT = WEB.parent
DIST = WEB / "dist"
CACHE = WEB / ".cache"
PYODIDE_FILES = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
MICROPIP = "micropip==0.11.1"


class BuildError(Exception):
    pass


def _run(*cmd: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")


def pyodide_dir() -> Path:
    src = WEB / "node_modules" / "pyodide"
    missing = [f for f in PYODIDE_FILES if not (src / f).is_file()]
    if missing:
        raise BuildError(f"web/node_modules/pyodide lacks {missing}: run `npm ci` in web/ first")
    return src


def micropip_wheel() -> Path:
    """micropip for Python 3.14 (Pyodide 314), downloaded once from PyPI into web/.cache."""
    CACHE.mkdir(exist_ok=True)
    found = sorted(CACHE.glob("micropip-*-py3-none-any.whl"))
    if not found:
        _run(
            sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.14", MICROPIP, "-d", str(CACHE),
        )  # fmt: skip
        found = sorted(CACHE.glob("micropip-*-py3-none-any.whl"))
    if not found:
        raise BuildError("could not download micropip for Python 3.14")
    return found[-1]


def eoc_wheel(out: Path) -> Path:
    """The eoc wheel built from this checkout."""
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out))
    wheels = sorted(out.glob("eoc-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one eoc wheel in {out}, found {wheels}")
    return wheels[0]


def build() -> Path:
    started = time.perf_counter()
    src = pyodide_dir()
    if DIST.exists():
        shutil.rmtree(DIST)
    (DIST / "pyodide").mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copy2(src / name, DIST / "pyodide" / name)
    wheels = DIST / "wheels"
    wheels.mkdir()
    eoc = eoc_wheel(wheels)
    micropip = shutil.copy2(micropip_wheel(), wheels)
    for item in (WEB / "src").iterdir():
        shutil.copy2(item, DIST / item.name)
    version = json.loads((src / "package.json").read_text())["version"]
    manifest = {
        "pyodide": version,
        "eoc_wheel": f"wheels/{eoc.name}",
        "micropip_wheel": f"wheels/{Path(micropip).name}",
    }
    (DIST / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"built {DIST.relative_to(ROOT)} in {time.perf_counter() - started:.1f} s: {manifest}")
    return DIST


if __name__ == "__main__":
    try:
        build()
    except BuildError as exc:
        print(f"web build failed: {exc}", file=sys.stderr)
        sys.exit(1)
