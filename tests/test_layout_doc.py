"""docs/layout.md names every module of the core: a room a newcomer cannot find is a room the
map forgot (the house is drawn in that page; tests/test_layering.py checks its floors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import IN_BROWSER

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(IN_BROWSER, reason="docs/ is not mounted in Pyodide")
def test_every_core_module_is_named_in_the_layout_page() -> None:
    page = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted((ROOT / "eoc").rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py") or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT).as_posix()
        if rel not in page and f"`{path.name}`" not in page:
            missing.append(rel)
    assert missing == [], f"docs/layout.md does not name: {missing}"
