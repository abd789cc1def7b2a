"""The words a kv stage's stored questions use, for repairing a query's slips before it is
embedded: "how do i trak my oder" is embedded as "how do i track my order" when the store holds
those words, so the embedder finds the stored question a slip would hide from it (MiniLM scores
the two spellings 0.15 apart from the stored question; repaired, 0.9+).

The repair only picks which stored questions are candidates: the hit guard still reads the
query as written (:mod:`eoc.stages.guard`), so a wrong repair can cost a miss, never a wrong
answer. A word is repaired only when it is no word (:mod:`eoc.stages.lexicon`: "switch" is never
made "stitch" because a stored question says "stitch"; a name counts where it is written with
its capital, "Iran", and a lower-case "oder" may be "order"), is not among the
store's words, has at least 4 letters
(3 when the repair doubles one of them: "bil" / "bill"), and one slip of the keys (an insertion,
a deletion, a substitution or two neighbours swapped; :func:`eoc.stages.spelling.distance`)
makes it a stored word; among several, the commonest in the store, and none on a tie.

Standard library only (the browser runs it). Words are indexed by their one-letter deletions
(the symmetric-delete scheme of SymSpell), so a repair is a few dictionary lookups.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

from eoc.stages.lexicon import is_name, is_word
from eoc.stages.spelling import distance
from eoc.text.forms import STOPWORDS

_WORD = re.compile(r"[a-z]+")
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)
MAX_WORD = 24
"""Longer words are neither indexed nor repaired (no English word a query misspells is)."""


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _doubles(short: str, long: str) -> bool:
    """Whether ``long`` is ``short`` with one of its letters doubled ("bil" / "bill")."""
    return any(
        long[: i + 1] == short[: i + 1]
        and long[i + 1] == short[i]
        and long[i + 2 :] == short[i + 1 :]
        for i in range(len(short))
        if i + 1 < len(long)
    )


class StoredWords:
    """The stored questions' words, counted, and a repair of a query's slips toward them."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._by_delete: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        """Count the words of a stored question (lowercase letters, 3 to :data:`MAX_WORD`)."""
        found = [w for w in _WORD.findall(text.lower()) if 3 <= len(w) <= MAX_WORD]
        with self._lock:
            for w in found:
                if w not in self._counts:
                    for d in _deletes(w):
                        self._by_delete.setdefault(d, set()).add(w)
                self._counts[w] += 1

    def __contains__(self, word: object) -> bool:
        return word in self._counts

    def __len__(self) -> int:
        return len(self._counts)

    def correction(self, word: str, written: str | None = None) -> str | None:
        """The stored word ``word`` (lowercase) is a slip of, or ``None``. ``written``: the word
        as the text writes it (a capitalized name is a name: "Iran" is never made "Iraq")."""
        n = len(word)
        if word in self._counts or word in STOPWORDS or not 3 <= n <= MAX_WORD:
            return None
        if is_word(word) or (written and written[:1].isupper() and is_name(word)):
            return None  # a word is the word it is: "switch" is no slip of a stored "stitch"
        found: set[str] = set(self._by_delete.get(word, ()))  # one letter left out
        for d in _deletes(word):
            if d in self._counts:  # one letter too many
                found.add(d)
            found.update(self._by_delete.get(d, ()))  # another letter, or two swapped
        if n == 3:  # a three-letter word only lacks a double letter
            found = {w for w in found if len(w) == 4 and _doubles(word, w)}
        else:
            found = {w for w in found if len(w) >= 4 and distance(word, w, 1) <= 1}
        if not found:
            return None
        ranked = sorted(found, key=lambda w: -self._counts[w])
        if len(ranked) > 1 and self._counts[ranked[0]] == self._counts[ranked[1]]:
            return None  # no way to tell which word was meant
        return ranked[0]

    def repair(self, text: str) -> str:
        """``text`` with each slip of a stored word replaced by the word (case kept only as
        lowercase: the result is for the embedder, never shown); unchanged when none is."""
        if not self._counts:
            return text
        changed = False

        def fix(m: re.Match[str]) -> str:
            nonlocal changed
            w = m.group()
            low = w.lower()
            if not low.isascii():
                return w
            right = self.correction(low, w)
            if right is None:
                return w
            changed = True
            return right

        out = _LETTERS.sub(fix, text)
        return out if changed else text


__all__ = ["MAX_WORD", "StoredWords"]
