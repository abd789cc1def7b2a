"""The demo page stops its model in a repetition loop by the rule eoc's runner stops by: the
page's ``web/src/loops.js`` and the core's ``eoc.stages.degenerate`` say the same on the same
streams (run here with node, as the page runs it in Chromium)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from eoc.stages.degenerate import LOOP_RULE, until_loop

ROOT = Path(__file__).resolve().parents[2]
LOOPS = ROOT / "web" / "src" / "loops.js"


def streams() -> list[list[str]]:
    rng = random.Random(7)
    words = ["a", "silent", "witness", ",", " rain", " on", " the", " roof", "!", "\n"]
    out = [
        ["a", " silent", " witness", ","] * 9 + [" end"],  # a loop of four pieces
        ["!"] * 30,  # one piece said over and over: a loop once it spans 12
        ["!"] * 4 + [" yes"] + ["!"] * 4,  # short runs go on
        [str(i) for i in range(200)],  # never a loop
        [" la"] * 11,  # not yet 12
        ["x", "y"] * 5 + ["z"],  # a cycle of two, 10 long: not yet 12
    ]
    out += [[rng.choice(words) for _ in range(rng.randint(1, 120))] for _ in range(200)]
    for _ in range(400):  # a start, a cycle said 2 to 6 times, an end: some loops, some not
        cycle = [rng.choice(words) for _ in range(rng.randint(1, 10))]
        start = [rng.choice(words) for _ in range(rng.randint(0, 20))]
        end = [rng.choice(words) for _ in range(rng.randint(0, 20))]
        out.append(start + cycle * rng.randint(2, 6) + end)
    return out


def test_the_page_stops_where_the_runner_stops() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("no node on PATH: the demo's tests need node 20 (make test installs it)")
    cases = streams()
    want = [len(list(until_loop(iter(s)))) for s in cases]
    script = (
        f"import {{ LoopWatch, DEFAULT_RULE }} from {json.dumps(LOOPS.as_uri())};\n"
        "import fs from 'node:fs';\n"
        "const { rule, cases } = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
        "const out = cases.map((s) => { const w = new LoopWatch(rule); let n = 0;\n"
        "  for (const p of s) { n += 1; if (w.add(p)) break; } return n; });\n"
        "console.log(JSON.stringify({ out, defaults: DEFAULT_RULE }));\n"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps({"rule": LOOP_RULE, "cases": cases}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["out"] == want
    assert got["defaults"] == LOOP_RULE  # the page's own defaults are the core's figures
    assert sum(n < len(s) for n, s in zip(want, cases, strict=True)) >= 100  # loops were found
