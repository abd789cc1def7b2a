"""``eoc_native``, the ``native`` extra of eoc: real energy counters, compute backends, the energy
autotuner, the semantic embedder, the model runner and the server.

Install with ``pip install ".[native]"`` in eoc's checkout, or from the wheel ``make wheel``
builds: ``pip install "dist/eoc-VERSION-py3-none-any.whl[native]"``.
Nothing here is imported by ``import eoc``; the core finds it through entry points (see
:mod:`eoc.plugins` and ``pyproject.toml``), as it would any third party's.
Third-party packages (numpy, MLX, CuPy/PyTorch, nvidia-ml-py, cryptography) are imported
inside the functions that need them, and a missing one raises
:class:`eoc.errors.MissingExtra` naming the fix.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

from eoc.errors import MissingExtra
from eoc.plugins import NATIVE_HINT

CACHE_ENV = "EOC_CACHE_DIR"


def cache_dir() -> Path:
    """eoc's cache folder: ``$EOC_CACHE_DIR``, else ``~/.cache/eoc`` (the embedding cache, the
    graph store, the tiled weights and the C kernels each keep their part in it).

    What eoc loads or maps from it must be owned by the user or root, in folders no one else
    can write to (:mod:`eoc.files.trust`; issue 35): each part checks its own files and makes its
    folder with mode 700, so the folder may be a shared sticky one (``/tmp``) but never one
    whose parts someone else made."""
    return Path(os.environ.get(CACHE_ENV) or "~/.cache/eoc").expanduser()


def require(module: str, *, package: str | None = None, why: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` with the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what = package or module
        raise MissingExtra(
            f"{what} is not installed{f' ({why})' if why else ''}: {NATIVE_HINT}"
            f" (import error: {exc})"
        ) from None


__all__ = ["CACHE_ENV", "cache_dir", "require"]
