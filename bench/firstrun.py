"""How long a newcomer waits: ``eoc query "what is 2+2"`` cold (a fresh cache folder and per-user
store, as on a first run) and warm (the same folders again: the answer is a cache hit in the
store), side by side with the floor every Python tool with numpy pays (``python -c "import
numpy"``) and the bare interpreter.

    python bench/firstrun.py [--eoc PATH] [--runs 5]

``--eoc`` is the ``eoc`` command to time (default: the one next to this Python, e.g. a fresh
environment outside the checkout that installed the built wheel). Targets (issue 13): cold
<= 2 s, warm <= 0.3 s. Each figure is the median of ``--runs`` runs, wall time of the whole
process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "what is 2+2"


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def _fresh(base: dict[str, str], folder: Path) -> dict[str, str]:
    """``base`` with eoc's cache folder and its per-user store (``XDG_DATA_HOME``) in ``folder``:
    a first run, never the user's own store."""
    return {**base, "EOC_CACHE_DIR": str(folder / "cache"), "XDG_DATA_HOME": str(folder / "data")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eoc", default=str(Path(sys.executable).with_name("eoc")))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    python = str(Path(args.eoc).with_name("python"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("EOC_")}
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="eoc-firstrun-") as tmp:
        for i in range(args.runs):  # each in a folder no eoc has used: the first run
            cold.append(timed([args.eoc, "query", QUESTION], _fresh(base, Path(tmp) / f"cold{i}")))
        env = _fresh(base, Path(tmp) / "cold0")
        warm = [timed([args.eoc, "query", QUESTION], env) for _ in range(args.runs)]
    bare = [timed([python, "-c", "pass"], base) for _ in range(args.runs)]
    numpy = [timed([python, "-c", "import numpy"], base) for _ in range(args.runs)]
    c, w = statistics.median(cold), statistics.median(warm)
    b, n = statistics.median(bare), statistics.median(numpy)
    print(f'eoc query "{QUESTION}" ({args.eoc}), medians of {args.runs} runs, whole process:')
    print(
        f"  cold (fresh cache folder) : {c:6.2f} s   (target <= 2 s: {'PASS' if c <= 2 else 'FAIL'})"
    )
    print(
        f"  warm                      : {w:6.2f} s   (target <= 0.3 s: {'PASS' if w <= 0.3 else 'FAIL'})"
    )
    print(f"  floor: python -c 'import numpy' : {n:6.2f} s   (warm is {w / n:.1f}x this)")
    print(f"  floor: python -c 'pass'         : {b:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
