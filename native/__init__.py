"""The ``native`` extra of eoc: real energy counters, compute backends and the energy autotuner.

Install with ``pip install "eoc[native]"``. Nothing here is imported by ``import eoc``; the
core reaches it lazily (``eoc.meter.detect`` asks :func:`native.counters.whole_work_counters`).
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
