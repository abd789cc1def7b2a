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


def _by_group(found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """``found`` grouped by group, each group in the order found (the order that decides which
    of two of a name wins; importlib.metadata on Python 3.11 gives them grouped)."""
    return sorted(found, key=lambda e: e[0])


def _standard() -> list[tuple[str, str, str]]:
    """The ``eoc.*`` entry points as ``importlib.metadata`` reads them."""
    import itertools
    from importlib import metadata

    found = metadata.entry_points()
    every = itertools.chain.from_iterable(dict.values(found)) if isinstance(found, dict) else found
    return [(e.group, e.name, e.value) for e in every if e.group.startswith("eoc.")]


def _fast() -> list[tuple[str, str, str]] | None:
    found = plugins._scan()
    return None if found is None else [(e.group, e.name, e.value) for e in found]


def test_the_fast_scan_reads_what_importlib_metadata_reads(third_party: Path) -> None:
    """eoc reads the entry points from the dist-info folders itself (about 1 ms, against 25 ms
    for importlib.metadata and its import): the same ones, in the same order, with the same
    first-of-a-name rule. A second copy of a distribution later on the path (its name written
    another way), an egg-info folder and comments are read as importlib.metadata reads them."""
    later = third_party / "later"
    later.mkdir()
    copy = later / "Acme.Energy-2.0.dist-info"  # the same distribution, later on the path
    copy.mkdir()
    (copy / "entry_points.txt").write_text("[eoc.counters]\nshadow = acme_energy:AcmeCounter\n")
    legacy = later / "old_tool-0.1.egg-info"
    legacy.mkdir()
    (legacy / "entry_points.txt").write_text(
        "# a comment\n[console_scripts]\nold = old_tool:main\n\n[eoc.models]\nold = old_tool:Model\n"
    )
    sys.path.append(str(later))
    plugins.refresh()
    try:
        fast = _fast()
        assert fast is not None and _by_group(fast) == _by_group(_standard())
        assert ("eoc.models", "old", "old_tool:Model") in fast
        assert ("eoc.counters", "shadow", "acme_energy:AcmeCounter") not in fast
        assert plugins.load(plugins.COUNTERS, "acme").__name__ == "AcmeCounter"
    finally:
        sys.path.remove(str(later))
        plugins.refresh()


def test_what_the_fast_scan_cannot_read_goes_to_importlib_metadata(tmp_path: Path) -> None:
    """A zip or an egg on the path: the scan steps aside, and importlib.metadata decides."""
    import zipfile

    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[eoc.models]\nzipped = zipped:M\n")
    sys.path.append(str(archive))
    plugins.refresh()
    try:
        assert plugins._scan() is None
        assert "zipped" in plugins.names(plugins.MODELS)  # read by importlib.metadata
    finally:
        sys.path.remove(str(archive))
        plugins.refresh()
    egg_dir = tmp_path / "eggs"
    (egg_dir / "thing-1.0-py3.11.egg").mkdir(parents=True)
    sys.path.append(str(egg_dir))
    try:
        assert plugins._scan() is None
    finally:
        sys.path.remove(str(egg_dir))
        plugins.refresh()


def test_an_entry_point_loads_what_its_value_names() -> None:
    ep = plugins.EntryPoint("x", "eoc.plugins : EntryPoint.load [extra]", "eoc.test")
    assert ep.load() is plugins.EntryPoint.load
    with pytest.raises(ImportError, match="names no module"):
        plugins.EntryPoint("x", "not a module!", "eoc.test").load()


def test_a_finder_of_its_own_on_meta_path_sends_the_scan_to_importlib_metadata() -> None:
    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    finder = Finder()
    sys.meta_path.append(finder)
    try:
        assert plugins._scan() is None
    finally:
        sys.meta_path.remove(finder)
