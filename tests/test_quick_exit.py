"""The ``eoc`` console script ends ``eoc query``'s process without tearing the interpreter's
objects down (eoc/cli/main.py, ``run``): everything a usual exit would do first still happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import IN_BROWSER

pytestmark = pytest.mark.skipif(IN_BROWSER, reason="runs the console script in a subprocess")


def _run(code: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},  # a pipe buffers
        "EOC_MODEL": "none",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "EOC_CACHE_DIR": str(tmp_path / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


RUN = "import sys; from eoc.cli.main import run; sys.argv = ['eoc', *sys.argv[1:]]; run()"


def test_the_answer_the_exit_handlers_and_the_code_all_come_through(tmp_path: Path) -> None:
    """A quick exit still writes the whole answer to a pipe, runs the exit handlers, and ends
    with the command's code; the store holds what the query remembered."""
    marker = tmp_path / "handler-ran"
    code = (
        f"import atexit; atexit.register(lambda: open({str(marker)!r}, 'w').write('ran')); " + RUN
    )
    done = _run(code, tmp_path, "query", "--json", "what is 7 times 8")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["stage"] == "graph" and doc["payload"] == "56"
    assert marker.read_text() == "ran"
    again = _run(RUN, tmp_path, "query", "--json", "what is 7 times 8")
    assert json.loads(again.stdout)["stage"] == "cache"  # remembered in the per-user store
    bad = _run(RUN, tmp_path, "query", "")
    assert bad.returncode == 2 and "empty" in bad.stderr.lower()


def test_a_thread_still_working_is_waited_for(tmp_path: Path) -> None:
    """Where a thread other than the main one still runs, the process exits the usual way,
    which waits for it: its work is not cut off."""
    marker = tmp_path / "thread-done"
    code = (
        "import threading, time\n"
        "def work():\n"
        "    time.sleep(2.5)\n"  # longer than the query takes, even under load
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "threading.Thread(target=work).start()\n" + RUN
    )
    done = _run(code, tmp_path, "query", "what is 2+2")
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "done"


def test_other_commands_exit_the_usual_way(tmp_path: Path) -> None:
    """Only :data:`~eoc.cli.main.QUICK_EXIT` commands end early; ``eoc --version`` and a usage
    error keep their codes."""
    from eoc.cli.main import QUICK_EXIT

    assert QUICK_EXIT == {"query"}
    assert _run(RUN, tmp_path, "--version").returncode == 0
    assert _run(RUN, tmp_path, "no-such-command").returncode == 2
