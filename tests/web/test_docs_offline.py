"""The docs site works offline: ``scripts/site_offline.py`` (run by ``make test`` on the built
site) finds every request a page makes off its origin, and the site's configuration asks for
none (code is highlighted at build time, its stylesheet served from the site)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from site_offline import off_origin_requests, page_paths  # noqa: E402


def test_the_checker_finds_what_a_page_asks_for_elsewhere(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "index.html").write_text(
        '<!doctype html><link rel="stylesheet" href="https://cdn.example.invalid/a.css">'
        '<script src="https://cdn.example.invalid/b.js"></script>'
        '<a href="https://example.invalid/">a link is no request</a>',
        encoding="utf-8",
    )
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "index.html").write_text(
        '<!doctype html><link rel="stylesheet" href="../style.css"><p>all here</p>',
        encoding="utf-8",
    )
    (tmp_path / "style.css").write_text("p { color: black }", encoding="utf-8")
    assert sorted(page_paths(tmp_path)) == ["", "clean/"]
    found = off_origin_requests(tmp_path, browser)
    assert set(found) == {"/"}
    assert sorted(found["/"]) == [
        "https://cdn.example.invalid/a.css",
        "https://cdn.example.invalid/b.js",
    ]


def test_the_site_highlights_code_without_a_cdn() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "highlightjs: false" in config
    assert "css/pygments.css" in config and (ROOT / "docs" / "css" / "pygments.css").is_file()
    assert "use_pygments: true" in config
