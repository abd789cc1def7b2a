"""``eoc_native``, the ``native`` extra of eoc: real energy counters, compute backends, the energy
autotuner, the semantic embedder, the model runner and the server.

Install with ``pip install "eoc[native]"`` (from a checkout: ``pip install ".[native]"``).
Nothing here is imported by ``import eoc``; the core finds it through entry points (see
:mod:`eoc.plugins` and ``pyproject.toml``), as it would any third party's.
Third-party packages (numpy, MLX, CuPy/PyTorch, nvidia-ml-py, cryptography) are imported
inside the functions that need them, and a missing one raises
:class:`eoc.errors.MissingExtra` naming the fix.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from eoc.errors import MissingExtra


def require(module: str, *, package: str | None = None, why: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` with the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        what = package or module
        raise MissingExtra(
            f'{what} is not installed{f" ({why})" if why else ""}: pip install "eoc[native]"'
            f" (import error: {exc})"
        ) from None


__all__ = ["require"]
