"""Hit guards: before a similarity hit is served, the query and the stored prompt must agree on
what cosine similarity cannot see.

Similarity alone is unsafe for a cache: "convert 10 miles to km" and "convert 10 km to miles"
score 0.99 on MiniLM, "capital of France" and "capital of Germany" 0.97 on a static model.

* :class:`ExactWordsGuard` (strict): the content words and numbers must be the same, in the
  same order; only wording differences (stopwords, case, punctuation, plurals) pass.
* :class:`EntityGuard` (the default, with either embedder): numbers, named entities (a
  capitalized word not opening the sentence, an acronym, a quoted phrase) and the question words
  that fix the kind of answer must agree in order (a query that corrects itself may carry extra
  ones it took back); every content word of the stored question must be in the query; and words
  around "to", "from", "than" keep their sides. Other wording may differ, as in a paraphrase.

Both are pure Python and work with any embedder. Besides ``allows``, a guard may offer

* ``fingerprint(text)``: a hashable value, or ``None`` for "no constraint", such that two texts
  whose fingerprints are both set and differ can never pass ``allows``. The kv stage keeps each
  stored prompt's fingerprint and skips mismatches without calling ``allows`` (a dict lookup
  instead of a text analysis), which is what keeps a store of prompts that differ only by a
  number cheap to miss in.
* ``prepare(text)``: an analysis of ``text`` that ``allows`` takes in place of the text, so the
  kv stage analyses a query once per lookup and a stored prompt once, not once per check.
* ``terms(text)``: a set of hashable terms such that ``allows(query, stored)`` holds only if
  ``terms(stored) <= terms(query)``. The kv stage indexes each stored prompt by its terms and,
  when no stored prompt's terms are all in the query's, knows before embedding the query that
  the guard would refuse every candidate: a new question is a miss without an embedding
  (which, with a neural embedder, is most of what a miss costs).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Protocol, runtime_checkable

from eoc.stages.text import STOPWORDS, normalize, signature, words

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_QUOTED = re.compile(r"[\"“”']([^\"“”']{2,})[\"“”']")
# A token opens a sentence when the text before it is empty (or a lone newline, which ``$``
# also matches before) or ends in ".", "!" or "?" and whitespace. The ends of these matches are
# exactly such positions: found in one pass instead of searching each token's prefix again.
_SENTENCE_BREAK = re.compile(r"[.!?]\s+")
_ORDINAL_WORDS = {"first", "second", "third", "last", "next", "previous"}
# question words that fix the kind of answer; "what" and "which" do not, so they are left out
ANSWER_TYPE_WORDS = frozenset({"when", "where", "who", "whom", "whose", "why", "how"})


@runtime_checkable
class HitGuard(Protocol):
    """Says whether a stored prompt may answer a query it is similar to."""

    name: str

    def allows(self, query: str, stored: str) -> bool: ...


class ExactWordsGuard:
    """Same content words and numbers, same order (lightly stemmed)."""

    name = "exact-words"

    def allows(self, query: str, stored: str) -> bool:
        return signature(normalize(query)) == signature(normalize(stored))

    def fingerprint(self, text: str) -> Hashable | None:
        """The whole signature: ``allows`` is exactly "the fingerprints are equal"."""
        return signature(normalize(text))

    def terms(self, text: str) -> frozenset[Hashable]:
        """The signature's words: equal signatures have equal sets."""
        return frozenset(signature(normalize(text)))


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` in order, with thousands separators dropped."""
    return [m.group().replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]


def entities(text: str) -> list[str]:
    """Named entities in order, lowercased: capitalized words not opening a sentence,
    acronyms (even opening one), and quoted phrases."""
    starts = {m.end() for m in _SENTENCE_BREAK.finditer(text)}
    starts.add(0)
    if text[:1] == "\n":
        starts.add(1)
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        w = m.group()
        if not w[0].isupper():
            continue
        acronym = len(w) > 1 and w.isupper()
        if (m.start() not in starts or acronym) and w.lower() not in STOPWORDS:
            out.append(w.lower())
    out += [q.lower().strip() for q in _QUOTED.findall(text)]
    return out


# Self-corrections ("the 2007 I mean 2001 report", "when did no sorry what do ..."): the words
# before such a marker were taken back, so they may hold numbers, names or question words the
# stored question lacks.
_CORRECTION = re.compile(
    r"\b(no,? sorry|no,? wait|no no|i mean|i meant|or rather|rather|make that|scratch that|"
    r"or better yet|let me rephrase|oh,? sorry|sorry|actually|wait|oh|um+|uh+|er+|no)\b",
    re.IGNORECASE,
)
_DIRECTIONAL = frozenset(
    {"to", "into", "from", "than", "versus", "vs", "per", "over", "before", "after"}
)


def _stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _directions(ws_all: list[str]) -> frozenset[tuple[str, str, str]]:
    """(word before, directional word, word after) triples: "miles to km" -> (mile, to, km)."""
    ws = [w for w in ws_all if w not in STOPWORDS or w in _DIRECTIONAL]
    out = set()
    for i, w in enumerate(ws[1:-1], 1):
        if w in _DIRECTIONAL:
            out.add((_stem(ws[i - 1]), w, _stem(ws[i + 1])))
    return frozenset(out)


def _subsequence(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


class Analysis:
    """What :class:`EntityGuard` reads from one text, computed once (see ``prepare``)."""

    __slots__ = (
        "content",
        "corrected",
        "directions",
        "entities",
        "entity_parts",
        "numbers",
        "swapped",
        "text",
        "wh",
        "wh_set",
        "words",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.corrected = bool(_CORRECTION.search(text))
        self.numbers = tuple(numbers(text))
        self.entities = tuple(entities(text))
        self.entity_parts = tuple(tuple(e.split()) for e in self.entities)
        ws = words(normalize(text))
        self.words = frozenset(ws)
        self.wh = tuple(w for w in ws if w in ANSWER_TYPE_WORDS)
        self.wh_set = frozenset(self.wh)
        self.content = frozenset(_stem(w) for w in ws if w not in STOPWORDS and not w.isdigit())
        self.directions = _directions(ws)
        # as a stored prompt: the triples a query must not hold (this prompt's sides swapped)
        self.swapped = frozenset((b, d, a) for (a, d, b) in self.directions) - self.directions


class EntityGuard:
    """Serve a similar stored question only if it asks the same thing:

    * its numbers, named entities and answer-type question words (when, where, who, why, how)
      are the query's, in the same order — or, when the query corrects itself ("2007 I mean
      2001"), appear in the query in that order;
    * every content word of the stored question appears in the query (lightly stemmed), so
      "when did the age of imperialism end?" never answers "... begin?";
    * words around "to", "from", "than" ... keep their sides ("10 miles to km" is not "10 km to miles").

    ``allows`` takes texts or their :meth:`prepare` analyses; the decision is the same.
    """

    name = "entities"

    @staticmethod
    def prepare(text: str) -> Analysis:
        """The analysis of ``text`` that :meth:`allows` reads (reuse it across checks)."""
        return Analysis(text)

    @staticmethod
    def terms(text: str) -> frozenset[Hashable]:
        """The content words (stemmed), numbers and answer-type question words of ``text``.

        Every rule of :meth:`allows` keeps these of the stored question inside the query's:
        its content words must all be in the query, its numbers and question words equal the
        query's (or, for a query that corrects itself, appear in it).
        """
        ws = words(normalize(text))
        out: set[Hashable] = {("w", w) for w in ws if w in ANSWER_TYPE_WORDS}
        out.update(("c", _stem(w)) for w in ws if w not in STOPWORDS and not w.isdigit())
        out.update(("n", n) for n in numbers(text))
        return frozenset(out)

    @staticmethod
    def fingerprint(text: str) -> Hashable | None:
        """The numbers in order; ``None`` when the text corrects itself, as a corrected query
        may carry numbers it took back (so fingerprints cannot rule a pair out)."""
        if _CORRECTION.search(text):
            return None
        return tuple(numbers(text))

    def allows(self, query: str | Analysis, stored: str | Analysis) -> bool:
        q = query if isinstance(query, Analysis) else Analysis(query)
        s = stored if isinstance(stored, Analysis) else Analysis(stored)
        corrected = q.corrected
        if corrected:
            if not (_subsequence(s.numbers, q.numbers) and _subsequence(s.wh, q.wh)):
                return False
        elif q.numbers != s.numbers or q.wh_set != s.wh_set:
            return False
        q_words, s_words = q.words, s.words
        for parts in s.entity_parts if corrected else (*q.entity_parts, *s.entity_parts):
            if not all(p in q_words for p in parts) or not all(p in s_words for p in parts):
                return False
        q_ent = q.entities
        shared = tuple(e for e in s.entities if e in q_ent)
        if not _subsequence(shared, q_ent):
            return False
        if not s.content <= q.content:
            return False
        return not s.swapped & q.directions


class NoGuard:
    """Serves any hit above the threshold (what GPTCache and RedisVL do) — for comparison only."""

    name = "none"

    def allows(self, query: str, stored: str) -> bool:
        return True


__all__ = [
    "ANSWER_TYPE_WORDS",
    "Analysis",
    "EntityGuard",
    "ExactWordsGuard",
    "HitGuard",
    "NoGuard",
    "entities",
    "numbers",
]
