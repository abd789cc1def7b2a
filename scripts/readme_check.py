"""Run the transcripts of README.md and docs/ and check that each shows what the program prints.

    python scripts/readme_check.py [--write] [--readme FILE] [FILE ...]

By default it checks README.md and every page under docs/ (``docs/**/*.md``); ``--readme FILE``
(repeatable) or files named after the options check those instead.

A transcript is a ```console block. Each ``$ COMMAND`` line (a trailing backslash continues it)
runs with ``bash`` in a fresh folder kept for the block (so ``eoc query --json ... > a.json``
then ``eoc verify a.json`` works), with this checkout's virtual environment first on ``PATH``,
a fresh ``$EOC_CACHE_DIR``, a fresh ``$XDG_DATA_HOME`` (so ``eoc query`` remembers in a store of
the block's own, never the user's) and standard error merged into standard output. The lines after it,
up to the next command, are what it must print, line for line, where

* a line ``...`` stands for any number of lines, and ``...`` inside a line for any text;
* figures that depend on the host and the moment (µJ, J, timings, 64-digit digests) and the
  home folder (``~``) are compared by their shape, not their value.

A block is skipped, with its reason printed, when the line before it is
``<!-- readme-check: skip REASON -->`` (a block that needs a running server, a model run that
takes a minute, or the demo).

``--write`` replaces each checked block whose text has no ``...`` with what was printed.
Exit status 1 when a block differs (the differences are printed), else 0.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SKIP = re.compile(r"<!--\s*readme-check:\s*skip\s+(.+?)\s*-->")
TIMEOUT_S = 120

_NUMBER = r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
_DURATION = re.compile(_NUMBER + r" ?(?:ms|µs|ns|s)\b")  # the unit follows the magnitude
_ENERGY = re.compile(_NUMBER + r"(?= ?(?:µJ|nJ|mJ|J)\b)")
_DIGEST = re.compile(r"\b[0-9a-f]{64}\b")


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    start: int  # index of the ```console line
    end: int  # index of the closing ``` line
    steps: list[Step]
    skip: str = ""


def blocks(lines: list[str]) -> list[Block]:
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        start = i
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.search(before)
        steps: list[Step] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1] + " " + lines[i].strip()
                steps.append(Step(command))
            elif steps:
                steps[-1].expected.append(line)
            i += 1
        for step in steps:  # a blank line between two commands separates them
            while step.expected and not step.expected[-1].strip():
                step.expected.pop()
        out.append(Block(start, i, steps, skip.group(1) if skip else ""))
        i += 1
    return out


def shape(line: str) -> str:
    """A line with its host- and moment-dependent figures reduced to their shape."""
    line = line.replace(str(Path.home()), "~")
    line = _DIGEST.sub("<digest>", line)
    return _ENERGY.sub("<n>", _DURATION.sub("<duration>", line)).rstrip()


def _line_matches(expected: str, actual: str) -> bool:
    parts = [re.escape(p) for p in shape(expected).split("...")]
    return re.fullmatch(".*".join(parts), shape(actual)) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` reads as ``expected`` (``...`` lines match any run of lines)."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            result = j == len(actual)
        elif expected[i].strip() == "...":
            result = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and _line_matches(expected[i], actual[j]) and go(i + 1, j + 1)
        memo[key] = result
        return result

    return go(0, 0)


def run(command: str, cwd: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    text = done.stdout.replace("\r", "\n")
    return [line.rstrip() for line in text.splitlines()]


def default_files() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def _label(path: Path) -> str:
    """How a file is named in the report: relative to the checkout, else by its name."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.name


def check_file(path: Path, write: bool) -> tuple[int, int]:
    """Run one file's transcripts; (blocks run, blocks that differ). With ``write``, rewrite
    the differing blocks that have no ``...`` from what was printed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = _label(path)
    bad = checked = 0
    replacements: list[tuple[Block, list[str]]] = []
    for block in blocks(lines):
        where = f"{name}:{block.start + 1}"
        if block.skip:
            print(f"skip  {where}: {block.skip}")
            continue
        with tempfile.TemporaryDirectory(prefix="eoc-readme-") as tmp:
            (Path(tmp) / "bench").symlink_to(ROOT / "bench")  # "eoc bench run bench/suites/..."
            env = {
                **os.environ,
                "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "EOC_CACHE_DIR": str(Path(tmp) / "cache"),
                # eoc query's per-user store: one per block, so a block's answers are its own
                "XDG_DATA_HOME": str(Path(tmp) / "data"),
                "COLUMNS": "100",
            }
            env.pop("EOC_EMBEDDER", None)  # the pages show the defaults
            printed: list[str] = []
            ok = True
            for step in block.steps:
                actual = run(step.command, Path(tmp), env)
                printed += [f"$ {step.command}", *actual]
                if not matches(step.expected, actual):
                    ok = False
                    print(f"DIFF  {where}: $ {step.command}")
                    print(f"  {name} shows:")
                    print("\n".join(f"    {x}" for x in step.expected))
                    print("  the program printed:")
                    print("\n".join(f"    {x}" for x in actual))
        checked += 1
        if ok:
            print(f"ok    {where}: {len(block.steps)} command(s)")
        else:
            bad += 1
            body = lines[block.start + 1 : block.end]
            if write and not any("..." in x for x in body):
                replacements.append((block, printed))
    if replacements:
        for block, printed in sorted(replacements, key=lambda r: -r[0].start):
            lines[block.start + 1 : block.end] = printed
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"rewrote {len(replacements)} block(s) of {name}")
    return checked, bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite blocks without '...'")
    parser.add_argument(
        "--readme",
        type=Path,
        action="append",
        default=[],
        help="a file to check (repeatable; default: README.md and docs/**/*.md)",
    )
    parser.add_argument("files", type=Path, nargs="*", help="more files to check")
    args = parser.parse_args(argv)
    files: list[Path] = [*args.readme, *args.files] or default_files()
    bad = checked = 0
    for path in files:
        n, m = check_file(path, args.write)
        checked += n
        bad += m
    print(f"readme-check: {len(files)} file(s), {checked} transcript(s) run, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
