"""One source for each figure: the benchmark figures the README and the docs cite are rendered
from the data their benchmarks wrote (docs/figures/*.json, scripts/figures.py), so a page cannot
say another figure than its data, nor two pages two figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import IN_BROWSER

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")


@pytest.fixture(scope="module")
def figures() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import figures as module
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return module


def _data(folder: Path, name: str, figures: dict[str, object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": f"bench/{name}.py", "recorded": "2026-12-03", "figures": figures}
    (folder / f"{name}.json").write_text(json.dumps(doc), encoding="utf-8")


def _page(root: Path, text: str) -> Path:
    (root / "docs").mkdir(parents=True, exist_ok=True)
    page = root / "README.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_every_cited_figure_is_what_its_data_says(figures: ModuleType) -> None:
    assert figures.drift() == []


def test_the_readme_cites_its_headline_figures_from_data(figures: ModuleType) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = readme[: readme.index("## Quick start")]
    cited = {m["file"] for m in figures.MARK.finditer(first_screen)}
    assert {"lookalikes", "serve", "core"} <= cited
    assert "before issue" not in readme


def test_every_figures_file_is_cited_and_says_how_it_was_measured(figures: ModuleType) -> None:
    cited = figures.cited()
    files = sorted((ROOT / "docs" / "figures").glob("*.json"))
    assert files
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert path.stem in cited, f"{path.name} is cited by no page"
        assert (ROOT / doc["benchmark"]).is_file()
        assert (
            doc["command"].startswith(f"python {doc['benchmark']} ")
            and "--record" in doc["command"]
        )
        assert doc["recorded"] and doc["host"]["cores"] and doc["figures"]


def test_a_page_that_says_another_figure_is_drift_and_write_renders_it(
    figures: ModuleType, tmp_path: Path
) -> None:
    data = tmp_path / "docs" / "figures"
    _data(data, "serve", {"exact": {"ratio": 2.3749, "rows": {"a/b": {"req_s": 8581.2}}}})
    page = _page(
        tmp_path,
        "eoc: <!-- fig serve | /exact/ratio | {:.2f}× -->2.42×<!-- /fig --> and "
        "<!-- fig serve | /exact/rows/a~1b/req_s | {:,.0f} req/s -->8,581 req/s<!-- /fig -->\n",
    )
    found = figures.drift(tmp_path, data)
    assert [(c.text, c.rendered) for c in found] == [("2.42×", "2.37×")]
    assert figures.write(tmp_path, data) == ["README.md"]
    assert "-->2.37×<!--" in page.read_text(encoding="utf-8")
    assert figures.drift(tmp_path, data) == []


@pytest.mark.parametrize(
    ("marker", "why"),
    [
        ("<!-- fig nothing | /x -->1<!-- /fig -->", "no figures file nothing.json"),
        ("<!-- fig serve | /exact/gone -->1<!-- /fig -->", "no 'gone'"),
        ("<!-- fig serve | /exact/none -->1<!-- /fig -->", "not a figure"),
        ("<!-- fig serve | /exact/flag -->1<!-- /fig -->", "not a figure"),
        ("<!-- fig serve | /exact -->1<!-- /fig -->", "not a figure"),
        ("<!-- fig serve | /exact/name | ÷1000 {:.1f} -->1<!-- /fig -->", "no number to scale"),
        ("<!-- fig serve | /exact/ratio | {:d} -->1<!-- /fig -->", "does not apply"),
        ("<!-- fig serve | exact/ratio -->1<!-- /fig -->", "no JSON Pointer"),
    ],
)
def test_a_marker_that_names_no_figure_fails_and_never_renders_a_blank(
    figures: ModuleType, tmp_path: Path, marker: str, why: str
) -> None:
    data = tmp_path / "docs" / "figures"
    _data(data, "serve", {"exact": {"ratio": 2.5, "none": None, "flag": True, "name": "eoc"}})
    _page(tmp_path, f"a figure: {marker}\n")
    with pytest.raises(figures.FigureError, match=why):
        figures.drift(tmp_path, data)


def test_a_damaged_figures_file_is_refused(figures: ModuleType, tmp_path: Path) -> None:
    data = tmp_path / "docs" / "figures"
    data.mkdir(parents=True)
    (data / "serve.json").write_text("{not json", encoding="utf-8")
    _page(tmp_path, "<!-- fig serve | /x -->1<!-- /fig -->\n")
    with pytest.raises(figures.FigureError, match="not JSON"):
        figures.drift(tmp_path, data)


def test_scaling_shows_nanoseconds_in_microseconds_and_shares_as_percent(
    figures: ModuleType, tmp_path: Path
) -> None:
    data = tmp_path / "docs" / "figures"
    _data(data, "core", {"ns": 2762.4, "share": 0.0804})
    cache: dict[str, object] = {}
    assert figures.render("core", "/ns", "÷1000 {:.2f} µs", cache, data) == "2.76 µs"
    assert figures.render("core", "/share", "×100 {:.1f} %", cache, data) == "8.0 %"
    assert figures.render("core", "/recorded", None, cache, data) == "2026-12-03"
