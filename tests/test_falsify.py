"""scripts/falsify.py cannot rot: every break's original text still occurs once in its file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import IN_BROWSER

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_every_falsify_pattern_matches_exactly_once() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import falsify
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert falsify.check_patterns() == []
    assert len(falsify.BREAKS) >= 100
    for _, path, _, _ in falsify.BREAKS:  # and every break names tests that cover it
        assert falsify.tests_for(path)
