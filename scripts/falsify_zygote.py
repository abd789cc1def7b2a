"""The falsifier's pytest runner: imports pytest and the heavy test libraries once, then forks.

    python scripts/falsify_zygote.py      # started by scripts/falsify.py, one per lane

A pytest run's start-up is mostly imports: hypothesis alone takes about a second on this
project's 2-core machines, pytest a quarter of one, and a break's tests often run in under a
second. So each lane of the falsifier keeps one of these processes. It imports what every run
would import and **nothing of eoc's** (a break changes eoc's source, so each run must import
eoc afresh from its broken copy), then reads one request a line on standard input, a JSON object:

* ``cwd``: the copy to run in, put first on ``sys.path`` with ``path``;
* ``env``: variables to set (the copy's ``PYTHONPATH`` for subprocesses the tests start, ...);
* ``args``: pytest's arguments;
* ``out``: the file the run's standard output and error go to;
* ``timeout``: seconds before the run is killed.

For each it forks a child that sets these and calls ``pytest.main``, and answers one JSON line
``{"rc": N}`` (``N`` the run's exit status, ``null`` when it was killed at its timeout). The
child is a copy of a process that has run nothing but imports, so each run starts from the same
state, as a fresh process would, minus the imports' time.

No Python thread is started before a fork (checked at start). numpy's OpenBLAS starts a native
thread pool when imported and restarts it in a forked child (its own ``pthread_atfork``
handlers), so numpy and the libraries on it are preloaded too. The preloaded heap is frozen
(``gc.freeze``): a child's collections, pytest's at its end among them, do not walk it again.
A child ends as a fresh process does, minus the interpreter's teardown: its output flushed and
its ``atexit`` handlers run (the session's temporary folders are removed), then ``os._exit``
with pytest's status.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback

PRELOAD = (
    "pytest",
    "_pytest.python",
    "_pytest.assertion.rewrite",
    "_pytest.capture",
    "_pytest.fixtures",
    "_pytest.runner",
    "_pytest.terminal",
    "_pytest.pytester",
    "hypothesis",
    "hypothesis.strategies",
    "hypothesis.stateful",
    "_hypothesis_pytestplugin",
    "httpx",
    "openai",
    "starlette.applications",
    "starlette.routing",
    "starlette.middleware.cors",
    "uvicorn",
    "orjson",
    # pytest plugins found through entry points: pytest imports them at every start, rewriting
    # their asserts afresh (their rewritten code is not cached), about half a second a run
    "anyio",
    "anyio.pytest_plugin",
    "anyio._backends._asyncio",
    "anyio._backends._trio",
    "platformdirs",
    "platformdirs.pytest_plugin",
    "xdist.plugin",
    "xdist.looponfail",
    "pytest_playwright.pytest_playwright",
    # what the native tests import (each a tenth of a second or more a run)
    "numpy",
    "numba",
    "psycopg",
    "psycopg_pool",
    "pyoxigraph",
    "gguf",
    "tokenizers",
    "pint",
    "jinja2",
    "requests",
    "pydantic",
    "playwright.sync_api",
    "schemathesis",
)
"""Modules every run would import and none of which imports eoc (checked at start)."""


def _preload() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # not installed here: the run imports what it needs itself
            pass
    mine = sorted(m for m in sys.modules if m.split(".")[0] in ("eoc", "eoc_native", "tests"))
    if mine:
        raise SystemExit(f"falsify_zygote: a preloaded module imported {mine[0]}: drop it")
    if threading.active_count() != 1:
        raise SystemExit("falsify_zygote: a preloaded module started a thread: drop it")
    gc.collect()
    gc.freeze()


def _child(req: dict[str, object]) -> int:
    """In the forked child: run pytest as asked; its exit status."""
    rc = 3
    try:
        out = os.open(str(req["out"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.setpgrp()  # the run and what it starts are one group, killed together at a timeout
        os.chdir(str(req["cwd"]))
        os.environ.update({str(k): str(v) for k, v in dict(req["env"]).items()})  # type: ignore[call-overload]
        sys.path[:0] = [str(p) for p in list(req["path"])]  # type: ignore[call-overload]
        sys.dont_write_bytecode = os.environ.get("PYTHONDONTWRITEBYTECODE") == "1"
        import pytest

        rc = int(pytest.main([str(a) for a in list(req["args"])]))  # type: ignore[call-overload]
    except BaseException:  # the run's own failure: shown in its output, status 3
        traceback.print_exc()
    return rc


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit status, or ``None`` when it was killed at ``timeout`` (its group too)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)  # the run's group: what it started too
            except ProcessLookupError:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


def main() -> None:
    _preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            rc = _child(req)
            # as a fresh process ends, minus the teardown of the interpreter's heap
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
        rc = _wait(pid, float(req.get("timeout", 600)))
        print(json.dumps({"rc": rc}), flush=True)


if __name__ == "__main__":
    main()
