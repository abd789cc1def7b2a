"""MkDocs hook: the changelog page is the repository's CHANGELOG.md, not a copy of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def on_page_read_source(page: Any, config: Any) -> str | None:
    if page.file.src_uri == "changelog.md":
        return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return None
