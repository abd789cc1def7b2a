"""Falsify the guards: break each one on purpose and check that a test goes red.

    .venv/bin/python scripts/falsify.py            # every break, 2 at a time (make test runs it)
    .venv/bin/python scripts/falsify.py --check    # only: does every pattern still match once?
    .venv/bin/python scripts/falsify.py -k receipt # the breaks whose name holds "receipt"

Each break is (what it does, file, original text, broken text), listed in
``scripts/falsify_breaks/`` (one module per area). The original must occur exactly once: in its
file, or, where the code moved (to another module, into or out of a class), in exactly one source
file at a shifted indentation (scripts/falsify_anchor.py; ``--check`` names each moved break).
A pattern that matches nowhere once (the guard's text changed) fails the run loudly, so the list
cannot rot. Breaks are
applied in throwaway copies of the checkout, never in the working tree, and each runs only the
test files that cover its source file (``TESTS_FOR``). A break that leaves its tests green, or a
pattern that does not match, makes the run exit 1. Each break first runs the one test that went
red for it last time (``scripts/falsify_first_red.json``, written by ``--record``), and its whole
group only when that test stays green; the lanes take the breaks that took longest last time
first (``scripts/falsify_seconds.json``, also written by ``--record``). Each lane forks its
pytest runs from a process that imported pytest, hypothesis and the tests' third-party libraries
once (scripts/falsify_zygote.py; ``--no-fork``: a fresh process for each run); a run pytest
itself could not make, with no test red, is never counted red.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from falsify_anchor import Site, Tree  # noqa: E402
from falsify_breaks import BREAKS, FOCUS, TESTS_FOR  # noqa: E402

COPY = ("eoc", "native", "tests", "bench", "scripts", "pyproject.toml", "web", "docs", "mkdocs.yml")
# __pycache__ is copied: its bytecode and numba's compiled kernels stay valid in the copies
# (both are checked against the source file's time and size, which a break changes), so each
# break does not compile every kernel again
SKIP = shutil.ignore_patterns(".pytest_cache", "node_modules", "dist", ".cache", ".venv*")


def located() -> tuple[dict[str, Site], list[str]]:
    """Where each break applies (:mod:`falsify_anchor`: its file, else where its original moved
    to), and every break that applies nowhere once."""
    problems: list[str] = []
    names = {b[0] for b in BREAKS}
    problems.extend(f"FOCUS names no break: {n}" for n in FOCUS if n not in names)
    counts = Counter(b[0] for b in BREAKS)
    problems.extend(f"two breaks share the name {n!r}" for n, k in sorted(counts.items()) if k > 1)
    tree = Tree(ROOT)
    sites: dict[str, Site] = {}
    for name, path, old, new in BREAKS:
        found = tree.locate(path, old, new)
        if isinstance(found, str):
            problems.append(f"{name}: {found}")
        else:
            sites[name] = found
    return sites, problems


def check_patterns() -> list[str]:
    """Every break whose original text occurs nowhere exactly once."""
    return located()[1]


def tests_for(path: str) -> list[str]:
    for prefix, tests in TESTS_FOR:
        if path.startswith(prefix):
            return tests
    raise SystemExit(f"falsify: no tests listed for {path} in TESTS_FOR")


def _unused_plugins(tests: list[str]) -> list[str]:
    """Pytest plugins these tests do not need (each costs about half a second a start)."""
    if any(t.startswith("tests/web/") for t in tests):
        return []
    return ["-p", "no:playwright", "-p", "no:base_url"]


def _copy_tree(dest: Path) -> None:
    for item in COPY:
        src = ROOT / item
        target = dest / item
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=SKIP)
        else:
            shutil.copy2(src, target)


FIRST_RED = ROOT / "scripts" / "falsify_first_red.json"
"""For each break, the test that went red first in a run of its whole group (``--record``
writes it). A break runs that one test first; only if it stays green does the whole group run,
so a stale entry costs time, never a verdict."""


def _load_record(path: Path) -> dict[str, object]:
    """What ``--record`` wrote to ``path``: a JSON object, else nothing (a missing or damaged
    record costs time, never a verdict)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(path: Path, data: Mapping[str, object]) -> None:
    path.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)} ({len(data)} breaks)")


def _load_first_red() -> dict[str, str]:
    return {str(k): str(v) for k, v in _load_record(FIRST_RED).items()}


