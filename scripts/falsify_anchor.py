"""Where a falsify break applies: an anchor that survives a move.

A break names a file and the original text it breaks. The text is looked for in that file
first; where it is not there exactly once (the code moved to another module, or into a class, or
out of one), it is looked for in every source file the falsifier copies, at its own indentation
and then shifted left or right as a whole. It applies where it occurs exactly once in all of
them; the broken text is shifted the same way. So a refactor that moves a guarded function
keeps its break; one that changes the guard's text makes ``--check`` fail loudly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SOURCES = ("eoc", "native", "web", "scripts", "bench")
"""The folders a moved original is looked for in (relative to the checkout)."""

LISTS = ("scripts/falsify_breaks/", "scripts/falsify_first_red.json")
"""Where the breaks themselves are written: never a place a guard moved to."""

SUFFIXES = (".py", ".c", ".h", ".js", ".mjs", ".html", ".css", ".txt", ".tsv", ".json")
MAX_SHIFT = 24
"""The most columns a moved original may have been shifted left or right."""


@dataclass(frozen=True)
class Site:
    """Where one break applies: the file, the text there, the broken text to put instead."""

    path: str
    old: str
    new: str
    moved: str = ""  # "" where the break's own file and text were found, else what changed


def shifted(text: str, by: int) -> str | None:
    """``text`` with every line after the first, and the first where it starts with blanks,
    moved ``by`` columns (left when negative); ``None`` where a line has too few blanks to move
    left. Blank lines stay as they are."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if not line.strip() or (i == 0 and not line[:1].isspace()):
            out.append(line)
        elif by >= 0:
            out.append(" " * by + line)
        elif line[:-by].strip(" ") == "" and len(line) > -by:
            out.append(line[-by:])
        else:
            return None
    return "\n".join(out)


class Tree:
    """The checkout's source files, read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: dict[str, str] | None = None

    def text(self, path: str) -> str | None:
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def texts(self) -> dict[str, str]:
        if self._texts is None:
            found: dict[str, str] = {}
            for top in SOURCES:
                for f in sorted((self.root / top).rglob("*")):
                    rel = f.relative_to(self.root)
                    if any(
                        p.startswith(".") or p in ("node_modules", "__pycache__", "dist")
                        for p in rel.parts
                    ):
                        continue
                    if rel.as_posix().startswith(LISTS):
                        continue
                    if f.suffix in SUFFIXES and f.is_file():
                        text = self.text(str(rel))
                        if text is not None:
                            found[rel.as_posix()] = text
            self._texts = found
        return self._texts

    def locate(self, path: str, old: str, new: str) -> Site | str:
        """Where the break applies, or why it cannot (the reason, a string)."""
        own = self.text(path)
        if own is not None and own.count(old) == 1:
            return Site(path, old, new)
        hits: list[tuple[str, int]] = []
        for by in [0] + [s * d for d in range(1, MAX_SHIFT + 1) for s in (1, -1)]:
            moved_old = shifted(old, by)
            if moved_old is None:
                continue
            for where, text in self.texts().items():
                n = text.count(moved_old)
                hits.extend([(where, by)] * n)
            if hits:
                break  # the least shift that finds it
        if len(hits) == 1:
            where, by = hits[0]
            moved_new = shifted(new, by)
            if moved_new is None:
                return f"the original moved {by} columns, and the broken text cannot move so"
            what = []
            if where != path:
                what.append(f"now in {where}")
            if by:
                what.append(f"shifted {by:+d} columns")
            return Site(where, shifted(old, by) or old, moved_new, ", ".join(what))
        if own is None and not hits:
            return f"cannot read {path}, and the original is in no other source file"
        if not hits:
            count = own.count(old) if own is not None else 0
            return f"the original text occurs {count} times in {path}, and in no other file once"
        places = sorted({w for w, _ in hits})
        return f"the original text occurs {len(hits)} times in {', '.join(places[:4])}, not once"
