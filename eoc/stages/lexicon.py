"""The English words and names eoc knows, so that a word that is a word is never read as a slip
of another one: "switch" is not "stitch" misspelled, "diary" not "dairy", "Niger" no clipping of
"Nigeria", "Java" none of "JavaScript". The kv repairs only a word that is no word
(:mod:`eoc.stages.repair`), and the hit guard pairs two words as one written two ways only
where one of them is no word, or they are one word's British and American spellings
(:func:`variants`: "colour" / "color", "centre" / "center").

The list is ``data/words.txt.gz`` (``scripts/build_words.py``): SCOWL's size-50 American and
British word lists (Kevin Atkinson; permission notice in ``data/SCOWL-LICENSE.txt``), about
65,000 lower-case words and 9,000 names, with the words of the knowledge pack's names. It is
read once, the first time a word is looked up (about 20 ms). Standard library only (the browser
runs it).

A name outside the pack ("Oder", "Java") is a name where it is written with its capital; typed
in lower case, "oder" may be a slip of "order". Two names, or two words, one slip apart are
never paired ("Bali" / "Mali", "Iran" / "Iraq", "chad" / "chat").
"""

from __future__ import annotations

import functools
import gzip
import re
from importlib import resources

_NAMES_MARK = "#names"
_PACK_MARK = "#pack"


@functools.cache
def _lists() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(the lower-case words, the names, the pack's names), each lower case."""
    raw = (resources.files(__package__) / "data" / "words.txt.gz").read_bytes()
    text = gzip.decompress(raw).decode("utf-8")
    head, _, tail = text.partition(f"\n{_NAMES_MARK}\n")
    names, _, pack = tail.partition(f"\n{_PACK_MARK}\n")

    def entries(part: str) -> frozenset[str]:
        return frozenset(w for w in part.splitlines() if w and not w.startswith("#"))

    return entries(head), entries(names), entries(pack)


def is_common_word(word: str) -> bool:
    """Whether ``word`` (any case) is a lower-case English word ("switch", "diary")."""
    return word.lower() in _lists()[0]


def is_word(word: str) -> bool:
    """Whether ``word`` (any case) is an English word or a word of a name the knowledge pack
    holds ("switch", "diary", "iran", "niger"): read as itself however it is written. "stich",
    "trak" and "recieve" are not, nor a name the pack does not hold ("oder", see
    :func:`is_name`)."""
    low = word.lower()
    words, _, pack = _lists()
    return low in words or low in pack


def is_name(word: str) -> bool:
    """Whether ``word`` (any case) is a name eoc knows, in the word lists or the pack ("Oder",
    "Java", "Niger"), whatever else it may be."""
    low = word.lower()
    _, names, pack = _lists()
    return low in names or low in pack


_OUR = re.compile(r"our(?=s?$|ed$|ing$|ite|ite?s$|able$|er$)")
_RE_END = re.compile(r"re(s|d)?$")
_LL = re.compile(r"ll(?=ed$|ing$|er$|ers$)")
_SAME = (
    frozenset({"grey", "gray"}),
    frozenset({"greys", "grays"}),
    frozenset({"aluminium", "aluminum"}),
    frozenset({"sulphur", "sulfur"}),
    frozenset({"mould", "mold"}),
    frozenset({"moult", "molt"}),
    frozenset({"plough", "plow"}),
    frozenset({"programme", "program"}),
    frozenset({"programmes", "programs"}),
    frozenset({"catalogue", "catalog"}),
    frozenset({"catalogues", "catalogs"}),
    frozenset({"dialogue", "dialog"}),
    frozenset({"analogue", "analog"}),
    frozenset({"defence", "defense"}),
    frozenset({"licence", "license"}),
    frozenset({"offence", "offense"}),
    frozenset({"pyjamas", "pajamas"}),
    frozenset({"storey", "story"}),
)


@functools.lru_cache(maxsize=16384)
def american(word: str) -> str:
    """``word`` with the British spellings of the common patterns made American: -our to -or
    (at 5 letters or more: "four" stays), -re to -er at the end, -ise/-yse to -ize/-yze (at 6
    or more), a doubled l before -ed, -ing, -er."""
    w = word
    if len(w) >= 5:
        w = _OUR.sub("or", w)
    if len(w) >= 5 and not w.endswith(("are", "ire", "ore", "ure", "ere")):
        w = _RE_END.sub(lambda m: "er" + (m.group(1) or ""), w)
    if len(w) >= 6:
        w = re.sub(r"(?<=[iy])s(?=e|ing|ation|ations|er|ers|es|ed)", "z", w)
    if len(w) >= 7:
        w = _LL.sub("l", w)
    return w


def variants(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one word's British and American spellings ("colour" /
    "color", "centre" / "center", "organise" / "organize", "travelled" / "traveled", "grey" /
    "gray"); compared in lower case."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if frozenset({a, b}) in _SAME:
        return True
    return american(a) == american(b)


__all__ = ["american", "is_common_word", "is_name", "is_word", "variants"]