SECONDS = ROOT / "scripts" / "falsify_seconds.json"
"""For each break, the seconds its run took last time (``--record`` writes them). The lanes take
the longest first, so the run does not end on one lane waiting out a slow break while the
other is idle; a break without an entry counts as :data:`UNKNOWN_S`."""
UNKNOWN_S = 1.0


def _load_seconds() -> dict[str, float]:
    return {
        str(k): float(v) for k, v in _load_record(SECONDS).items() if isinstance(v, int | float)
    }


def longest_first(names: list[str], seconds: dict[str, float]) -> list[str]:
    """``names`` ordered by the seconds each took last time, longest first (ties: as listed)."""
    return sorted(names, key=lambda n: -seconds.get(n, UNKNOWN_S))


RUN_TIMEOUT_S = 600

ONE_THREAD = {"EOC_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""Each run's models and BLAS on one thread: the lanes keep the cores busy, and a second thread
only spins while it waits for the first (as in ``make unit``; a test of thread counts sets its
own)."""


class Runner:
    """Runs pytest for one lane: in a child forked from the lane's zygote
    (scripts/falsify_zygote.py, which imported pytest and the heavy test libraries once), or,
    without one (``--no-fork``, or a zygote that could not start), in a fresh process."""

    def __init__(self, fork: bool) -> None:
        self.zygote: subprocess.Popen[str] | None = None
        if not fork:
            return
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "falsify_zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **ONE_THREAD},  # numpy's BLAS sizes its pool at its import
        )
        assert proc.stdout is not None
        if proc.stdout.readline().strip() == '{"ready": true}':
            self.zygote = proc
        else:
            print("falsify: the zygote did not start; each run starts a process", file=sys.stderr)
            proc.kill()
            proc.communicate()

    def run(self, work: Path, args: list[str], env: dict[str, str]) -> tuple[int, str]:
        """(pytest's exit status, its output) for ``args`` run in ``work``.

        Raises:
            subprocess.TimeoutExpired: the run took more than :data:`RUN_TIMEOUT_S`.
        """
        if self.zygote is None:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", *args],
                cwd=work,  # the copy's eoc/ comes first on sys.path, its eoc_native by PYTHONPATH
                capture_output=True,
                text=True,
                env={**os.environ, **env},
                timeout=RUN_TIMEOUT_S,
            )
            return done.returncode, done.stdout
        out = work.parent / f"{work.name}.out"
        # pytest would warn that the preloaded plugin modules (hypothesis's) cannot have their
        # asserts rewritten, and the project's filterwarnings makes a warning an error
        args = ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
        request = {
            "cwd": str(work),
            "path": [
                str(work),
                str(work / "native"),
            ],  # as python -m pytest in work, and PYTHONPATH
            "env": env,
            "args": args,
            "out": str(out),
            "timeout": RUN_TIMEOUT_S,
        }
        assert self.zygote.stdin is not None and self.zygote.stdout is not None
        self.zygote.stdin.write(json.dumps(request) + "\n")
        self.zygote.stdin.flush()
        answer = self.zygote.stdout.readline()
        if not answer:
            raise SystemExit("falsify: a zygote died; run again with --no-fork to see why")
        rc = json.loads(answer)["rc"]
        if rc is None:
            raise subprocess.TimeoutExpired(args, RUN_TIMEOUT_S)
        return int(rc), out.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.communicate(timeout=10)  # its standard input closed: it ends


def _pytest(runner: Runner, work: Path, tests: list[str], red_file: Path) -> tuple[int, str]:
    red_file.unlink(missing_ok=True)
    env = {
        **ONE_THREAD,
        "EOC_PROPERTY_EXAMPLES": "400",
        "PYTHONDONTWRITEBYTECODE": "1",
        "EOC_FALSIFY_RED": str(red_file),
        # the copy's native/eoc_native before the editable install's (a subprocess too)
        "PYTHONPATH": os.pathsep.join([str(work / "native"), str(work)]),
    }
    files = [t.split("::", 1)[0] for t in tests]
    # each lane's own temporary root: two lanes under pytest's shared one race to clear each
    # other's old folders, and the warning that race raises fails a run (an error, not a red)
    basetemp = work.parent / f"{work.name}.tmp"
    args = [
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "--basetemp",
        str(basetemp),
        *_unused_plugins(files),
        *tests,
    ]
    return runner.run(work, args, env)


def _run_one(
    runner: Runner, work: Path, name: str, site: Site, first_red: dict[str, str]
) -> tuple[str, str, str, float]:
    """(name, verdict, the node id of the test that went red or "", seconds taken)."""
    group = FOCUS.get(name) or tests_for(site.path)
    target = work / site.path
    original = target.read_text(encoding="utf-8")
    target.write_text(original.replace(site.old, site.new, 1), encoding="utf-8")
    red_file = work.parent / f"{work.name}.red"
    t0 = time.perf_counter()
    try:
        how = "group"
        done = None
        known = first_red.get(name)
        if known:
            done = _pytest(runner, work, [known], red_file)
            how = "first red"
        if done is None or done[0] == 0 or done[0] in (4, 5):
            done = _pytest(runner, work, group, red_file)
            how = "group"
    except subprocess.TimeoutExpired:
        return name, "RED (timed out)", "", float(RUN_TIMEOUT_S)
    finally:
        target.write_text(original, encoding="utf-8")
    seconds = time.perf_counter() - t0
    took = f"{seconds:5.1f} s"
    red = red_file.read_text(encoding="utf-8") if red_file.exists() else ""
    rc, output = done
    failed = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
    if rc == 0:
        return name, f"{took} still green", "", seconds
    if rc in (4, 5):  # a usage error, or no test ran (all skipped): nothing shown
        return name, f"{took} still green (no test ran: pytest exit {rc})", "", seconds
    if rc not in (1, 2) and not failed and rc >= 0:
        # pytest's own failure (3) with no test red: no verdict, never a red. A run the broken
        # code crashed (a signal: memory it wrote past) or that failed a test before it ended
        # is red, as it was in a fresh process.
        tail = " | ".join(output.strip().splitlines()[-3:])[:300]
        return name, f"{took} still green (pytest failed to run: exit {rc}: {tail})", "", seconds
    shown = (red or (failed[0].split(" ", 1)[-1] if failed else f"exit {rc}"))[:72]
    return name, f"{took} RED ({how}) {shown}", red, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that patterns match")
    parser.add_argument(
        "-k", default="", help="only breaks whose name holds this text (several: a|b)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="start a fresh process for each pytest run (slower; the runs are the same)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"write each break's first red test to {FIRST_RED.name}",
    )
    args = parser.parse_args()
    sites, problems = located()
    for p in problems:
        print(f"PATTERN MISSING  {p}")
    for name, site in sites.items():
        if site.moved:
            print(f"moved  {name}: {site.moved}")
    if args.check or problems:
        print(f"falsify: {len(BREAKS)} breaks, {len(problems)} patterns that do not match")
        return 1 if problems else 0
    chosen = [b for b in BREAKS if any(k in b[0] for k in args.k.split("|"))]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eoc-falsify-") as tmp:
        works = [Path(tmp) / f"w{i}" for i in range(max(1, args.jobs))]
        with ThreadPoolExecutor(len(works)) as pool:
            list(pool.map(_copy_tree, works))
        # one queue for every lane, the slowest breaks first: a lane that drew a slow break (a
        # test that waits out a bound) does not leave the others idle at the end
        queue = list(reversed(longest_first([b[0] for b in chosen], _load_seconds())))
        taking = threading.Lock()

        first_red = _load_first_red()
        runners = [Runner(not args.no_fork) for _ in works]

        def lane(i: int) -> list[tuple[str, str, str, float]]:
            done: list[tuple[str, str, str, float]] = []
            while True:
                with taking:
                    if not queue:
                        return done
                    name = queue.pop()
                done.append(_run_one(runners[i], works[i], name, sites[name], first_red))

        try:
            with ThreadPoolExecutor(len(works)) as pool:
                by_name = {r[0]: r for rs in pool.map(lane, range(len(works))) for r in rs}
        finally:
            for runner in runners:
                runner.close()
        results = [by_name[b[0]] for b in chosen]  # in the order the breaks are listed
    for name, verdict, _, _ in results:
        print(f"{name:55s} {verdict}")
    if args.record:
        known = {b[0] for b in BREAKS}
        updated = {k: v for k, v in _load_first_red().items() if k in known}
        updated.update({name: red for name, _, red, _ in results if red})
        _write_record(FIRST_RED, updated)
        took = {k: v for k, v in _load_seconds().items() if k in known}
        took.update({name: round(s, 1) for name, _, _, s in results})
        _write_record(SECONDS, took)
    green = [n for n, v, _, _ in results if " still green" in v]
    print(
        f"falsify: {len(results)} breaks, {len(results) - len(green)} red, "
        f"{len(green)} still green, {time.perf_counter() - started:.0f} s"
    )
    return 1 if green else 0


if __name__ == "__main__":
    sys.exit(main())
