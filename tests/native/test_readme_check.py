"""scripts/readme_check.py: the transcripts of the README and the docs are run and compared with
what the program prints, so they cannot drift (`make readme-check` checks README.md and every page
under docs/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import readme_check


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a"], ["a", "b"], False),  # a line the README leaves out
        (["a", "..."], ["a", "b", "c"], True),
        (["...", "c"], ["a", "b", "c"], True),
        (["a", "...", "c"], ["a", "c"], True),
        (["x : ... end"], ["x : anything at all end"], True),
        (["payload : 4"], ["payload : 5"], False),  # an answer is no figure
        (["cost : 210 µJ estimated"], ["cost : 379 µJ estimated"], True),  # a figure is
        (["cost : 210 µJ estimated"], ["cost : 210 µJ measured"], False),
        (["receipt : " + "a" * 64 + " (v2)"], ["receipt : " + "b" * 64 + " (v2)"], True),
    ],
)
def test_a_transcript_matches_line_for_line_with_elisions_and_figures_by_shape(
    expected: list[str], actual: list[str], same: bool
) -> None:
    assert readme_check.matches(expected, actual) is same


def test_a_drifted_transcript_is_reported_and_a_skipped_one_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "README.md"
    page.write_text(
        "```console\n$ echo one; echo two\none\n```\n\n"
        "<!-- readme-check: skip needs a server -->\n```console\n$ false\nnothing\n```\n",
        encoding="utf-8",
    )
    assert readme_check.main(["--readme", str(page)]) == 1
    out = capsys.readouterr().out
    assert "DIFF  README.md:1: $ echo one; echo two" in out and "    two" in out
    assert "skip  README.md:7: needs a server" in out
    assert readme_check.main(["--readme", str(page), "--write"]) == 1
    assert readme_check.main(["--readme", str(page)]) == 0  # rewritten from what was printed
    assert "$ echo one; echo two\none\ntwo\n```" in page.read_text(encoding="utf-8")


def test_a_timing_may_change_its_unit_but_not_its_label() -> None:
    assert readme_check.matches(["latency : p95 755.9 µs"], ["latency : p95 2.5 ms"])
    assert not readme_check.matches(["latency : p95 755.9 µs"], ["delay : p95 2.5 ms"])


def test_by_default_the_readme_and_every_docs_page_are_checked() -> None:
    files = readme_check.default_files()
    root = Path(readme_check.__file__).resolve().parents[1]
    assert files[0] == root / "README.md"
    assert set(files[1:]) == set((root / "docs").rglob("*.md"))
    assert root / "docs" / "serve.md" in files


def test_several_files_are_checked_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("```console\n$ echo one\none\n```\n", encoding="utf-8")
    two.write_text("```console\n$ echo two\nthree\n```\n", encoding="utf-8")
    assert readme_check.main(["--readme", str(one), str(two)]) == 1
    out = capsys.readouterr().out
    assert "ok    one.md:1: 1 command(s)" in out and "DIFF  two.md:1: $ echo two" in out
    assert "2 file(s), 2 transcript(s) run, 1 differ" in out
