"""Two texts that say the same words with two of them, or two phrases, traded: "can cats eat dog
food" / "can dogs eat cat food", "is a square a rectangle" / "is a rectangle a square", "milk
chocolate" / "chocolate milk", "exchange cash for a gift card" / "exchange a gift card for cash".
Each asks something else, and the hit guard refuses such a pair (:mod:`eoc.stages.guard`).

Two shapes, read on the folded words in order (:func:`eoc.text.forms.fold`; plurals and
British spellings read as one word, "cats" as "cat", "kilometres" as "kilometers"):

* :func:`traded_words`: every word the same but two, which trade places, neither a stopword,
  and not two sides of "and" or "or" ("salt and pepper" / "pepper and salt" ask the same);
* :func:`traded_blocks`: two runs of words side by side trade places ("a rational number" /
  "an integer"), the rest the same, articles aside;
* :func:`traded_around`: what stands on either side of a linking word ("for", "to", "with",
  "than", "instead of" ...) trades places, the rest the same, articles and possessives aside.

Standard library only (the browser runs it). The word lists are general English, written for eoc.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from eoc.stages.lexicon import american
from eoc.text.forms import STOPWORDS

LINKS = frozenset("for to into onto with than instead over against from as like per".split())
"""Words whose two sides are roles: what is given and what is got, the one and the other."""
JOINS = frozenset({"and", "or", "nor", "plus", "&", "vs", "versus"})
"""Words whose two sides may trade places and ask the same ("X and Y", "X vs Y")."""
_DETERMINERS = frozenset(
    "a an the my your our their his her its this that these those some any".split()
)


def keys(words: Sequence[str]) -> tuple[str, ...]:
    """The words as the functions here compare them: without a plural "s", in their American
    spelling (an analysis computes them once: :class:`eoc.stages.guard.Analysis`)."""
    return tuple(_key(w) for w in words)


@functools.lru_cache(maxsize=16384)
def _key(w: str) -> str:
    return american(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)


def traded_words(a: Sequence[str], b: Sequence[str]) -> tuple[str, str] | None:
    """The two words of ``a`` that trade places in ``b``, all other words the same (see the
    module docstring; both as :func:`keys` gives them); ``None`` when there are none."""
    if len(a) != len(b) or a == b:
        return None
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    if len(diff) != 2:
        return None
    i, j = diff
    if a[i] != b[j] or a[j] != b[i] or a[i] in STOPWORDS or a[j] in STOPWORDS:
        return None
    between = a[i + 1 : j]
    if len(between) == 1 and between[0] in JOINS:
        return None  # "salt and pepper" / "pepper and salt"
    return a[i], a[j]


def differing_middle(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """Where two word sequences of one length differ: ``a[lo:hi]`` and ``b[lo:hi]``, the
    words before ``lo`` and from ``hi`` on the same in both."""
    lo, hi = 0, len(a)
    while lo < hi and a[lo] == b[lo]:
        lo += 1
    while hi > lo and a[hi - 1] == b[hi - 1]:
        hi -= 1
    return lo, hi


def traded_blocks(q: Sequence[str], s: Sequence[str]) -> tuple[str, str] | None:
    """Two runs of words of ``q`` side by side that trade places in ``s`` (both as :func:`keys`
    gives them) ("is every rational
    number an integer" / "is every integer a rational number"), the rest the same, articles and
    possessives aside; neither run holds a stopword or a linking word ("the price per night" /
    "the per night price" moves a phrase, not a role). ``None`` otherwise."""
    a = [w for w in q if w not in _DETERMINERS]
    b = [w for w in s if w not in _DETERMINERS]
    if len(a) != len(b) or a == b or sorted(a) != sorted(b):
        return None
    lo, hi = differing_middle(a, b)
    x, y = a[lo:hi], b[lo:hi]
    for cut in range(1, len(x)):
        first, second = x[:cut], x[cut:]
        if y == second + first and not any(w in STOPWORDS or w in LINKS for w in x):
            return " ".join(first), " ".join(second)
    return None


def traded_around(q: Sequence[str], s: Sequence[str]) -> tuple[str, str, str] | None:
    """(what stands before a linking word in ``q``, the word, what stands after it; both as
    :func:`keys` gives them) when ``s``
    says the two sides the other way round around the same word, the rest the same (articles
    and possessives aside); ``None`` otherwise."""
    a = [w for w in q if w not in _DETERMINERS]
    b = [w for w in s if w not in _DETERMINERS]
    if len(a) != len(b) or a == b or sorted(a) != sorted(b):
        return None
    for k, link in enumerate(a):
        if link not in LINKS:
            continue
        for m, other in enumerate(b):
            if other != link:
                continue
            p = 0
            while p < min(k, m) and a[p] == b[p]:
                p += 1
            t = 0
            while t < min(len(a) - k - 1, len(b) - m - 1) and a[-1 - t] == b[-1 - t]:
                t += 1
            x, y = a[p:k], a[k + 1 : len(a) - t]
            x2, y2 = b[p:m], b[m + 1 : len(b) - t]
            if (
                x
                and y
                and x != y
                and x == y2
                and y == x2
                and any(w not in STOPWORDS for w in x)
                and any(w not in STOPWORDS for w in y)
            ):
                return " ".join(x), link, " ".join(y)
    return None


__all__ = ["JOINS", "LINKS", "keys", "traded_around", "traded_blocks", "traded_words"]
