"""Render the benchmark figures the README and the docs cite from their data (docs/figures/).

    python scripts/figures.py            # check: every cited figure is what its data says
    python scripts/figures.py --write    # render the figures into the pages

A page cites a figure with a marker around its text::

    <!-- fig serve | /exact/ratio/req_s | {:.2f}× -->2.42×<!-- /fig -->

``serve`` names ``docs/figures/serve.json`` (written by ``python bench/serve.py --record``), the
second field is a JSON Pointer (RFC 6901) into that file (``/figures/...`` is implied when the
pointer does not start with ``/figures``, ``/recorded``, ``/host`` or ``/command``), and the
third a Python format for the value (``{}`` when left out; ``÷1000 {:.2f}`` divides it first, as
``×100 {:.1f} %`` multiplies it). A marker whose text differs from the
rendered value is drift: the check fails, naming the page, the line and both texts. A marker
that names a missing file or figure fails too: a figure never renders as a blank or a zero.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eoc.errors import EocError
from eoc.files.bounded import loads_strict, read_bounded

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures"
MARK = re.compile(
    r"<!-- fig (?P<file>[\w-]+) \| (?P<pointer>[^|]+?)(?: \| (?P<fmt>[^|]*?))? -->"
    r"(?P<text>.*?)<!-- /fig -->",
    re.DOTALL,
)
TOP = ("figures", "recorded", "host", "command", "benchmark")
MAX_DATA_BYTES = 4 << 20


class FigureError(Exception):
    """A marker names a file or a figure that is not there, or a format that does not apply."""


@dataclass(frozen=True)
class Citation:
    page: str
    line: int
    marker: str
    text: str
    rendered: str


def _load(name: str, cache: dict[str, Any], folder: Path) -> Any:
    if name not in cache:
        path = folder / f"{name}.json"
        if not path.is_file():
            raise FigureError(
                f"no figures file {path.name}: its benchmark writes it when run with --record "
                "(docs/benchmarks.md names the command)"
            )
        try:
            cache[name] = loads_strict(
                read_bounded(path, MAX_DATA_BYTES, what=path.name, stdin_ok=False), what=path.name
            )
        except EocError as exc:
            raise FigureError(
                f"{path.name} is not JSON we can read ({exc}): record it again"
            ) from exc
    return cache[name]


def lookup(doc: Any, pointer: str) -> Any:
    """The value at ``pointer`` (RFC 6901: ``/a/b``, ``~1`` for a slash, ``~0`` for a tilde);
    under ``/figures`` unless it starts with one of :data:`TOP`."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.strip().split("/")[1:]]
    if not pointer.startswith("/") or not parts:
        raise FigureError(f"{pointer!r} is no JSON Pointer (it starts with /)")
    if parts[0] not in TOP:
        parts = ["figures", *parts]
    value = doc
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise FigureError(f"no figure at {pointer!r} (no {part!r})")
    return value


SCALE = re.compile(r"([×÷])(\d+(?:\.\d+)?) (.*)", re.DOTALL)
"""A format that starts by scaling the value: ``÷1000 {:.2f} µs`` shows nanoseconds in µs."""


def render(name: str, pointer: str, fmt: str | None, cache: dict[str, Any], folder: Path) -> str:
    value = lookup(_load(name, cache, folder), pointer)
    if value is None or isinstance(value, bool | dict | list):
        raise FigureError(f"{name} {pointer!r} is {type(value).__name__}, not a figure")
    fmt = fmt or "{}"
    scaled = SCALE.fullmatch(fmt)
    if scaled:
        if not isinstance(value, int | float):
            raise FigureError(f"{name} {pointer!r} is no number to scale")
        by = float(scaled[2])
        value = value * by if scaled[1] == "×" else value / by
        fmt = scaled[3]
    try:
        return fmt.format(value)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise FigureError(f"{name} {pointer!r}: format {fmt!r} does not apply ({exc})") from exc


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def citations(text: str, page: str, folder: Path, cache: dict[str, Any]) -> list[Citation]:
    out = []
    for m in MARK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        head = m.group(0)[: m.start("text") - m.start()]
        try:
            rendered = render(m["file"], m["pointer"], m["fmt"], cache, folder)
        except FigureError as exc:
            raise FigureError(f"{page}:{line}: {exc}") from exc
        out.append(Citation(page, line, head, m["text"], rendered))
    return out


def rendered_text(text: str, folder: Path, cache: dict[str, Any]) -> str:
    def one(m: re.Match[str]) -> str:
        value = render(m["file"], m["pointer"], m["fmt"], cache, folder)
        return m.group(0)[: m.start("text") - m.start()] + value + "<!-- /fig -->"

    return MARK.sub(one, text)


def drift(root: Path = ROOT, folder: Path = FIGURES) -> list[Citation]:
    """Every citation whose text is not what its data renders."""
    cache: dict[str, Any] = {}
    out = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(root).as_posix()
        out += [c for c in citations(text, rel, folder, cache) if c.text != c.rendered]
    return out


def cited(root: Path = ROOT) -> set[str]:
    """The names of the figures files the pages cite."""
    return {
        m["file"] for page in pages(root) for m in MARK.finditer(page.read_text(encoding="utf-8"))
    }


def write(root: Path = ROOT, folder: Path = FIGURES) -> list[str]:
    """Render every page's figures in place; the pages changed."""
    cache: dict[str, Any] = {}
    changed = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        new = rendered_text(text, folder, cache)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page.relative_to(root).as_posix())
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="render the figures into the pages")
    args = parser.parse_args()
    try:
        if args.write:
            for page in write():
                print(f"rendered {page}")
            return 0
        found = drift()
    except FigureError as exc:
        print(f"figures: {exc}", file=sys.stderr)
        return 1
    for c in found:
        print(f"{c.page}:{c.line}: {c.marker} says {c.text!r}, its data {c.rendered!r}")
    if found:
        print("figures: run python scripts/figures.py --write to render them", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
