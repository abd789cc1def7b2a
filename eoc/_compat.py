"""The one environment switch: are we running inside Pyodide (the browser)?

Every other module asks here instead of testing ``sys.platform`` itself, so the
browser build has exactly one place that decides it has no energy counter.
"""

from __future__ import annotations

import sys

IN_PYODIDE: bool = sys.platform == "emscripten" or "pyodide" in sys.modules
"""True when eoc runs under Pyodide, where no energy counter exists."""

__all__ = ["IN_PYODIDE"]
