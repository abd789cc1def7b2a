"""scripts/falsify.py cannot rot: every break's original text still occurs once in its file."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import IN_BROWSER

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> ModuleType:
    """A module of scripts/ (the folder on ``sys.path`` only while it is imported)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _broken_texts(suffix: str) -> Iterator[tuple[str, str, str]]:
    """(break, file, the file's text with the break applied) for every break of a ``suffix``
    file."""
    sites, _ = _script("falsify").located()
    for name, site in sites.items():
        if site.path.endswith(suffix):
            text = (ROOT / site.path).read_text(encoding="utf-8")
            yield name, site.path, text.replace(site.old, site.new, 1)


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_every_falsify_pattern_matches_exactly_once() -> None:
    falsify = _script("falsify")
    assert falsify.check_patterns() == []
    assert len(falsify.BREAKS) >= 100
    for _, path, _, _ in falsify.BREAKS:  # and every break names tests that cover it
        assert falsify.tests_for(path)


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
@pytest.mark.parametrize("fork", [True, False], ids=["forked from the zygote", "fresh process"])
def test_a_forked_run_gives_the_verdict_a_fresh_process_gives(tmp_path: Path, fork: bool) -> None:
    """The falsifier's runs forked from a process that imported pytest and hypothesis once
    (scripts/falsify_zygote.py) pass, fail and see their environment as fresh processes do,
    and import eoc afresh (the zygote never imports it: a break changes its source)."""
    falsify = _script("falsify")
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    (tmp_path / "test_bad.py").write_text(
        "import hypothesis\n\n\ndef test_bad():\n    assert 1 + 1 == 3\n"
    )
    (tmp_path / "test_env.py").write_text(
        "import os, sys\n\n\ndef test_env():\n"
        "    assert os.environ['EOC_FALSIFY_PROBE'] == 'set'\n"
        "    assert not any(m.split('.')[0] in ('eoc', 'eoc_native') for m in sys.modules)\n"
        "    assert os.getcwd() == sys.path[0] or os.getcwd() in sys.path\n"
    )
    quiet = ["-q", "-p", "no:cacheprovider"]
    runner = falsify.Runner(fork)
    try:
        assert fork == (runner.zygote is not None)
        assert runner.run(tmp_path, [*quiet, "test_ok.py"], {})[0] == 0
        rc, out = runner.run(tmp_path, [*quiet, "test_bad.py"], {})
        assert rc == 1 and "assert (1 + 1) == 3" in out
        assert runner.run(tmp_path, [*quiet, "test_env.py"], {"EOC_FALSIFY_PROBE": "set"})[0] == 0
        assert runner.run(tmp_path, [*quiet, "test_missing.py"], {})[0] == 4  # a usage error
    finally:
        runner.close()


def _anchor():  # type: ignore[no-untyped-def]
    falsify_anchor = _script("falsify_anchor")
    return falsify_anchor


