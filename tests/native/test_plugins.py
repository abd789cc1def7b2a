"""The core finds what other packages add through entry points (eoc/plugins.py), never by a
package name: the native extra plugs in as a third party would, and a third party can too."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eoc import plugins
from eoc.assemble import kv_options
from eoc.errors import ConfigError
from eoc.meter.counter import StubCounter
from eoc.meter.detection import detect_all

CORE = Path(__file__).resolve().parents[2] / "eoc"


def test_the_core_never_imports_the_native_package_by_name() -> None:
    named = []
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named += [a.name for a in node.names if a.name.split(".")[0] == "eoc_native"]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("eoc_native"):
                named.append(f"{path.name}: from {node.module}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value == "eoc_native" or node.value.startswith("eoc_native."):
                    named.append(f"{path.name}: {node.value!r}")
    assert named == []


def test_the_native_extra_is_installed_under_eocs_own_entry_point_groups() -> None:
    assert "native" in plugins.names(plugins.COUNTER_SOURCES)
    assert "minilm" in plugins.names(plugins.EMBEDDERS)
    assert "gguf" in plugins.names(plugins.MODELS)
    assert "oxigraph" in plugins.names(plugins.GRAPH_STORES)
    assert {"serve", "graph"} <= set(plugins.names(plugins.COMMANDS))
    with pytest.raises(LookupError, match=r"no eoc\.embedders entry point named 'nothing'"):
        plugins.load(plugins.EMBEDDERS, "nothing")


@pytest.fixture
def third_party(tmp_path: Path) -> Iterator[Path]:
    """A package installed the way pip installs one: a module and a dist-info folder whose
    entry points add a counter source and a counter class."""
    (tmp_path / "acme_energy.py").write_text(
        "from types import SimpleNamespace\n"
        "from eoc.testing import FakeCounter\n"
        "class AcmeCounter(FakeCounter):\n"
        "    pass\n"
        "def survey(*, telemetry=True):\n"
        "    c = AcmeCounter(step_uj=7, name='acme')\n"
        "    return SimpleNamespace(whole_work=[c], other=[], telemetry=[], notes=[])\n",
        encoding="utf-8",
    )
    info = tmp_path / "acme_energy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-energy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[eoc.counter_sources]\nacme = acme_energy:survey\n\n"
        "[eoc.counters]\nacme = acme_energy:AcmeCounter\nrapl = acme_energy:AcmeCounter\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    plugins.refresh()
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("acme_energy", None)
        plugins.refresh()


def test_a_third_party_counter_source_is_offered_to_detection(third_party: Path) -> None:
    assert "acme" in plugins.names(plugins.COUNTER_SOURCES)
    found = detect_all()
    names = [c.name for c, _ in found.candidates]
    assert "acme" in names
    assert not isinstance(found.counter, StubCounter)


def test_a_counter_source_that_cannot_load_is_named_with_the_fix(
    third_party: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (third_party / "acme_energy.py").write_text("import acme_missing_dependency\n")
    real = plugins.load_all
    monkeypatch.setattr(
        "eoc.meter.detection.plugins.load_all",
        lambda group: [(n, o) for n, o in real(group) if n == "acme"],
    )
    found = detect_all()
    assert isinstance(found.counter, StubCounter)
    assert "counter source acme cannot load" in found.reason
    assert "acme_missing_dependency" in found.reason and "pip install" in found.reason


def test_an_embedder_name_nothing_installs_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EOC_EMBEDDER", "word2vec")
    with pytest.raises(ConfigError, match="names no installed embedder: use auto, hashed"):
        kv_options()


def test_a_third_party_using_a_counters_name_shadows_no_trusted_class(third_party: Path) -> None:
    trusted = plugins.values(plugins.COUNTERS)
    assert "eoc_native.counters.rapl:RaplCounter" in trusted  # eoc's, though "rapl" is taken twice
    assert "acme_energy:AcmeCounter" in trusted


def test_eocs_own_counters_come_before_a_third_partys(
    third_party: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    import eoc_native.counters as nc
    from eoc.testing import FakeCounter

    ours = FakeCounter(step_uj=5, name="ours")
    monkeypatch.setattr(
        nc,
        "survey",
        lambda telemetry=True: SimpleNamespace(whole_work=[ours], other=[], telemetry=[], notes=[]),
    )
    found = detect_all()
    assert [c.name for c, _ in found.candidates][:2] == ["ours", "acme"]
    assert found.counter is ours
