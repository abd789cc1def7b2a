"""Benchmark figures as data: what a benchmark run with ``--record`` measured, written to
``docs/figures/<name>.json``.

The README and the pages in ``docs/`` never type a benchmark's figure: they hold a marker that
names the file and the figure (``<!-- fig serve | /exact/ratio/req_s | {:.2f}× -->``), and
``scripts/figures.py`` renders the figure there from the file. So a figure says one thing
wherever it is cited, and a new run changes every citation at once (``python
scripts/figures.py --write``; ``make test`` fails when a page and its data disagree).

Each file holds the benchmark's whole result (what ``--json`` prints) under ``figures``, with
when, where and by which command it was measured.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures"


def host() -> dict[str, Any]:
    """The machine a run measured on, as the pages describe it."""
    try:
        load = round(os.getloadavg()[0], 2)
    except OSError:
        load = None
    return {
        "machine": platform.machine(),
        "system": platform.system(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1min": load,
    }


def record(
    name: str, figures: dict[str, Any], *, file: str = "", argv: list[str] | None = None
) -> Path:
    """Write ``figures`` (the whole result of ``bench/<name>.py``) to
    ``docs/figures/<file>.json`` (``file`` defaults to ``name``: a benchmark with several suites
    names one file each), with the command that measured them, the date and the host; return
    the file's path."""
    args = sys.argv[1:] if argv is None else argv
    doc = {
        "benchmark": f"bench/{name}.py",
        "command": " ".join(["python", f"bench/{name}.py", *args]),
        "recorded": datetime.date.today().isoformat(),
        "host": host(),
        "figures": figures,
    }
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{file or name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    tmp.replace(path)
    print(
        f"recorded {path.relative_to(ROOT)}; render the pages: python scripts/figures.py --write",
        file=sys.stderr,
    )
    return path
