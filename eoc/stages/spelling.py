"""Which words of two texts are one word written two ways: a misspelling ("recieve", "netwroks"),
a clipped form ("min" for minimum, "uni" for university), an acronym of the other side's words
("AC" for air conditioning). Standard library only (the browser runs it). Before a query is
embedded, the kv stage also repairs its slips of the stored questions' words
(:mod:`eoc.stages.repair`).

The hit guard (:mod:`eoc.stages.guard`) pairs the content words one text has and the other lacks
with :func:`same_word` before it weighs what is left, so a typo is not read as a different word.
The rules are kept narrow, as a wrong pairing can serve a wrong answer: short words are never
repaired (``cat`` is not ``car``), and the distance allowed grows with the length of the word.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources

from eoc.stages.lexicon import is_name, is_word, variants


@functools.lru_cache(maxsize=16384)
def distance(a: str, b: str, limit: int = 2) -> int:
    """The optimal string alignment distance between ``a`` and ``b`` (insertions, deletions,
    substitutions and swaps of neighbours each cost 1), or ``limit + 1`` when it is larger
    than ``limit``: only small distances matter, and those are found without filling the
    whole table."""
    if a == b:
        return 0
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1] if prev[-1] <= limit else limit + 1


def allowed_distance(a: str, b: str) -> int:
    """How far apart two spellings of one word may be: none under 4 letters, else 1 (the
    shorter word decides). Two slips are not allowed at any length: "southern" and
    "northern" are two apart."""
    return 0 if min(len(a), len(b)) < 4 else 1


def misspelled(a: str, b: str, written: tuple[str, str] | None = None) -> bool:
    """Whether ``a`` and ``b`` read as one word with a slip of the keys ("adress" / "address",
    "netwroks" / "networks"); never for a word under 4 letters, nor where they differ only by
    an ending that makes another word of a longer one ("import" / "imports" are one stem
    anyway), nor where both are words (:func:`eoc.stages.lexicon.is_word`: "switch" is no slip
    of "stitch", "diary" none of "dairy", "Iran" none of "Iraq") unless they are one word's
    British and American spellings ("colour" / "color"). ``written``: the two as the texts
    write them, where ``a`` and ``b`` are stems ("swimm" of swimming)."""
    if a == b:
        return True
    k = allowed_distance(a, b)
    if not k or not a.isalpha() or not b.isalpha():
        return False
    if distance(a, b, k) > k:
        return False
    wa, wb = written or (a, b)
    if variants(wa, wb):
        return True
    return not (is_word(wa) and is_word(wb)) and not (is_name(wa) and is_name(wb))


def clipped(short: str, long: str) -> bool:
    """Whether ``short`` is a clipped form of ``long``: "min" of minimum, "info" of
    information, "undergrad" of undergraduate, "sat" of saturday: letters only, at least 3 of
    them, and at least a third of the word."""
    return (
        3 <= len(short) < len(long)
        and short.isalpha()
        and long.isalpha()  # "H2O" is no clipping of "H2O2"
        and long.startswith(short)
        and len(short) * 3 >= len(long)
    )


_JOINING = frozenset({"the", "a", "an", "of", "and"})  # left out of an acronym's letters


def acronym_of(short: str, words: Sequence[str]) -> tuple[str, ...]:
    """The consecutive ``words`` whose first letters make ``short`` (2 to 5 letters): "ac" of
    air conditioning, "nyc" of new york city, "gp" of general practitioner; joining words
    ("of", "and") are skipped. ``()`` when there are none."""
    n = len(short)
    if not 2 <= n <= 5 or not short.isalpha():
        return ()
    kept = [w for w in words if w not in _JOINING]
    for i in range(len(kept) - n + 1):
        span = kept[i : i + n]
        if "".join(w[:1] for w in span) == short and all(w.isalpha() for w in span):
            return tuple(span)
    return ()


def acronym(short: str, words: Sequence[str]) -> bool:
    """Whether ``short`` is an acronym of consecutive ``words`` (:func:`acronym_of`)."""
    return bool(acronym_of(short, words))


@functools.cache
def _clippings() -> dict[str, frozenset[str]]:
    """``data/clippings.tsv``: each clipped word that is also a word of its own ("info",
    "min", "lab"), and the words it is a clipping of."""
    text = (resources.files(__package__) / "data" / "clippings.tsv").read_text(encoding="utf-8")
    out: dict[str, frozenset[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            short, longs = line.split("\t")
            out[short] = frozenset(longs.split("|"))
    return out


def clipping(short: str, long: str) -> bool:
    """Whether ``short`` stands for ``long`` clipped (:func:`clipped`), where ``short`` is no
    word of its own ("uni" / university), or the clipping is a common one
    (``data/clippings.tsv``: "info" / information, "min" / minimum); a word is otherwise the word
    it is ("cat" is no clipping of catalogue, "java" none of javascript)."""
    if not clipped(short, long):
        return False
    if long in _clippings().get(short.lower(), ()):
        return True
    return not is_word(short) and not is_name(short)


@functools.lru_cache(maxsize=8192)
def same_word(a: str, b: str, written: tuple[str, str] | None = None) -> bool:
    """Whether ``a`` and ``b`` are one word written two ways: with or without a hyphen
    ("checkout" / "check-out"), a misspelling or another spelling (:func:`misspelled`), or a
    clipping (:func:`clipping`). ``written``: the two as the texts write them, where ``a`` and
    ``b`` are stems. A pure function of its words, remembered for the last 8,192 pairs: the
    guard compares a query's words with many stored questions' that share them."""
    if "-" in a or "-" in b:
        a, b = a.replace("-", ""), b.replace("-", "")
        if a == b:
            return True
    wa, wb = written or (a, b)
    if inflected(wa, wb) or inflected(wb, wa):
        return True  # "running" / "run": their stems ("runn", "run") may differ
    if a != wa or b != wb:  # stems: a clipping is of the words as written too
        if clipping(wa, wb) or clipping(wb, wa):
            return True
    return misspelled(a, b, written) or clipping(a, b) or clipping(b, a)


_ENDINGS = ("ing", "ed", "es", "s", "d")


def inflected(long: str, short: str) -> bool:
    """Whether ``long`` is ``short`` with an ending of English inflection ("running" / "run",
    "stopped" / "stop", "boxes" / "box", "baked" / "bake", "making" / "make"), or the adverb
    of a word of 5 letters or more ("regionally" / "region", "nationally" / "national")."""
    if len(long) <= len(short) or len(short) < 3 or not short.isalpha():
        return False  # "red" is no "re" inflected
    if len(short) >= 5 and (
        long == short + "ally" or (short.endswith("al") and long == short + "ly")
    ):
        return True
    for ending in _ENDINGS:
        if not long.endswith(ending):
            continue
        base = long[: -len(ending)]
        if base == short or base + "e" == short:
            return True
        if len(base) >= 2 and base[-1] == base[-2] and base[:-1] == short:
            return True  # a doubled consonant: "running", "stopped"
    return False


__all__ = [
    "acronym",
    "acronym_of",
    "allowed_distance",
    "clipped",
    "clipping",
    "distance",
    "inflected",
    "misspelled",
    "same_word",
]
