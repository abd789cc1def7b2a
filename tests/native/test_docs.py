"""The documentation covers what the code reads: every environment variable named in the code is
on docs/environment.md, and the LICENSE matches pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _named_in_code() -> set[str]:
    found: set[str] = set()
    for folder in ("eoc", "native/eoc_native", "web"):
        for path in (ROOT / folder).rglob("*.py"):
            found.update(re.findall(r"\bEOC_[A-Z][A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8")))
    return found


def test_every_environment_variable_the_code_reads_is_documented() -> None:
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(EOC_[A-Z_]+)` \|", page, re.MULTILINE))
    named = _named_in_code()
    assert len(named) >= 10
    assert named - documented == set(), "document these in docs/environment.md"
    assert documented - named == set(), "docs/environment.md names variables nothing reads"


def test_the_license_file_matches_the_package_metadata() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
