"""Regenerate eoc/stages/data/words.txt.gz: the English words and names the kv's spelling repair
and hit guard know, so that a word that is a word is never "repaired" into another one
("switch" is not a slip of "stitch", "Niger" no clipping of "Nigeria").

Run by hand (not at install or test time), with Debian's word lists installed:

    apt-get install wamerican wbritish     # SCOWL size 50, American and British spellings
    python scripts/build_words.py

What the file holds (UTF-8, gzip, one entry a line, sorted; lines starting with "#" are comments):

* the words: every entry of both lists written in lower case letters only (no capital, no
  apostrophe): about 65,000 common words, inflections included;
* after the line ``#names``: every other entry written with a capital first letter (names:
  places, people, languages, brands), in lower case;
* after the line ``#pack``: the other words of every name the knowledge pack holds (countries,
  capitals, elements, planets, moons, services), in lower case.

Source and licence: SCOWL (Spell Checker Oriented Word Lists) by Kevin Atkinson, as packaged
by Debian (wamerican, wbritish 2020.12.07); its permission notice is kept next to the file, in
eoc/stages/data/SCOWL-LICENSE.txt, as it asks.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eoc.knowledge import triples  # noqa: E402

LISTS = (Path("/usr/share/dict/american-english"), Path("/usr/share/dict/british-english"))
OUT = ROOT / "eoc" / "stages" / "data" / "words.txt.gz"
_LOWER = re.compile(r"[a-z]+")
_NAME = re.compile(r"[A-Z][a-z]+")
_PART = re.compile(r"[^\W\d_]+")
NAMED = {"is a"}  # the pack's "X is a country" etc.: every subject of these is a name


def main() -> int:
    words: set[str] = set()
    names: set[str] = set()
    for path in LISTS:
        if not path.exists():
            print(f"{path} is missing: apt-get install wamerican wbritish", file=sys.stderr)
            return 1
        for line in path.read_text(encoding="utf-8").splitlines():
            if _LOWER.fullmatch(line):
                words.add(line)
            elif _NAME.fullmatch(line):
                names.add(line.lower())
    pack: set[str] = set()
    for s, p, o in triples():
        if p in NAMED or p in ("capital", "capital city"):
            for text in (s, o) if p != "is a" else (s,):
                pack.update(w.lower() for w in _PART.findall(text) if len(w) >= 3)
    pack -= words
    names -= words | pack
    body = "\n".join(
        [
            "# SCOWL size 50 (American and British) lower-case words; then its names, lowered;",
            "# then the words of the knowledge pack's names that are neither",
            *sorted(words),
            "#names",
            *sorted(names),
            "#pack",
            *sorted(pack),
        ]
    )
    OUT.write_bytes(gzip.compress(body.encode("utf-8") + b"\n", mtime=0))
    print(
        f"{OUT.relative_to(ROOT)}: {len(words):,} words, {len(names):,} names, "
        f"{len(pack):,} more of the pack's"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
