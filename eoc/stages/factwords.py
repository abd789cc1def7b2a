"""Repairing the slips in a fact question before the graph stage reads it: "whats the captial of
frane" is read as "whats the capital of france" and answered Paris, as the question spelled
right is.

A repair here decides the answer (the graph reads the repaired question and answers it; no
guard reads it again, as the kv's does), so it is stricter than the kv's
(:mod:`eoc.stages.repair`):

* a word is repaired only when it is no word and no name eoc knows, in any case
  (:mod:`eoc.stages.lexicon`: "Iraq" is never made "Iran", nor "bali" "mali"), has at least 4
  letters and is not a word the graph itself reads;
* it becomes the one word the graph reads (a word of a question form, a relation's label, a
  kind, or a word of a name the store holds) that one slip of the keys makes of it (an
  insertion, a deletion, a substitution or two neighbours swapped:
  :func:`eoc.stages.spelling.distance`);
* and only when no other such word is one slip from it ("nigera" is one slip from both "niger"
  and "nigeria", "irak" from "iraq" and "iran": neither is repaired, and the question goes on
  to the model, which reads it whole), nor, for a word of 4 letters, another word of 4 or more
  letters with its first letter two slips from it ("chna" is one from "china" and two from
  "chad"; a first letter is seldom the slip). Most slips are one slip (a letter left out, doubled,
  swapped or mistyped); where a longer word is one slip from a word the graph reads and two
  from another ("zambai": "zambia", "gambia"), it is read as the nearer.

The graph stage asks for a repair only when the question as written found nothing, so a
question spelled right is never changed. Standard library only (the browser runs it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from eoc.stages.lexicon import is_name, is_word
from eoc.stages.spelling import distance
from eoc.text.forms import STOPWORDS

MIN_LETTERS = 4
"""Shorter words are never repaired: one slip makes too many other words of them."""
MAX_LETTERS = 24
"""Longer words are neither indexed nor repaired."""
REMEMBERED = 8192
"""Words whose correction :meth:`FactWords.correction` keeps (then it starts afresh)."""
_WORD = re.compile(r"[a-z]+")
_UNKNOWN: object = object()  # "not looked up yet"
_LETTERS = re.compile(r"[^\W\d_]+")


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class FactWords:
    """The words the graph reads, and a repair of a question's slips toward them.

    Args:
        words: the words of the question forms and relations
            (:meth:`eoc.stages.questions.QuestionMatcher.words`).
        names: the names the store holds (a name of several words counts each word).
    """

    def __init__(self, words: Iterable[str], names: Iterable[str]) -> None:
        known: set[str] = set()
        for text in (*words, *names):
            known.update(w for w in _WORD.findall(text.lower()) if len(w) <= MAX_LETTERS)
        self._known = frozenset(known)
        self._by_delete: dict[str, set[str]] = {}
        self._by_length: dict[int, list[str]] = {}
        self._corrections: dict[str, str | None] = {}  # a word -> its correction
        for w in self._known:
            self._by_length.setdefault(len(w), []).append(w)
            if len(w) >= MIN_LETTERS:
                for d in _deletes(w):
                    self._by_delete.setdefault(d, set()).add(w)

    def correction(self, word: str) -> str | None:
        """The word the graph reads that ``word`` (lower case) is a slip of, or ``None``.
        Remembered per word (:data:`REMEMBERED` at most): every question that misses the graph
        asks it for each of its words."""
        known = self._corrections.get(word, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        right = self._correction(word)
        if len(self._corrections) >= REMEMBERED:
            self._corrections.clear()
        self._corrections[word] = right
        return right

    def _correction(self, word: str) -> str | None:
        n = len(word)
        if word in self._known or word in STOPWORDS or not MIN_LETTERS <= n <= MAX_LETTERS:
            return None
        if not word.isascii():
            return None
        found: set[str] = set(self._by_delete.get(word, ()))  # a letter left out
        for d in _deletes(word):
            if d in self._known and len(d) >= MIN_LETTERS:  # a letter too many
                found.add(d)
            found.update(self._by_delete.get(d, ()))  # another letter, or two swapped
        found = {w for w in found if distance(word, w, 1) <= 1}
        if len(found) != 1:
            return None  # none, or no way to tell which was meant
        if is_word(word) or is_name(word):  # (read only now: the word lists load on first use)
            return None  # a word or a name is read as itself: "Iraq" is no slip of "Iran"
        (right,) = found
        if n == MIN_LETTERS:  # a short word: no other word of its first letter within two
            for size in range(n, n + 3):
                for other in self._by_length.get(size, ()):
                    if other != right and other[0] == word[0] and distance(word, other, 2) <= 2:
                        return None
        return right

    def repair(self, text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """``text`` (normalized: lower case) with each slip repaired, and the repairs made as
        ``(written, read)`` pairs; ``(text, ())`` when there is none."""
        made: list[tuple[str, str]] = []

        def fix(m: re.Match[str]) -> str:
            right = self.correction(m.group())
            if right is None:
                return m.group()
            made.append((m.group(), right))
            return right

        out = _LETTERS.sub(fix, text)
        return (out, tuple(made)) if made else (text, ())


__all__ = ["MAX_LETTERS", "MIN_LETTERS", "FactWords"]