_GUARD = "def checked(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n"
_OLD = "    if x < 0:\n        raise ValueError(x)"
_NEW = "    if False:\n        raise ValueError(x)"


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_a_break_follows_its_guard_into_another_module_and_a_class(tmp_path: Path) -> None:
    anchor = _anchor()
    (tmp_path / "eoc").mkdir()
    (tmp_path / "eoc" / "old.py").write_text("x = 1\n")
    moved = "class Rules:\n" + "".join(f"    {line}\n" for line in _GUARD.splitlines())
    (tmp_path / "eoc" / "rules.py").write_text(moved)
    site = anchor.Tree(tmp_path).locate("eoc/old.py", _OLD, _NEW)
    assert isinstance(site, anchor.Site), site
    assert site.path == "eoc/rules.py" and "shifted +4" in site.moved
    broken = moved.replace(site.old, site.new, 1)
    assert "        if False:\n            raise ValueError(x)" in broken
    compile(broken, "rules.py", "exec")  # still Python: the broken text moved with it


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_a_break_whose_guard_is_twice_or_nowhere_applies_nowhere(tmp_path: Path) -> None:
    anchor = _anchor()
    (tmp_path / "eoc").mkdir()
    (tmp_path / "eoc" / "a.py").write_text(_GUARD)
    (tmp_path / "eoc" / "b.py").write_text(_GUARD)
    twice = anchor.Tree(tmp_path).locate("eoc/c.py", _OLD, _NEW)
    assert isinstance(twice, str) and "2 times" in twice
    (tmp_path / "eoc" / "b.py").write_text("def checked(x):\n    return abs(x)\n")
    assert isinstance(anchor.Tree(tmp_path).locate("eoc/a.py", _OLD, _NEW), anchor.Site)
    gone = anchor.Tree(tmp_path).locate("eoc/b.py", "    return x\n", "    return 0\n")
    assert isinstance(gone, anchor.Site) and gone.path == "eoc/a.py"
    nowhere = anchor.Tree(tmp_path).locate("eoc/b.py", "    return -x\n", "    return 0\n")
    assert isinstance(nowhere, str) and "no other file" in nowhere


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_each_lane_runs_pytest_under_a_temporary_root_of_its_own(tmp_path: Path) -> None:
    """Two lanes under pytest's shared temporary root race to clear each other's old folders,
    and the warning that race raises fails a run without a verdict (a CI run saw it)."""
    falsify = _script("falsify")

    class Recording:
        def __init__(self) -> None:
            self.args: list[list[str]] = []

        def run(self, work: Path, args: list[str], env: dict[str, str]) -> tuple[int, str]:
            self.args.append(args)
            return 0, ""

    runner = Recording()
    for lane in ("w0", "w1"):
        falsify._pytest(runner, tmp_path / lane, ["tests/test_x.py"], tmp_path / f"{lane}.red")
    roots = [args[args.index("--basetemp") + 1] for args in runner.args]
    assert len(set(roots)) == 2
    assert all(Path(r).parent == tmp_path for r in roots)


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_the_lanes_take_the_slowest_breaks_first() -> None:
    """The breaks that took longest last time go first (a lane that draws a slow break late
    leaves the others idle at the end); one never timed counts a second; ties keep their order."""
    falsify = _script("falsify")
    took = {"slow": 24.0, "quick": 0.4, "also quick": 0.4, "mid": 3.0}
    order = falsify.longest_first(["quick", "new", "slow", "also quick", "mid"], took)
    assert order == ["slow", "mid", "new", "quick", "also quick"]
    assert falsify.UNKNOWN_S == 1.0
    recorded = falsify._load_seconds()
    assert recorded and all(v >= 0 for v in recorded.values())


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_every_break_of_a_python_file_still_compiles() -> None:
    """A break that leaves a Python file that does not compile (an emptied block) turns every
    test that imports it red, whatever the guard does: such a break proves nothing."""
    broken = []
    for name, path, text in _broken_texts(".py"):
        try:
            compile(text, path, "exec")
        except SyntaxError as exc:
            broken.append(f"{name}: {exc.msg} at line {exc.lineno}")
    assert broken == []


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
def test_every_break_of_the_c_kernels_still_compiles(tmp_path: Path) -> None:
    """As above for ckernels.c: a break the compiler refuses leaves eoc on numba's kernels or
    failing to load, not running the broken guard."""
    import subprocess

    cbuild = pytest.importorskip("eoc_native.quant.cbuild")
    cc = cbuild.compiler()
    if cc is None:
        pytest.skip("no C compiler here")
    refused = []
    source = tmp_path / "broken.c"
    for name, _, text in _broken_texts(".c"):
        source.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [cc, "-fsyntax-only", str(source)], capture_output=True, text=True, timeout=60
        )
        if done.returncode != 0:
            refused.append(f"{name}: {done.stderr.strip()[:200]}")
    assert refused == []
