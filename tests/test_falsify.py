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


@pytest.mark.skipif(IN_BROWSER, reason="scripts/ is not mounted in Pyodide")
@pytest.mark.parametrize("fork", [True, False], ids=["forked from the zygote", "fresh process"])
def test_a_forked_run_gives_the_verdict_a_fresh_process_gives(tmp_path: Path, fork: bool) -> None:
    """The falsifier's runs forked from a process that imported pytest and hypothesis once
    (scripts/falsify_zygote.py) pass, fail and see their environment as fresh processes do,
    and import eoc afresh (the zygote never imports it: a break changes its source)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import falsify
    finally:
        sys.path.remove(str(ROOT / "scripts"))
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
