"""Falsify the guards: break each one on purpose and check that a test goes red.

    .venv/bin/python scripts/falsify.py            # every break, 2 at a time (make test runs it)
    .venv/bin/python scripts/falsify.py --check    # only: does every pattern still match once?
    .venv/bin/python scripts/falsify.py -k receipt # the breaks whose name holds "receipt"

Each break is (what it does, file, original text, broken text), listed in
``scripts/falsify_breaks/`` (one module per area). The original must occur exactly once in its file: a pattern that
no longer matches (the code moved on) fails the run loudly, so the list cannot rot. Breaks are
applied in throwaway copies of the checkout, never in the working tree, and each runs only the
test files that cover its source file (``TESTS_FOR``). A break that leaves its tests green, or a
pattern that does not match, makes the run exit 1. Each break first runs the one test that went
red for it last time (``scripts/falsify_first_red.json``, written by ``--record``), and its whole
group only when that test stays green.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from falsify_breaks import BREAKS, FOCUS, TESTS_FOR  # noqa: E402

COPY = ("eoc", "native", "tests", "bench", "scripts", "pyproject.toml", "web")
# __pycache__ is copied: its bytecode and numba's compiled kernels stay valid in the copies
# (both are checked against the source file's time and size, which a break changes), so each
# break does not compile every kernel again
SKIP = shutil.ignore_patterns(".pytest_cache", "node_modules", "dist", ".cache")


def check_patterns() -> list[str]:
    """Every break whose original text does not occur exactly once in its file."""
    problems: list[str] = []
    names = {b[0] for b in BREAKS}
    problems.extend(f"FOCUS names no break: {n}" for n in FOCUS if n not in names)
    for name, path, old, _new in BREAKS:
        try:
            count = (ROOT / path).read_text(encoding="utf-8").count(old)
        except OSError as exc:
            problems.append(f"{name}: cannot read {path}: {exc}")
            continue
        if count != 1:
            problems.append(f"{name}: the original text occurs {count} times in {path}, not once")
    return problems


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


def _load_first_red() -> dict[str, str]:
    try:
        data = json.loads(FIRST_RED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _pytest(work: Path, tests: list[str], red_file: Path) -> subprocess.CompletedProcess[str]:
    red_file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "EOC_PROPERTY_EXAMPLES": "400",
        "PYTHONDONTWRITEBYTECODE": "1",
        "EOC_FALSIFY_RED": str(red_file),
        # the copy's native/eoc_native before the editable install's (a subprocess too)
        "PYTHONPATH": os.pathsep.join([str(work / "native"), str(work)]),
    }
    files = [t.split("::", 1)[0] for t in tests]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            *_unused_plugins(files),
            *tests,
        ],
        cwd=work,  # the copy's eoc/ comes first on sys.path, its eoc_native by PYTHONPATH
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _run_one(
    work: Path, brk: tuple[str, str, str, str], first_red: dict[str, str]
) -> tuple[str, str, str]:
    """(name, verdict, the node id of the test that went red or "")."""
    name, path, old, new = brk
    group = FOCUS.get(name) or tests_for(path)
    target = work / path
    original = target.read_text(encoding="utf-8")
    target.write_text(original.replace(old, new, 1), encoding="utf-8")
    red_file = work.parent / f"{work.name}.red"
    t0 = time.perf_counter()
    try:
        how = "group"
        done = None
        known = first_red.get(name)
        if known:
            done = _pytest(work, [known], red_file)
            how = "first red"
        if done is None or done.returncode == 0 or done.returncode in (4, 5):
            done = _pytest(work, group, red_file)
            how = "group"
    except subprocess.TimeoutExpired:
        return name, "RED (timed out)", ""
    finally:
        target.write_text(original, encoding="utf-8")
    took = f"{time.perf_counter() - t0:5.1f} s"
    red = red_file.read_text(encoding="utf-8") if red_file.exists() else ""
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    if done.returncode == 0:
        return name, f"{took} still green", ""
    if done.returncode in (4, 5):  # a usage error, or no test ran (all skipped): nothing shown
        return name, f"{took} still green (no test ran: pytest exit {done.returncode})", ""
    shown = (red or (failed[0][7:] if failed else f"exit {done.returncode}"))[:72]
    return name, f"{took} RED ({how}) {shown}", red


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that patterns match")
    parser.add_argument(
        "-k", default="", help="only breaks whose name holds this text (several: a|b)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"write each break's first red test to {FIRST_RED.name}",
    )
    args = parser.parse_args()
    problems = check_patterns()
    for p in problems:
        print(f"PATTERN MISSING  {p}")
    if args.check or problems:
        print(f"falsify: {len(BREAKS)} breaks, {len(problems)} patterns that do not match")
        return 1 if problems else 0
    chosen = [b for b in BREAKS if any(k in b[0] for k in args.k.split("|"))]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eoc-falsify-") as tmp:
        works = []
        for i in range(max(1, args.jobs)):
            w = Path(tmp) / f"w{i}"
            _copy_tree(w)
            works.append(w)
        lanes = [chosen[i :: len(works)] for i in range(len(works))]

        first_red = _load_first_red()

        def lane(i: int) -> list[tuple[str, str, str]]:
            return [_run_one(works[i], b, first_red) for b in lanes[i]]

        with ThreadPoolExecutor(len(works)) as pool:
            results = [r for rs in pool.map(lane, range(len(works))) for r in rs]
    for name, verdict, _ in results:
        print(f"{name:55s} {verdict}")
    if args.record:
        known = {b[0] for b in BREAKS}
        updated = {k: v for k, v in _load_first_red().items() if k in known}
        updated.update({name: red for name, _, red in results if red})
        FIRST_RED.write_text(
            json.dumps(dict(sorted(updated.items())), indent=1) + "\n", encoding="utf-8"
        )
        print(f"wrote {FIRST_RED.relative_to(ROOT)} ({len(updated)} breaks)")
    green = [n for n, v, _ in results if " still green" in v]
    print(
        f"falsify: {len(results)} breaks, {len(results) - len(green)} red, "
        f"{len(green)} still green, {time.perf_counter() - started:.0f} s"
    )
    return 1 if green else 0


if __name__ == "__main__":
    sys.exit(main())
